"""Studies with no inference targets, through the real CLI: the shipped training-only study
(committed logs, nothing trained) and agents-only study (the scripted policy in real
headless Chromium) validate, run, re-render with --recompute, and their verdict and report
say there is no inference ranking instead of showing empty inference sections."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.agents.browser import unavailable
from acceval.run_result import RunResult
from helpers.cli import run_cli, write_study

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INFERENCE_SECTIONS = ("## Latency and throughput", "## Quality", "## Errors",
                      "## Load-generator self-check", "| target | rank |")


def _run(tmp_path: Path, study: Path) -> tuple[RunResult, Path, str]:
    res = run_cli("validate", str(study), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "no inference targets" in res.stdout
    res = run_cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress",
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "No inference targets in this study" in res.stdout
    (run_dir,) = (p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    res = run_cli("report", str(run_dir), "--recompute", "--format", "md", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return RunResult.load(run_dir), run_dir, res.stdout


def _no_inference(result: RunResult, run_dir: Path, md: str) -> str:
    assert result.targets == []
    v = result.verdict
    assert v.status == "no-targets" and v.winner is None and v.standings == []
    for head in INFERENCE_SECTIONS:
        assert head not in md, head
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    for section in ('id="decision"', 'id="charts"', 'id="capacity"', 'id="samples"'):
        assert section not in page, section
    assert '<p class="headline">No inference targets in this study' in page  # not in red
    return page


def test_a_training_only_study_ranks_its_platforms_and_no_inference(tmp_path: Path) -> None:
    result, run_dir, md = _run(tmp_path, EXAMPLES / "training-only.yaml")
    page = _no_inference(result, run_dir, md)
    tr = result.training
    assert tr is not None and tr.verdict.winner == "cluster-b"
    by = {p.name: p for p in tr.platforms}
    a_time, b_time = by["cluster-a"].time_to_target, by["cluster-b"].time_to_target
    assert a_time is not None and a_time.value_s == pytest.approx(2.6)
    assert b_time is not None and b_time.value_s == pytest.approx(2.0)
    assert any(line.startswith("Cheapest training run to target: cluster-b")
               for line in result.verdict.sentences)
    assert "## Training on equal terms" in md and "| cost per run to target |" in md
    assert 'id="training"' in page


@pytest.mark.skipif(unavailable() is not None, reason=f"needs a browser: {unavailable()}")
def test_an_agents_only_study_compares_its_agents_and_no_inference(tmp_path: Path) -> None:
    result, run_dir, md = _run(tmp_path, EXAMPLES / "agents-only.yaml")
    page = _no_inference(result, run_dir, md)
    a = result.agents
    assert a is not None and a.skipped is None
    careful, clumsy = a.target("careful"), a.target("clumsy")
    assert careful is not None and clumsy is not None
    assert (careful.completion.k, careful.completion.n) == (4, 4)
    assert careful.stray_actions is not None and careful.stray_actions.k == 0
    assert clumsy.stray_actions is not None and clumsy.stray_actions.n > 0
    # the example shows a recovery, a refused irreversible action and an intervention
    assert any(r.recovered.k > 0 for r in careful.recoveries)
    hasty = a.target("hasty-model")
    assert hasty is not None and hasty.refused_irreversible > 0 and hasty.completion.k > 0
    assert clumsy.interventions > 0
    assert [line for line in result.verdict.sentences if line.startswith("Agent workflows")]
    assert "## Agent workflows, end to end" in md and "stray actions" in md
    assert "careful (scripted policy) | 100% [51%–100%] (4/4)" in md
    assert 'id="agents"' in page
    stored = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    assert stored["verdict"]["status"] == "no-targets"
    # a folder that lost its agents part: a resume measures it again (no inference point
    # to resume, and still not "nothing to resume")
    shutil.rmtree(run_dir / "agents")
    res = run_cli("run", "--resume", str(run_dir), "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    again = RunResult.load(run_dir).agents
    assert again is not None and again.target("careful") is not None
    assert again.target("careful").completion.k == 4  # type: ignore[union-attr]


def test_a_study_that_measures_nothing_is_refused_naming_targets(tmp_path: Path) -> None:
    study = write_study(tmp_path / "empty.yaml", {"name": "empty", "targets": []})
    res = run_cli("validate", str(study), cwd=tmp_path)
    assert res.returncode == 2
    assert "- targets: the study measures nothing" in res.stderr
    assert "`agents:`" in res.stderr and "`training:`" in res.stderr
