"""A study without inference targets: the verdict has no inference ranking (rule 4), and a
resume measures the agents or training part a run folder lacks instead of finding
"nothing to resume"."""

from __future__ import annotations

from pathlib import Path

from acceval.agents.store import AgentsLog, tables, write
from acceval.pipeline import resume_plan
from acceval.results.runlog import RunLog
from acceval.study import study_from_dict
from acceval.verdict import Rules, decide

AGENTS = {"only": ["buy-one"], "trials": 1, "targets": [{"name": "p", "policy": {}}]}
TRAINING = {"target": {"max_eval_loss": 1.8}, "runs": 1,
            "platforms": [{"name": "mine", "command": {"argv": ["true"]}}]}


def test_no_targets_no_inference_ranking() -> None:
    v = decide([], Rules())
    assert v.status == "no-targets" and v.winner is None and v.tied == []
    assert v.headline.startswith("No inference targets in this study")
    assert "cheapest" not in v.headline.lower()


def test_a_resume_measures_the_parts_the_folder_lacks(tmp_path: Path) -> None:
    study = study_from_dict({"name": "parts", "agents": AGENTS, "training": TRAINING})
    prior = RunLog(run_id="r", created_utc="2026-01-01T00:00:00+00:00")
    plan = resume_plan(study, prior, run_dir=tmp_path)
    assert plan.remeasure == ["agents: the workflows", "training: mine"]
    # an agents part that was skipped for want of a browser is finished: it said why
    write(tmp_path, *tables([]), AgentsLog(skipped="agents part skipped: no Chromium found"))
    assert resume_plan(study, prior, run_dir=tmp_path).remeasure == ["training: mine"]
    assert resume_plan(study, prior).remeasure == []  # without the folder: the targets only
