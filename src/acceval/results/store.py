"""Crash-safe streaming of records to a run folder.

Records are written in small Parquet parts (``records.parts/part-NNNNNN.parquet``), each
written to a temporary name and renamed, so a run killed with SIGKILL leaves only complete
parts. ``finalize`` compacts the parts into ``records.parquet``. Readers accept either form.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.results.records import RECORD_SCHEMA, Record, records_to_table

RECORDS_FILE = "records.parquet"
PARTS_DIR = "records.parts"


class RecordWriter:
    """Buffers records and flushes a part every ``flush_every`` records or ``flush_s`` seconds.

    Parts are converted and written on one background thread, so the event loop that stamps
    requests never waits for Parquet encoding or the disk. ``wait`` blocks until every part
    handed over so far is on disk.
    """

    def __init__(self, run_dir: Path, *, flush_every: int = 2000, flush_s: float = 1.0) -> None:
        self.run_dir = Path(run_dir)
        self.parts = self.run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.flush_s = flush_s
        self._buf: list[Record] = []
        self._n_parts = len(list(self.parts.glob("part-*.parquet")))
        self._last_flush = time.monotonic()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acceval-records")
        self._pending: list[Future[int]] = []
        self.written = 0

    def add(self, rec: Record) -> None:
        self._buf.append(rec)
        due = time.monotonic() - self._last_flush >= self.flush_s
        if due or len(self._buf) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Hand the buffered records to the writer thread (non-blocking)."""
        self._last_flush = time.monotonic()
        if not self._buf:
            return
        batch, self._buf = self._buf, []
        self._n_parts += 1
        final = self.parts / f"part-{self._n_parts:06d}.parquet"
        self._pending = [f for f in self._pending if not f.done() or f.exception()]
        self._pending.append(self._pool.submit(_write_part, batch, final))

    def wait(self) -> None:
        """Block until every handed-over part is written; re-raise a write error."""
        for f in self._pending:
            self.written += f.result()
        self._pending = []

    def finalize(self) -> Path:
        """Flush, compact the parts into records.parquet, and remove the parts."""
        self.flush()
        self.wait()
        self._pool.shutdown()
        return compact_parts(self.run_dir, RECORDS_FILE, PARTS_DIR, RECORD_SCHEMA,
                             group_by="target")


def _write_part(batch: list[Record], final: Path) -> int:
    write_part(records_to_table(batch), final)
    return len(batch)


# --- the parts-then-compact layout, shared by records and probe samples ----------------------

QUARANTINE_DIR = "quarantine"


def _durable_replace(tmp: Path, final: Path) -> None:
    """Rename ``tmp`` over ``final`` once its bytes are on disk, and make the rename durable:
    a power cut leaves the old file or the new one, never a zero-byte one."""
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    try:
        fd = os.open(final.parent, os.O_RDONLY)
    except OSError:
        return  # a platform without directory fsync
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_part(table: pa.Table, final: Path) -> None:
    """Write one part under a temporary name and rename it: readers never see half a part."""
    tmp = final.with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd")
    _durable_replace(tmp, final)


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


def write_grouped(table: pa.Table, final: Path, column: str) -> None:
    """Like :func:`write_part`, with the rows grouped by ``column`` (order kept within a group)
    and one row group per value, so a reader that wants one value reads only its group."""
    tmp = final.with_suffix(".tmp")
    if table.num_rows == 0:
        write_part(table, final)
        return
    ordered = table.take(pc.sort_indices(table, sort_keys=[(column, "ascending")]))
    keys = ordered[column].to_numpy(zero_copy_only=False)
    cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(keys)]
    with pq.ParquetWriter(tmp, ordered.schema, compression="zstd") as w:
        for a, b in pairwise(cuts):
            w.write_table(ordered.slice(a, b - a), row_group_size=b - a)
    _durable_replace(tmp, final)


def read_stream(run_dir: str | Path, file: str, parts_dir: str, schema: pa.Schema,
                columns: list[str] | None = None,
                where: tuple[str, str] | None = None,
                problems: list[str] | None = None) -> pa.Table:
    """A finished file plus any parts not yet compacted (an interrupted run has only parts);
    ``columns`` reads only those, ``where = (column, value)`` only the rows with that value
    (a grouped file skips the other row groups unread)."""
    run = Path(run_dir)
    files = [run / file] if (run / file).exists() else []
    if (run / parts_dir).is_dir():
        files += sorted((run / parts_dir).glob("part-*.parquet"))
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
    filters = None if where is None else [(where[0], "==", where[1])]
    return pa.concat_tables([pq.read_table(f, schema=schema, columns=columns, filters=filters)
                             for f in files])


def compact_parts(run_dir: Path, file: str, parts_dir: str, schema: pa.Schema,
                  group_by: str | None = None) -> Path:
    """Merge the finished file and the parts into ``file``, then remove the parts;
    ``group_by`` writes one row group per value of that column."""
    out = Path(run_dir) / file
    table = read_stream(run_dir, file, parts_dir, schema)
    if group_by is None:
        write_part(table, out)
    else:
        write_grouped(table, out, group_by)
    parts = Path(run_dir) / parts_dir
    for p in parts.glob("part-*.parquet"):
        p.unlink()
    parts.rmdir()
    return out


#: What the analysis reads of each record: stamps, counts, outcomes; not the texts.
ANALYSIS_COLUMNS = ["target", "load_index", "task_id", "attempt", "warmup", "scheduled_ns",
                    "sent_ns", "first_byte_ns", "first_token_ns", "done_ns", "chunk_ns",
                    "prompt_tokens", "output_tokens", "tokens_from", "error_kind", "correct"]


#: What the HTML report reads of each record: the timeline's stamps and the sample outputs
#: (not the per-chunk stamps).
REPORT_COLUMNS = [c for c in RECORD_SCHEMA.names
                  if c not in ("chunk_ns", "first_byte_ns", "request_id", "http_status")]


def read_records(run_dir: str | Path, columns: list[str] | None = None, *,
                 target: str | None = None, problems: list[str] | None = None) -> pa.Table:
    """The records of a run, finished (records.parquet) or interrupted (parts only);
    ``columns`` (e.g. :data:`ANALYSIS_COLUMNS`) reads only those, ``target`` only its rows.
    An unreadable file is quarantined (:func:`quarantine`) and said in ``problems``."""
    where = None if target is None else ("target", target)
    return read_stream(run_dir, RECORDS_FILE, PARTS_DIR, RECORD_SCHEMA, columns, where,
                       problems)
