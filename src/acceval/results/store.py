"""Crash-safe streaming of records to a run folder.

Records are written in small Parquet parts (``records.parts/part-NNNNNN.parquet``), each
written to a temporary name and renamed, so a run killed with SIGKILL leaves only complete
parts. ``finalize`` compacts the parts into ``records.parquet``. Readers accept either form.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
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
        out = self.run_dir / RECORDS_FILE
        table = _read_parts(self.parts)
        tmp = out.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, out)
        for p in self.parts.glob("part-*.parquet"):
            p.unlink()
        self.parts.rmdir()
        return out


def _write_part(batch: list[Record], final: Path) -> int:
    tmp = final.with_suffix(".tmp")
    pq.write_table(records_to_table(batch), tmp, compression="zstd")
    os.replace(tmp, final)
    return len(batch)


def _read_parts(parts: Path) -> pa.Table:
    files = sorted(parts.glob("part-*.parquet"))
    if not files:
        return RECORD_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(f, schema=RECORD_SCHEMA) for f in files])


def read_records(run_dir: str | Path) -> pa.Table:
    """The records of a run, finished (records.parquet) or interrupted (parts only)."""
    run = Path(run_dir)
    tables = []
    if (run / RECORDS_FILE).exists():
        tables.append(pq.read_table(run / RECORDS_FILE, schema=RECORD_SCHEMA))
    if (run / PARTS_DIR).is_dir():
        tables.append(_read_parts(run / PARTS_DIR))
    if not tables:
        return RECORD_SCHEMA.empty_table()
    return pa.concat_tables(tables)
