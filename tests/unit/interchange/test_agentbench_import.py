"""Importing agent benchmarks' results (τ-bench, tau2, AgentLab) into the agents section.

The fixtures are hand-made to each tool's schema (tests/fixtures/agentbench/README.md). Every
expected number below was worked out by hand from the fixture, as each comment shows:
pass^k = mean over tasks of C(c, k) / C(n, k) (τ-bench's formula), completion k/n with its
Wilson 95 % interval (z = 1.96) computed by hand once and written here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.agents.result import ImportedAgentResult
from acceval.agents.store import TokenPrices
from acceval.errors import AccevalError, UsageError
from acceval.interchange import import_files

FIXTURES = Path(__file__).parents[2] / "fixtures" / "agentbench"
TAU_BENCH = (FIXTURES / "tau-bench"
             / "tool-calling-gpt-4o-0.0_range_0-3_user-gpt-4o-llm_0312093015.json")
TAU2 = FIXTURES / "tau2" / "results.json"
#: the same tool's directory layout: results.json (metadata, simulation_index) beside
#: simulations/<id>.json, one file per simulation
TAU2_DIR = FIXTURES / "tau2" / ("20250602_093000_retail_llm_agent_gpt-4.1-mini_"
                                "user_simulator_gpt-4.1")
AGENTLAB = sorted((FIXTURES / "agentlab").glob("*/summary_info.json"))


def _one(files: list[Path], fmt: str, tmp_path: Path,
         prices: TokenPrices | None = None) -> tuple[ImportedAgentResult, Path]:
    result, run_dir = import_files(files, fmt, out_dir=tmp_path, token_prices=prices)
    assert result.agents is not None
    assert result.agents.targets == []  # nothing measured by acceval itself
    (agent,) = result.agents.imported
    return agent, run_dir


def test_tau_bench_completion_and_pass_hat_k(tmp_path: Path) -> None:
    a, run_dir = _one([TAU_BENCH], "tau-bench", tmp_path)
    assert a.name == "gpt-4o"  # from τ-bench's file name <strategy>-<model>-<temperature>_range_
    assert a.provenance == f"imported from τ-bench file {TAU_BENCH.name}"
    # Successes per task: task 0 rewards 1,1,1 (c=3), task 1 1,0,1 (c=2), task 2 0,0,error (c=0)
    assert (a.tasks, a.episodes, a.trials_per_task) == (3, 9, 3)
    assert (a.completion.k, a.completion.n) == (5, 9)
    # Wilson 95 % of 5/9, by hand: [0.266647, 0.811225]
    assert a.completion.ci_low == pytest.approx(0.266647, abs=1e-6)
    assert a.completion.ci_high == pytest.approx(0.811225, abs=1e-6)
    # pass^1 = (3/3 + 2/3 + 0)/3 = 5/9; pass^2 = (3/3 + 1/3 + 0)/3 = 4/9; pass^3 = (1+0+0)/3
    assert [p.k for p in a.pass_hat_k] == [1, 2, 3]
    assert [p.value for p in a.pass_hat_k] == pytest.approx([5 / 9, 4 / 9, 1 / 3])
    assert a.mean_reward == pytest.approx(5 / 9)
    assert (a.errors.k, a.errors.n) == (1, 9)  # the trial with info.error
    # Assistant turns per trajectory: 3,3,4 / 2,5,2 / 6,3 and the error's empty traj (none)
    assert a.steps_per_task.n == 8
    assert a.steps_per_task.mean == pytest.approx(28 / 8)
    assert (a.steps_per_task.p50, a.steps_per_task.max) == (3.0, 6.0)
    # τ-bench's file has no token counts and no agent cost: no cost, and no zero either
    assert a.tokens_per_task.n == 0 and a.cost is None and a.peer_cost is None
    assert (run_dir / "agents" / "imported.parquet").is_file()


def test_tau_bench_declared_prices_without_tokens_say_why(tmp_path: Path) -> None:
    a, _ = _one([TAU_BENCH], "tau-bench", tmp_path, TokenPrices(2.5, 10.0))
    assert a.cost is None
    assert any("9 of 9 trial(s) carry no token counts" in n for n in a.notes)


def test_tau2_counts_prices_and_leaves_out_infrastructure_errors(tmp_path: Path) -> None:
    prices = TokenPrices(0.40, 1.60, "list price, June 2025")
    a, _ = _one([TAU2], "tau2", tmp_path, prices)
    assert a.name == "gpt-4.1-mini-2025-04-14"  # info.agent_info.llm
    # 4 simulations counted; the 5th (infrastructure_error) is left out as tau2 does
    assert (a.tasks, a.episodes, a.trials_per_task) == (2, 4, 2)
    # task "0": rewards 1,1 (c=2); task "1": 1,0 (c=1)
    assert (a.completion.k, a.completion.n) == (3, 4)
    assert a.completion.ci_low == pytest.approx(0.300636, abs=1e-6)  # Wilson 3/4, by hand
    # pass^1 = (2/2 + 1/2)/2 = 0.75; pass^2 = (1 + 0)/2 = 0.5
    assert [p.value for p in a.pass_hat_k] == pytest.approx([0.75, 0.5])
    assert a.stopped_by == {"user_stop": 3, "max_steps": 1}
    # tokens (prompt + completion over the assistant messages' usage): 2290, 2390, 2100, 2200
    assert a.tokens_per_task.mean == pytest.approx((2290 + 2390 + 2100 + 2200) / 4)
    assert a.latency_s_per_task.p50 == pytest.approx(35.0)  # durations 30, 40, 20, 50
    # declared: (8600 prompt x $0.40 + 380 completion x $1.60) / 1M = $0.004048, 3 correct
    assert a.cost is not None
    assert a.cost.total_usd == pytest.approx(0.004048)
    assert a.cost.cost_per_correct_usd == pytest.approx(0.004048 / 3)
    assert "list price, June 2025" in a.cost.basis
    # interval: cost per attempt (0.004048 / 4) over the completion interval's ends
    low, high = a.cost.cost_per_correct_ci_usd or (None, None)
    assert low == pytest.approx(0.004048 / 4 / 0.954414, rel=1e-5)
    assert high == pytest.approx(0.004048 / 4 / 0.300636, rel=1e-5)
    # the file's own agent_cost: 0.0030 + 0.0031 + 0.0028 + 0.0029 = 0.0118, kept apart
    assert a.peer_cost is not None
    assert a.peer_cost.cost_per_correct_usd == pytest.approx(0.0118 / 3)


def test_tau2_directory_layout_one_file_per_simulation(tmp_path: Path) -> None:
    prices = TokenPrices(0.40, 1.60)
    a, _ = _one([TAU2_DIR], "tau2", tmp_path / "a", prices)
    assert a.name == "gpt-4.1-mini-2025-04-14"  # results.json's info.agent_info.llm
    # 6 simulation files counted; the 7th (infrastructure_error) is left out as tau2 does
    assert (a.tasks, a.episodes, a.trials_per_task) == (3, 6, 2)
    # task "0": rewards 1,1 (c=2); "1": 1,0 (c=1); "2": 0,0 (c=0)
    assert (a.completion.k, a.completion.n) == (3, 6)
    # pass^1 = (1 + 1/2 + 0)/3 = 0.5; pass^2 = (1 + 0 + 0)/3
    assert [p.value for p in a.pass_hat_k] == pytest.approx([0.5, 1 / 3])
    assert a.stopped_by == {"agent_stop": 3, "user_stop": 3}
    # simulation k (0..5) has 2000 + 100k prompt and 100 + 10k completion tokens
    assert a.tokens_per_task.mean == pytest.approx((6 * 2100 + 110 * 15) / 6)
    assert a.latency_s_per_task.p50 == pytest.approx(32.5)  # durations 20, 25, ... 45
    # declared: (13500 x $0.40 + 750 x $1.60) / 1M = $0.0066 over 3 correct
    assert a.cost is not None and a.cost.total_usd == pytest.approx(0.0066)
    assert a.cost.cost_per_correct_usd == pytest.approx(0.0022)
    # the files' own agent_cost: 6 x 0.001 + 0.0001 x (0 + 1 + ... + 5) = 0.0075
    assert a.peer_cost is not None
    assert a.peer_cost.cost_per_correct_usd == pytest.approx(0.0075 / 3)
    assert a.files == [f"{TAU2_DIR.name}/simulations/"]
    # its results.json names the layout too (a simulations/ folder beside it), as tau2 says
    b, _ = _one([TAU2_DIR / "results.json"], "tau2", tmp_path / "b", prices)
    assert b == a


def test_tau2_directory_checked_against_its_simulation_index(tmp_path: Path) -> None:
    run = shutil.copytree(TAU2_DIR, tmp_path / "run")
    gone = sorted((run / "simulations").glob("*.json"))[0]
    gone.rename(run / f"{gone.name}.bak")
    with pytest.raises(UsageError, match=f"missing simulation files: {gone.stem}"):
        import_files([run], "tau2", out_dir=tmp_path / "out")
    (run / f"{gone.name}.bak").rename(gone)
    shutil.copy(gone, run / "simulations" / "extra-sim.json")
    with pytest.raises(UsageError, match="simulation files not in the index: extra-sim"):
        import_files([run], "tau2", out_dir=tmp_path / "out")


def test_tau2_folder_of_a_text_run_reads_its_one_file(tmp_path: Path) -> None:
    """``tau2 run`` saves a text run as data/simulations/<run>/results.json, everything in
    it; its folder reads as that file."""
    run = tmp_path / "20250601_airline_run"
    run.mkdir()
    shutil.copy(TAU2, run / "results.json")
    a, _ = _one([run], "tau2", tmp_path / "out")
    assert (a.completion.k, a.completion.n) == (3, 4)  # as the file itself, above
    (run / "results.json").unlink()
    with pytest.raises(UsageError, match=r"without results\.json"):
        import_files([run], "tau2", out_dir=tmp_path / "out")


def test_only_tau2_reads_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="a folder; --format tau-bench reads files"):
        import_files([TAU2_DIR], "tau-bench", out_dir=tmp_path)


def test_tau2_notes_what_it_left_out(tmp_path: Path) -> None:
    result, _ = import_files([TAU2], "tau2", out_dir=tmp_path)
    assert result.log.imported is not None
    assert result.log.imported.tool_versions == ["tau2 4d1b7c5e9a2f"]
    assert any("infrastructure_error" in k for k in result.log.imported.unmapped)


def test_agentlab_episodes_by_task_and_seed(tmp_path: Path) -> None:
    a, _ = _one(AGENTLAB, "agentlab", tmp_path, TokenPrices(0.15, 0.60))
    assert a.name == "GenericAgent-gpt-4o-mini"  # <agent>_on_<task>_<seed> folder names
    # click-test: cum_reward 1, 1 (c=2); ascending-numbers: 0 (truncated), 0 (error) (c=0)
    assert (a.tasks, a.episodes, a.trials_per_task) == (2, 4, 2)
    assert (a.completion.k, a.completion.n) == (2, 4)
    assert a.completion.ci_high == pytest.approx(0.849964, abs=1e-6)  # Wilson 2/4, by hand
    # pass^1 = (2/2 + 0/2)/2 = 0.5; pass^2 = (1 + 0)/2 = 0.5
    assert [p.value for p in a.pass_hat_k] == pytest.approx([0.5, 0.5])
    assert (a.errors.k, a.errors.n) == (1, 4)
    assert a.steps_per_task.mean == pytest.approx((2 + 3 + 10 + 0) / 4)  # n_steps
    # tokens: the tracker's names, and the older OpenAI-callback names for the error episode:
    # 3000+100, 4000+150, 16260+762, 1200+40
    assert a.tokens_per_task.mean == pytest.approx((3100 + 4150 + 17022 + 1240) / 4)
    # declared: (24460 x 0.15 + 1052 x 0.60) / 1M = 0.0043002, over 2 correct
    assert a.cost is not None
    assert a.cost.cost_per_correct_usd == pytest.approx(0.0043002 / 2)
    # the file's stats.cum_cost (or cum_openai_total_cost): 0.0005+0.0007+0.0026+0.0002
    assert a.peer_cost is not None
    assert a.peer_cost.cost_per_correct_usd == pytest.approx(0.0040 / 2)
    # latency: stats.cum_step_elapsed + stats.cum_agent_elapsed: 4.0, 5.0, 16.7, 1.2
    assert a.latency_s_per_task.max == pytest.approx(16.7)
    assert a.stopped_by == {"terminated": 2, "truncated": 1, "error": 1}


def test_report_shows_the_imported_section_with_its_provenance(tmp_path: Path) -> None:
    from acceval.report import render

    result, run_dir = import_files([TAU_BENCH], "tau-bench", out_dir=tmp_path)
    where = f"imported from τ-bench file {TAU_BENCH.name}"
    for fmt in ("console", "md", "html"):
        text = render(result, fmt)
        assert where in text, fmt
    md = render(result, "md")
    assert "0.56 · 0.44 · 0.33" in md  # pass^1..3 as computed above
    assert where in (run_dir / "report.html").read_text(encoding="utf-8")


def test_recompute_gives_the_same_agents_section(tmp_path: Path) -> None:
    from acceval.analysis import load_result

    result, run_dir = import_files([TAU2], "tau2", out_dir=tmp_path,
                                   token_prices=TokenPrices(0.4, 1.6))
    assert load_result(run_dir, recompute=True).agents == result.agents
    assert load_result(run_dir).agents == result.agents


def _bad(tmp_path: Path, data: object, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(("fmt", "data", "field"), [
    ("tau-bench", {"task_id": 0}, "JSON list"),
    ("tau-bench", [{"task_id": 0, "trial": 0, "reward": "yes", "traj": []}], "[0].reward"),
    ("tau-bench", [{"task_id": 0, "reward": 1.0, "traj": []}], "'trial'"),
    ("tau-bench", [{"trial": 0, "reward": 1.0}], "'task_id'"),
    ("tau2", {"tasks": []}, "'simulations'"),
    ("tau2", {"simulations": [{"task_id": "1", "trial": 0, "reward_info": {}}]},
     "simulations[0].reward_info: no 'reward'"),
    ("tau2", {"simulations": [{"task_id": "1", "trial": -1}]}, "simulations[0].trial"),
])
def test_bad_input_names_the_field(tmp_path: Path, fmt: str, data: object, field: str) -> None:
    with pytest.raises(UsageError, match="check --format") as exc:
        import_files([_bad(tmp_path, data)], fmt, out_dir=tmp_path)
    assert field in str(exc.value)


def test_agentlab_needs_its_folder_name_and_fields(tmp_path: Path) -> None:
    folder = tmp_path / "2025-01-20_15-40-39_Agent_on_miniwob.x_3"
    folder.mkdir()
    path = _bad(folder, {"n_steps": 2}, "summary_info.json")
    with pytest.raises(UsageError, match="no 'cum_reward' field"):
        import_files([path], "agentlab", out_dir=tmp_path)
    loose = _bad(tmp_path, {"n_steps": 2, "cum_reward": 1.0}, "summary_info.json")
    with pytest.raises(UsageError, match="not named as AgentLab names"):
        import_files([loose], "agentlab", out_dir=tmp_path)


def test_oversized_file_is_refused_by_the_bounded_reader(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from acceval.interchange import _common

    monkeypatch.setattr(_common, "DATA_MAX_BYTES", 100)
    with pytest.raises(AccevalError, match="larger than"):
        import_files([TAU2], "tau2", out_dir=tmp_path)
