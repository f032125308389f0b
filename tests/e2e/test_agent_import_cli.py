"""`acceval import` of an agent benchmark's results through the real CLI: a τ-bench file
becomes a run folder whose report shows the imported trials with their provenance, the same
numbers after `report --recompute`, and a bad file exits 2 naming the field. With token
prices (`--usd-per-mtok-in/out`) a tau2 run's folder and AgentLab's episodes get a cost per
correct workflow from their token counts; τ-bench's file, which has none, says why not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acceval.run_result import RunResult
from acceval.units import NOT_MEASURED
from helpers.cli import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agentbench"
TAU_BENCH = (FIXTURES / "tau-bench"
             / "tool-calling-gpt-4o-0.0_range_0-3_user-gpt-4o-llm_0312093015.json")
TAU2_DIR = FIXTURES / "tau2" / ("20250602_093000_retail_llm_agent_gpt-4.1-mini_"
                                "user_simulator_gpt-4.1")
SOURCE = ("--price-source", "list price, June 2025")


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


def _declared_cost_cell(md: str) -> str:
    """The imported agent's cell under "cost per correct workflow (declared prices)" in
    the Markdown report's table."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()
            if line.startswith("| ")]
    head = next(r for r in rows if "cost per correct workflow (declared prices)" in r)
    (row,) = [r for r in rows if r[0] != "agent" and len(r) == len(head)
              and r[1].startswith("imported from")]
    return row[head.index("cost per correct workflow (declared prices)")]


def _priced_import(tmp_path: Path, fmt: str, *paths: Path, usd_in: str = "0.40",
                   usd_out: str = "1.60") -> tuple[RunResult, Path, str]:
    out = tmp_path / "runs"
    res = run_cli("import", "--format", fmt, *map(str, paths), "--usd-per-mtok-in", usd_in,
                  "--usd-per-mtok-out", usd_out, *SOURCE, "--out", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (run_dir,) = out.glob(f"imported-{fmt}-*")
    md = run_cli("report", str(run_dir), "--recompute", "--format", "md", cwd=tmp_path)
    assert md.returncode == 0, md.stderr
    return RunResult.load(run_dir), run_dir, md.stdout


def test_tau2_folder_with_token_prices_gives_cost_per_correct_workflow(
        tmp_path: Path) -> None:
    result, _, md = _priced_import(tmp_path, "tau2", TAU2_DIR)
    assert result.agents is not None
    (a,) = result.agents.imported
    assert (a.completion.k, a.completion.n) == (3, 6)
    # (13500 prompt x $0.40 + 750 completion x $1.60) / 1M = $0.0066 over 3 correct (the
    # fixture's tokens, summed by hand in tests/unit/interchange/test_agentbench_import.py)
    assert a.cost is not None and a.cost.cost_per_correct_usd == pytest.approx(0.0022)
    assert _declared_cost_cell(md).startswith("$")
    assert "declared token prices" in md and "list price, June 2025" in md


def test_agentlab_episodes_with_token_prices_give_cost_per_correct_workflow(
        tmp_path: Path) -> None:
    episodes = sorted((FIXTURES / "agentlab").glob("*/summary_info.json"))
    result, _, md = _priced_import(tmp_path, "agentlab", *episodes, usd_in="0.15",
                                   usd_out="0.60")
    assert result.agents is not None
    (a,) = result.agents.imported
    # $0.0043002 for the four episodes' tokens at these prices, 2 solved (by hand in the
    # unit test of the same fixture)
    assert a.cost is not None
    assert a.cost.cost_per_correct_usd == pytest.approx(0.0043002 / 2)
    assert _declared_cost_cell(md).startswith("$")


def test_tau_bench_with_token_prices_but_no_tokens_says_why(tmp_path: Path) -> None:
    result, _, md = _priced_import(tmp_path, "tau-bench", TAU_BENCH)
    assert result.agents is not None
    (a,) = result.agents.imported
    assert a.cost is None
    assert "9 of 9 trial(s) carry no token counts" in md
    assert _declared_cost_cell(md) == NOT_MEASURED
