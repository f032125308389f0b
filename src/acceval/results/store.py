"""Crash-safe streaming of records to a run folder.

Records are written in small Parquet parts (``records.parts/part-NNNNNN.parquet``), each
written to a temporary name and renamed, so a run killed with SIGKILL leaves only complete
parts. ``finalize`` compacts the parts into ``records.parquet``. Readers accept either form.

Compaction is crash-safe: the compacted file names, in its own Parquet metadata
(:data:`COVERS_KEY`), every part it holds, and it is durable (fsync, rename, fsync of the
folder) before any part is removed. A reader takes the file and only the parts it does not
name, so a kill at any instant of compaction reads back every record exactly once: before
the rename, the old file and the parts; after it, the new file (the parts it names are
skipped until they are removed).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.results.files import durable_replace
from acceval.results.records import RECORD_SCHEMA, Record, prepare_conversion, records_to_table

RECORDS_FILE = "records.parquet"
PARTS_DIR = "records.parts"
#: The key, in a compacted file's Parquet metadata, of the JSON list of the parts it holds.
COVERS_KEY = b"acceval.covers"


#: OS errors a later attempt can get past (descriptors or memory short for a moment, as under
#: a load test's connections); anything else (a full disk, a read-only or failing device)
#: stops the writing.
TRANSIENT_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN,
                              errno.EINTR, errno.ENOBUFS})


class RecordWriter:
    """Buffers records and flushes a part every ``flush_every`` records or ``flush_s`` seconds.

    Parts are converted and written on one background thread, so the event loop that stamps
    requests never waits for Parquet encoding or the disk. ``wait`` blocks until every part
    handed over so far is on disk.

    The writer never loses a record to an error it can get past: a part that fails for want
    of descriptors or memory (:data:`TRANSIENT_ERRNOS`) is kept and written again with the
    next one. Any other failure (a full disk, a read-only folder) sets :attr:`error`, keeps
    the records in memory from then on, and calls ``on_error`` (from the writer thread, as
    soon as it happens), so the run can stop sending; ``finalize`` tries them once more and
    counts in :attr:`unwritten` what could not be written. Parts already on disk stay
    readable whatever happens later.
    """

    def __init__(self, run_dir: Path, *, flush_every: int = 2000, flush_s: float = 1.0,
                 on_error: Callable[[OSError], None] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.parts = self.run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.flush_s = flush_s
        self.on_error = on_error
        self._buf: list[Record] = []
        self._held: list[Record] = []     # failed to write; tried again with the next part
        # Numbers continue after those a compacted file already holds (a resumed run), so
        # that a new part is never taken for one the file covers.
        taken = [*(p.name for p in self.parts.glob("part-*.parquet")),
                 *covered_parts(self.run_dir / RECORDS_FILE)]
        self._n_parts = max((_part_number(Path(n)) for n in taken), default=0)
        self._last_flush = time.monotonic()
        prepare_conversion()              # not in the writer thread, during a point
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acceval-records")
        # Parts handed over and parts done (each counter written by one thread only), and
        # whether someone waits for the writer: they set how its slices are paced (_pause_s).
        self._submitted = 0
        self._finished = 0
        self._hurry = False
        self._pending: list[tuple[Future[None], list[Record]]] = []
        self.written = 0
        self.retried = 0                  # parts written again after a transient error
        self.error: OSError | None = None
        self.unwritten = 0                # records finalize could not write (see ``error``)
        self.compacted = False
        self._last_error: OSError | None = None

    def add(self, rec: Record) -> None:
        self._buf.append(rec)
        due = time.monotonic() - self._last_flush >= self.flush_s
        if due or len(self._buf) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Hand the buffered records to the writer thread (non-blocking)."""
        self._last_flush = time.monotonic()
        self._collect(block=False)
        if not self._buf and not self._held:
            return
        batch, self._buf = self._held + self._buf, []
        self._held = []
        if self.error is not None:  # the disk failed: hold on to them (finalize tries once)
            self._held = batch
            return
        self._submit(batch)

    def _submit(self, batch: list[Record]) -> None:
        self._n_parts += 1
        final = self.parts / f"part-{self._n_parts:06d}.parquet"
        fut = self._pool.submit(self._write, batch, final)
        self._submitted += 1
        fut.add_done_callback(self._alarm)
        self._pending.append((fut, batch))

    def _write(self, batch: list[Record], final: Path) -> None:
        try:
            _write_part(batch, final, self._pause_s)
        finally:
            self._finished += 1

    def _pause_s(self, n_slices: int) -> float:
        """The writer thread's pause after each slice of a part of ``n_slices``.

        While a point runs, the slices are spread over up to half the flush interval (20 ms
        apart at most), so that the loop stamping requests meets one short conversion at a
        time rather than a part's whole burst: at 1,900 req/s on 2 cores, schedule-lag p99
        1.4-1.8 ms against 2.2-4.8 ms with the slices back to back (docs/benchmarks.md). The
        pause is short when another part waits behind this one (the writer must keep up) or
        when someone waits for the writer (``wait``, ``finalize``)."""
        if self._hurry or self._submitted - self._finished > 1:
            return _PAUSE_S
        return min(_SPREAD_MAX_S, max(_PAUSE_S, _SPREAD * self.flush_s / max(1, n_slices)))

    def _alarm(self, fut: Future[None]) -> None:
        """On the writer thread, as soon as a part fails for good: tell the run at once
        (the records are held when the main thread collects the failure)."""
        exc = fut.exception()
        if isinstance(exc, OSError) and exc.errno not in TRANSIENT_ERRNOS \
                and self.on_error is not None:
            self.on_error(exc)

    def _collect(self, *, block: bool) -> None:
        keep = []
        for fut, batch in self._pending:
            if not block and not fut.done():
                keep.append((fut, batch))
                continue
            exc = fut.exception()
            if exc is None:
                self.written += len(batch)
            else:
                self._failed(exc, batch)
        self._pending = keep

    def _failed(self, exc: BaseException, batch: list[Record]) -> None:
        self._held.extend(batch)
        if isinstance(exc, OSError):
            self._last_error = exc
        if isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS:
            self.retried += 1
            return
        if not isinstance(exc, OSError):
            raise exc
        if self.error is None:
            self.error = exc  # on_error was called from the writer thread (``_alarm``)

    def wait(self) -> None:
        """Block until every handed-over part is written (or failed and held)."""
        self._hurry = True
        try:
            self._collect(block=True)
        finally:
            self._hurry = False

    def finalize(self) -> Path | None:
        """Flush, compact the parts into records.parquet, and remove the parts.

        After a disk error the held records are tried once more; what still cannot be
        written is counted in :attr:`unwritten`, and the parts are left as they are (no
        compaction, which would need room for a second copy). Returns records.parquet, or
        None when the records stay in parts."""
        self.flush()
        self.wait()
        if self._held:  # one more try: the disk may have room again, descriptors are back
            batch, self._held = self._held, []
            error, self.error = self.error, None
            self._submit(batch)
            self.wait()
            self.unwritten = len(self._held)
            self.error = self.error or error or (self._last_error if self._held else None)
        self._pool.shutdown()
        if self.error is not None:
            return None
        try:
            out = compact_parts(self.run_dir, RECORDS_FILE, PARTS_DIR, RECORD_SCHEMA,
                                group_by="target")
        except OSError as exc:
            # The parts are complete and readable: keep them rather than lose the run.
            self.error = exc
            return None
        self.compacted = True
        return out


