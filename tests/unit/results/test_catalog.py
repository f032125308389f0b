"""The DuckDB runs catalog: indexing, refresh, the three views, and errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acceval import runs_catalog as catalog
from acceval.errors import UsageError
from helpers import run_fixture


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    run_fixture.build(tmp_path / "fixture-a", seed=0)
    run_fixture.build(tmp_path / "fixture-b", seed=1, slow=1.5, economics=False)
    return tmp_path


def test_index_run_writes_runs_and_points(runs_dir: Path) -> None:
    assert catalog.index_run(runs_dir / "fixture-a") == "fixture-a"
    assert (runs_dir / catalog.CATALOG_FILE).exists()
    with catalog.connect(runs_dir) as con:
        assert con.execute("SELECT run_id, targets FROM runs").fetchall() == [
            ("fixture-a", ["fast", "cheap"])]
        assert con.execute("SELECT count(*) FROM points").fetchone() == (4,)


def test_query_sees_points_of_every_run(runs_dir: Path) -> None:
    cols, rows = catalog.query(
        runs_dir, "SELECT run_id, count(*) n, count(cost_per_correct_usd) priced "
                  "FROM points GROUP BY 1 ORDER BY 1")
    assert cols == ["run_id", "n", "priced"]
    assert rows == [("fixture-a", 4, 4), ("fixture-b", 4, 0)]  # missing stays NULL


def test_records_view_reads_every_runs_parquet(runs_dir: Path) -> None:
    _, rows = catalog.query(runs_dir, "SELECT run_id, count(*), count(DISTINCT target) "
                                      "FROM records GROUP BY 1 ORDER BY 1")
    assert rows == [("fixture-a", 160, 2), ("fixture-b", 160, 2)]


def test_point_summaries_match_the_result(runs_dir: Path) -> None:
    _, rows = catalog.query(runs_dir, "SELECT ttft_p95_ms, accuracy FROM points WHERE "
                                      "run_id = 'fixture-a' AND target = 'fast' AND "
                                      "load_index = 1")
    from acceval.run_result import RunResult

    s = RunResult.load(runs_dir / "fixture-a").target("fast").points[1].summary
    assert rows == [(s.ttft_ms.p95, s.accuracy.accuracy)]


def test_refresh_is_incremental_and_drops_deleted_runs(runs_dir: Path) -> None:
    assert sorted(catalog.refresh(runs_dir)) == ["fixture-a", "fixture-b"]
    assert catalog.refresh(runs_dir) == []
    shutil.rmtree(runs_dir / "fixture-b")
    assert [r["run_id"] for r in catalog.list_runs(runs_dir)] == ["fixture-a"]
    _, rows = catalog.query(runs_dir, "SELECT DISTINCT run_id FROM points")
    assert rows == [("fixture-a",)]


def test_empty_folder_has_typed_empty_views(tmp_path: Path) -> None:
    cols, rows = catalog.query(tmp_path, "SELECT run_id, ttft_p95_ms FROM points")
    assert rows == [] and cols == ["run_id", "ttft_p95_ms"]
    _, rows = catalog.query(tmp_path, "SELECT count(*) FROM records")
    assert rows == [(0,)]


def test_bad_sql_is_a_usage_error(runs_dir: Path) -> None:
    with pytest.raises(UsageError, match="query failed"):
        catalog.query(runs_dir, "SELECT nope FROM runs")


def test_missing_folder_and_non_run_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        catalog.refresh(tmp_path / "absent")
    with pytest.raises(UsageError):
        catalog.index_run(tmp_path)


def test_format_rows_renders_null_and_lists() -> None:
    text = catalog.format_rows(["a", "b"], [(None, ["x", "y"]), (1.5, "z")])
    assert "NULL" in text and "x,y" in text
    assert catalog.format_rows(["a"], [(1,)], "json") == '{"a": 1}'
