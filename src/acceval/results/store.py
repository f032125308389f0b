"""Crash-safe streaming of records to a run folder.

Records are written in small Parquet parts (``records.parts/part-NNNNNN.parquet``), each
written to a temporary name and renamed, so a run killed with SIGKILL leaves only complete
parts. ``finalize`` compacts the parts into ``records.parquet``. Readers accept either form.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from acceval.results.records import RECORD_SCHEMA, Record, records_to_table

RECORDS_FILE = "records.parquet"
PARTS_DIR = "records.parts"


class RecordWriter:
    """Buffers records and flushes a part every ``flush_every`` records or ``flush_s`` seconds."""

    def __init__(self, run_dir: Path, *, flush_every: int = 2000, flush_s: float = 1.0) -> None:
        self.run_dir = Path(run_dir)
        self.parts = self.run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.flush_s = flush_s
        self._buf: list[Record] = []
        self._n_parts = len(list(self.parts.glob("part-*.parquet")))
        self._last_flush = time.monotonic()
        self.written = 0

    def add(self, rec: Record) -> None:
        self._buf.append(rec)
        due = time.monotonic() - self._last_flush >= self.flush_s
        if due or len(self._buf) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._buf:
            return
        table = records_to_table(self._buf)
        self._n_parts += 1
        final = self.parts / f"part-{self._n_parts:06d}.parquet"
        tmp = final.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, final)
        self.written += len(self._buf)
        self._buf = []

    def finalize(self) -> Path:
        """Flush, compact the parts into records.parquet, and remove the parts."""
        self.flush()
        out = self.run_dir / RECORDS_FILE
        table = _read_parts(self.parts)
        tmp = out.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, out)
        for p in self.parts.glob("part-*.parquet"):
            p.unlink()
        self.parts.rmdir()
        return out


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
