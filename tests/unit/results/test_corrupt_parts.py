"""One empty or truncated records file is quarantined with a warning that names it; the rest
of the run, and every other run of the folder, stays readable."""

from __future__ import annotations

from pathlib import Path

from acceval.analysis import load_result
from acceval.results.records import Record
from acceval.results.store import (
    PARTS_DIR,
    QUARANTINE_DIR,
    RECORDS_FILE,
    RecordWriter,
    read_records,
)
from acceval.runs_catalog import connect
from helpers import run_fixture


def _parts(run: Path, n: int) -> None:
    w = RecordWriter(run, flush_every=10)
    for i in range(n):
        w.add(Record(target="m", load_index=0, load_label="x", request_id=i, task_id="t"))
    w.flush()
    w.wait()  # parts only, as a killed run leaves them


def test_a_bad_part_is_quarantined_and_the_rest_is_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _parts(run, 30)
    parts = sorted((run / PARTS_DIR).glob("part-*.parquet"))
    assert len(parts) == 3
    parts[1].write_bytes(b"")  # a full disk
    good = parts[2].read_bytes()
    parts[2].write_bytes(good[: len(good) // 2])  # a torn write
    problems: list[str] = []
    table = read_records(run, problems=problems)
    assert table.num_rows == 10  # the one good part
    assert len(problems) == 2 and all("moved to quarantine/" in p for p in problems)
    assert sorted(p.name for p in (run / QUARANTINE_DIR).iterdir()) == [
        f"{PARTS_DIR}-{parts[1].name}", f"{PARTS_DIR}-{parts[2].name}"]
    assert read_records(run).num_rows == 10  # and the next read is clean


def test_a_truncated_records_file_does_not_break_the_report_or_other_runs(
        tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    bad = runs / "bad"
    run_fixture.build(bad, run_id="bad")
    good = runs / "good"
    run_fixture.build(good, run_id="good")
    data = (bad / RECORDS_FILE).read_bytes()
    (bad / RECORDS_FILE).write_bytes(data[:100])
    with connect(runs) as con:  # SQL over the folder skips the damaged file
        (n,) = con.execute("select count(*) from records").fetchone()  # type: ignore[misc]
    assert n == read_records(good).num_rows
    result = load_result(bad, recompute=True)
    assert any("records.parquet could not be read" in w for w in result.warnings)
    assert (bad / QUARANTINE_DIR / f"{bad.name}-{RECORDS_FILE}").exists()
