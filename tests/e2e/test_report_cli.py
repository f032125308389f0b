"""`acceval report --format html`, `acceval runs`, `acceval query` and `acceval compare` on
real run folders, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_fixture
from helpers.cli import run_cli


def _runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    run_fixture.build(root / "fixture-a", seed=0)
    run_fixture.build(root / "fixture-b", seed=1, slow=2.0)
    return root


def test_report_html_writes_into_the_run_folder(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    res = run_cli("report", str(root / "fixture-a"), "--format", "html", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    page = (root / "fixture-a" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="chart-timeline"' in page
    out = tmp_path / "elsewhere.html"
    res = run_cli("report", str(root / "fixture-a"), "--format", "html", "--out", str(out),
                  cwd=tmp_path)
    assert res.returncode == 0 and out.read_text(encoding="utf-8") == page


def test_runs_query_and_compare(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    res = run_cli("runs", "--dir", str(root), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "fixture-a" in res.stdout and "fixture-b" in res.stdout
    assert f"runs in {root.resolve()}:" in res.stdout  # says where it looked
    assert (root / "catalog.duckdb").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    res = run_cli("runs", "--dir", str(empty), cwd=tmp_path)
    assert res.returncode == 0 and f"no runs in {empty.resolve()}" in res.stdout
    assert "--dir" in res.stdout

    res = run_cli("query", "SELECT run_id, count(*) AS n FROM records GROUP BY 1 ORDER BY 1",
                  "--dir", str(root), "--format", "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert [json.loads(line) for line in res.stdout.splitlines()] == [
        {"run_id": "fixture-a", "n": 160}, {"run_id": "fixture-b", "n": 160}]

    res = run_cli("query", "SELECT * FROM nowhere", "--dir", str(root), cwd=tmp_path)
    assert res.returncode == 2 and "query failed" in res.stderr

    res = run_cli("compare", str(root / "fixture-a"), str(root / "fixture-b"), "--format",
                  "json", "--n-boot", "200", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    slower = [r for r in rows if r["metric"] == "tpot_p95_ms"]
    assert slower and all(r["beyond_noise"] is True for r in slower)

    res = run_cli("compare", str(root / "fixture-a"), cwd=tmp_path)
    assert res.returncode == 2


def test_report_console_shows_the_verdict_and_a_what_if_says_so(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    res = run_cli("report", str(root / "fixture-a"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Verdict: Cheapest correct task: fast at $" in res.stdout
    assert "cost per correct task (the verdict's figures)" in res.stdout
    res = run_cli("report", str(root / "fixture-a"), "--set",
                  "targets.fast.price.usd_per_hour=8", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert ("Verdict: What-if (targets.fast.price.usd_per_hour=8), not measured as such: "
            "Cheapest correct task: fast at $") in res.stdout