def _part_number(path: Path) -> int:
    try:
        return int(path.stem.removeprefix("part-").split("-")[0])
    except ValueError:
        return 0


#: Records the writer thread converts at a time, and its pause after each slice. The
#: conversion is Python work that holds the interpreter (about 2 us a record), and the event
#: loop that stamps requests waits for it: a whole 2,000-record part held it 4 ms, close to
#: the 5 ms switch interval. A slice holds it 0.4 ms. The pause is a real sleep: a zero one
#: takes the interpreter back before a thread waiting for it has been scheduled. Measured
#: (30 parts in 3 s, a main thread sleeping 0.2 ms at a time): wake-ups over 1 ms late, median
#: 64 with whole parts, 40 with slices, 29 with no writer (docs/benchmarks.md).
#: While a point runs, :meth:`RecordWriter._pause_s` spreads a part's slices over up to
#: ``_SPREAD`` of the flush interval, ``_SPREAD_MAX_S`` apart at most.
_SLICE = 200
_PAUSE_S = 100e-6
_SPREAD = 0.5
_SPREAD_MAX_S = 20e-3


def _write_part(batch: list[Record], final: Path, pause_s: Callable[[int], float]) -> None:
    if len(batch) <= _SLICE:
        write_part(records_to_table(batch), final)
        return
    tables = []
    n_slices = -(-len(batch) // _SLICE)
    for i in range(0, len(batch), _SLICE):
        if i:
            time.sleep(pause_s(n_slices))
        tables.append(records_to_table(batch[i:i + _SLICE]))
    write_part(pa.concat_tables(tables), final)


# --- the parts-then-compact layout, shared by records and probe samples ----------------------

QUARANTINE_DIR = "quarantine"


#: How a part is written while requests are in flight: plain, uncompressed, no statistics.
#: A part of 8 records took 1.7 ms to write with zstd, much of it holding the interpreter,
#: and the event loop that stamps requests waited behind it (p99 wake-up 3.2 ms against
#: 0.8 ms with no writer, 1.9 ms this way). Compaction writes the finished file compressed.
_PART_OPTIONS: dict[str, Any] = {"compression": "none", "use_dictionary": False,
                                 "write_statistics": False}
_FILE_OPTIONS: dict[str, Any] = {"compression": "zstd"}


def write_part(table: pa.Table, final: Path) -> None:
    """Write one part under a temporary name and rename it: readers never see half a part.
    Cheap to write (:data:`_PART_OPTIONS`); compaction compresses."""
    _write_durable(table, final, _PART_OPTIONS)


def write_file(table: pa.Table, final: Path, covers: list[str] | None = None) -> None:
    """Like :func:`write_part`, compressed: a finished file, written once; ``covers`` names
    the parts it holds (:data:`COVERS_KEY`)."""
    _write_durable(_covering(table, covers), final, _FILE_OPTIONS)


def _covering(table: pa.Table, covers: list[str] | None) -> pa.Table:
    if covers is None:
        return table
    meta = dict(table.schema.metadata or {})
    meta[COVERS_KEY] = json.dumps(sorted(set(covers))).encode()
    return table.replace_schema_metadata(meta)


def covered_parts(path: Path) -> set[str]:
    """The part names a compacted file says it holds (none when it is absent, unreadable,
    or written before files said so)."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return set()
    raw = meta.get(COVERS_KEY)
    if raw is None:
        return set()
    try:
        names = json.loads(raw)
    except ValueError:
        return set()
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def _write_durable(table: pa.Table, final: Path, options: dict[str, Any]) -> None:
    tmp = final.with_suffix(".tmp")
    try:
        pq.write_table(table, tmp, **options)
        durable_replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def readable(path: Path) -> bool:
    """Whether a Parquet file opens (its footer and schema read); a zero-byte or truncated
    file does not."""
    try:
        pq.ParquetFile(path).close()
    except (OSError, pa.ArrowException):
        return False
    return True


def quarantine(path: Path, run_dir: Path) -> Path:
    """Move an unreadable file out of the way, into ``RUN_DIR/quarantine/``, and return
    where it went: the rest of the run stays readable, and nothing is deleted."""
    dest_dir = run_dir / QUARANTINE_DIR
    dest_dir.mkdir(exist_ok=True)
    dest = dest_dir / f"{path.parent.name}-{path.name}"
    os.replace(path, dest)
    return dest


def write_grouped(table: pa.Table, final: Path, column: str,
                  covers: list[str] | None = None) -> None:
    """Like :func:`write_file`, with the rows grouped by ``column`` (order kept within a
    group) and one row group per value, so a reader that wants one value reads only its
    group."""
    tmp = final.with_suffix(".tmp")
    if table.num_rows == 0:
        write_file(table, final, covers)
        return
    table = _covering(table, covers)
    ordered = table.take(pc.sort_indices(table, sort_keys=[(column, "ascending")]))
    keys = ordered[column].to_numpy(zero_copy_only=False)
    cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(keys)]
    try:
        with pq.ParquetWriter(tmp, ordered.schema, compression="zstd") as w:
            for a, b in pairwise(cuts):
                w.write_table(ordered.slice(a, b - a), row_group_size=b - a)
        durable_replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def stream_sources(run_dir: str | Path, file: str, parts_dir: str) -> list[Path]:
    """The files that hold a stream, each record in exactly one: the finished file, if any,
    and the parts it does not cover (:func:`covered_parts`)."""
    run = Path(run_dir)
    done = run / file
    files = [done] if done.exists() else []
    covered = covered_parts(done) if files else set()
    if (run / parts_dir).is_dir():
        files += sorted(p for p in (run / parts_dir).glob("part-*.parquet")
                        if p.name not in covered)
    return files


def read_stream(run_dir: str | Path, file: str, parts_dir: str, schema: pa.Schema,
                columns: list[str] | None = None,
                where: tuple[str, str] | None = None,
                problems: list[str] | None = None,
                sources: list[Path] | None = None) -> pa.Table:
    """A finished file plus any parts not yet compacted (an interrupted run has only parts);
    ``columns`` reads only those, ``where = (column, value)`` only the rows with that value
    (a grouped file skips the other row groups unread). ``sources``: the files to read, as
    :func:`stream_sources` listed them (listed here when not given)."""
    run = Path(run_dir)
    files = stream_sources(run, file, parts_dir) if sources is None else sources
    good = []
    for f in files:
        if readable(f):
            good.append(f)
            continue
        moved = quarantine(f, run)
        if problems is not None:
            problems.append(f"{f.relative_to(run)} could not be read (empty or truncated); "
                            f"moved to {moved.relative_to(run)}, the rest of the run is kept")
    files = good
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    if not files:
        return schema.empty_table()
    return pa.concat_tables([read_file(f, schema, where) for f in files])


def read_file(path: Path, schema: pa.Schema, where: tuple[str, str] | None = None) -> pa.Table:
    """One Parquet file's ``schema`` columns (a column the file lacks reads as nulls, one of
    another type is cast), only the rows where ``where = (column, value)`` holds: a row group
    whose statistics exclude the value is not read, one that holds only it is not filtered.

    ``pq.ParquetFile`` rather than ``pq.read_table``, which scans through ``pyarrow.dataset``
    with buffers of its own: ``report --recompute`` over 1M records peaked 45 MB higher and
    spent 0.3 s more CPU that way (docs/benchmarks.md)."""
    pf = pq.ParquetFile(path)
    try:
        present = [f.name for f in schema if f.name in pf.schema_arrow.names]
        groups, exact = _groups_with(pf, where)
        table = pf.read_row_groups(groups, columns=present) if groups else \
            pf.schema_arrow.empty_table().select(present)
    finally:
        pf.close()
    if where is not None and not exact:
        table = table.filter(pc.fill_null(pc.equal(table[where[0]], where[1]), False))
    return _conform(table, schema)


def _groups_with(pf: pq.ParquetFile, where: tuple[str, str] | None) -> tuple[list[int], bool]:
    """The row groups that may hold ``where``'s value, and whether every row of them does
    (from the column statistics; a group without them is read and filtered)."""
    meta = pf.metadata
    every = list(range(meta.num_row_groups))
    if where is None:
        return every, True
    if where[0] not in pf.schema_arrow.names:
        return every, False
    col = pf.schema_arrow.get_field_index(where[0])
    groups, exact = [], True
    for g in every:
        stats = meta.row_group(g).column(col).statistics
        if stats is None or not stats.has_min_max:
            groups.append(g)
            exact = False
        elif stats.min <= where[1] <= stats.max:
            groups.append(g)
            exact &= stats.min == stats.max and stats.null_count == 0
    return groups, exact


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns, in its order and types (missing: nulls)."""
    cols = [table[f.name] if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
            for f in schema]
    cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(cols, schema, strict=True)]
    return pa.Table.from_arrays(cols, schema=schema)


