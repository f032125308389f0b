"""`acceval import` of an agent benchmark's results through the real CLI: a τ-bench file
becomes a run folder whose report shows the imported trials with their provenance, the same
numbers after `report --recompute`, and a bad file exits 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

from acceval.run_result import RunResult
from helpers.cli import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agentbench"
TAU_BENCH = (FIXTURES / "tau-bench"
             / "tool-calling-gpt-4o-0.0_range_0-3_user-gpt-4o-llm_0312093015.json")


def test_tau_bench_file_imports_into_the_agents_section(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    res = run_cli("import", "--format", "tau-bench", str(TAU_BENCH), "--out", str(out),
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "9 trial(s) of 3 task(s)" in res.stdout
    (run_dir,) = out.glob("imported-tau-bench-*")
    result = RunResult.load(run_dir)
    assert result.agents is not None
    (agent,) = result.agents.imported
    # 5 of 9 trials successful; pass^1..3 = 5/9, 4/9, 1/3 (worked out by hand in
    # tests/unit/interchange/test_agentbench_import.py from the same fixture)
    assert (agent.completion.k, agent.completion.n) == (5, 9)
    where = f"imported from τ-bench file {TAU_BENCH.name}"
    for fmt in ("console", "md"):
        shown = run_cli("report", str(run_dir), "--recompute", "--format", fmt, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert where in shown.stdout, fmt
    html = run_cli("report", str(run_dir), "--format", "html", cwd=tmp_path)
    assert html.returncode == 0, html.stderr
    assert where in (run_dir / "report.html").read_text(encoding="utf-8")
    assert "0.56 · 0.44 · 0.33" in run_cli("report", str(run_dir), "--format", "md",
                                           cwd=tmp_path).stdout
    again = RunResult.load(run_dir)
    assert again.agents == result.agents


def test_bad_tau_bench_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps([{"task_id": 3, "trial": 0, "reward": None, "traj": []}]),
                   encoding="utf-8")
    res = run_cli("import", "--format", "tau-bench", str(bad), "--out", str(tmp_path / "r"),
                  cwd=tmp_path)
    assert res.returncode == 2
    assert "[0].reward: not a number" in res.stderr
