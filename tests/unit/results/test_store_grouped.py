"""records.parquet is written one row group per target, so a reader of one target reads only
its group, and every row keeps its order within its target."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.results.records import Record, records_to_table
from acceval.results.store import RECORDS_FILE, RecordWriter, read_records


def _recs(n: int) -> list[Record]:
    names = ["b", "a", "c"]
    return [Record(target=names[i % 3], load_index=0, load_label="x", request_id=i,
                   task_id=f"t{i}", sent_ns=i) for i in range(n)]


def test_finalize_groups_by_target_and_a_target_reads_alone(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path, flush_every=7)
    recs = _recs(100)
    for r in recs:
        w.add(r)
    w.finalize()
    meta = pq.ParquetFile(tmp_path / RECORDS_FILE).metadata
    assert meta.num_row_groups == 3
    whole = records_to_table(recs)
    for name in ("a", "b", "c"):
        alone = read_records(tmp_path, ["target", "request_id"], target=name)
        expected = whole.filter(pc.equal(whole["target"], name))["request_id"].to_pylist()
        assert alone["request_id"].to_pylist() == expected  # same rows, same order
    assert read_records(tmp_path).num_rows == 100
    assert read_records(tmp_path, target="nobody").num_rows == 0


def test_an_interrupted_run_reads_a_target_from_its_parts(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path, flush_every=10)
    for r in _recs(35):
        w.add(r)
    w.flush()
    w.wait()  # parts only, as after a kill
    assert not (tmp_path / RECORDS_FILE).exists()
    alone = read_records(tmp_path, ["target"], target="a")
    assert alone.num_rows == sum(1 for r in _recs(35) if r.target == "a")
