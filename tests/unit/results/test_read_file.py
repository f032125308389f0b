"""Records are read with ``pq.ParquetFile`` (``read_file``), not ``pq.read_table``: the same
rows and columns as the dataset reader gives, for a grouped file, a part written without
statistics and a file from before a column existed, without the dataset scanner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from acceval.results.records import RECORD_SCHEMA, Record, records_to_table
from acceval.results.store import (
    ANALYSIS_COLUMNS,
    read_file,
    read_records,
    write_grouped,
    write_part,
)


def _records(n: int = 30) -> pa.Table:
    return records_to_table([
        Record(target=("a", "b", "c")[i % 3], load_index=i % 2, load_label="p", request_id=i,
               task_id=f"t{i}", sent_ns=i * 10, done_ns=i * 10 + 5, chunk_ns=[i * 10 + 1],
               output_tokens=i, error_kind="http" if i % 7 == 0 else None)
        for i in range(n)])


def _dataset_read(path: Path, schema: pa.Schema, target: str | None) -> pa.Table:
    filters = None if target is None else [("target", "==", target)]
    return pq.read_table(path, schema=schema, filters=filters)


def test_a_grouped_file_reads_as_the_dataset_reader_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "records.parquet"
    write_grouped(_records(), path, "target")
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    for target in (None, "a", "b", "c", "zzz"):
        got = read_file(path, RECORD_SCHEMA, None if target is None else ("target", target))
        assert got.equals(_dataset_read(path, RECORD_SCHEMA, target)), target
    assert read_file(path, RECORD_SCHEMA, ("target", "b")).num_rows == 10


def test_a_part_without_statistics_is_filtered_row_by_row(tmp_path: Path) -> None:
    path = tmp_path / "part-000001.parquet"
    write_part(_records(), path)  # one row group of every target, no statistics
    got = read_file(path, RECORD_SCHEMA, ("target", "c"))
    assert got.column("target").to_pylist() == ["c"] * 10
    assert got.equals(_dataset_read(path, RECORD_SCHEMA, "c"))


def test_a_column_the_file_lacks_reads_as_nulls_of_its_type(tmp_path: Path) -> None:
    old = _records().drop_columns(["finish_ns", "turn"])
    path = tmp_path / "old.parquet"
    pq.write_table(old, path)
    schema = pa.schema([RECORD_SCHEMA.field(c) for c in ANALYSIS_COLUMNS])
    got = read_file(path, schema, ("target", "a"))
    assert got.schema == schema
    assert got.column("finish_ns").null_count == got.num_rows == 10
    assert got.equals(_dataset_read(path, schema, "a"))


def test_reading_a_run_does_not_go_through_pyarrow_dataset(tmp_path: Path) -> None:
    write_grouped(_records(), tmp_path / "records.parquet", "target")
    code = ("import sys; from acceval.results.store import read_records, ANALYSIS_COLUMNS; "
            f"t = read_records({str(tmp_path)!r}, ANALYSIS_COLUMNS, target='a'); "
            "print(t.num_rows, 'pyarrow.dataset' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["10", "False"]
    assert read_records(tmp_path, target="a").num_rows == 10