def rewrite_stream(run_dir: Path, file: str, parts_dir: str, table: pa.Table,
                   sources: list[Path], group_by: str | None = None) -> Path:
    """Replace the finished file by ``table`` (read from ``sources``), then remove the parts
    among them. The new file covers those parts and the ones the old file covered, and it
    is durable before any part goes: a kill at any point reads every record once."""
    out = Path(run_dir) / file
    covers = covered_parts(out) | {p.name for p in sources if p.parent.name == parts_dir}
    if group_by is None:
        write_file(table, out, sorted(covers))
    else:
        write_grouped(table, out, group_by, sorted(covers))
    parts = Path(run_dir) / parts_dir
    if parts.is_dir():
        # The parts just compacted, those an earlier compaction was killed before removing,
        # and half-written parts of a killed writer (never renamed, never read).
        for p in parts.iterdir():
            if p.name in covers or p.suffix == ".tmp":
                p.unlink(missing_ok=True)
        if not any(parts.iterdir()):
            parts.rmdir()
    return out


def compact_parts(run_dir: Path, file: str, parts_dir: str, schema: pa.Schema,
                  group_by: str | None = None) -> Path:
    """Merge the finished file and the parts into ``file``, then remove the parts;
    ``group_by`` writes one row group per value of that column (:func:`rewrite_stream`)."""
    sources = stream_sources(run_dir, file, parts_dir)
    table = read_stream(run_dir, file, parts_dir, schema, sources=sources)
    return rewrite_stream(Path(run_dir), file, parts_dir, table, sources, group_by)


def returning_pool() -> bool:
    """Have Arrow's jemalloc pool give freed pages back at once (no decay) when it is the
    default pool (``ARROW_DEFAULT_MEMORY_POOL=jemalloc``, read when Arrow starts), else use
    the system allocator; False in that case. What a reader frees then does not stay with
    the process for the next target's columns."""
    if pa.default_memory_pool().backend_name == "jemalloc":
        pa.jemalloc_set_decay_ms(0)
        return True
    pa.set_memory_pool(pa.system_memory_pool())
    return False


#: What the analysis reads of each record: stamps, counts, outcomes; not the texts.
ANALYSIS_COLUMNS = ["target", "load_index", "task_id", "warmup", "scheduled_ns",
                    "sent_ns", "first_token_ns", "done_ns", "chunk_ns",
                    "prompt_tokens", "output_tokens", "tokens_from", "finish_reason",
                    "error_kind", "correct", "cached_prompt_tokens", "turn", "finish_ns"]


def read_records(run_dir: str | Path, columns: list[str] | None = None, *,
                 target: str | None = None, problems: list[str] | None = None) -> pa.Table:
    """The records of a run, finished (records.parquet) or interrupted (parts only);
    ``columns`` (e.g. :data:`ANALYSIS_COLUMNS`) reads only those, ``target`` only its rows.
    An unreadable file is quarantined (:func:`quarantine`) and said in ``problems``."""
    where = None if target is None else ("target", target)
    return read_stream(run_dir, RECORDS_FILE, PARTS_DIR, RECORD_SCHEMA, columns, where,
                       problems)
