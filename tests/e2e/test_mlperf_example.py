"""The shipped MLPerf example through the real CLI: a study pointing at two systems' folders
of MLPerf result files gives each system's MLPerf score (equal to mlperf-logging's scorer to
the millisecond) and its cost of one run to the same target, in every format."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from helpers.cli import run_cli, write_study
from helpers.mllog_files import RULESET

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _mlperf_s(folder: Path) -> float:
    # Imported here: the scorer's module costs each collecting worker about 2 s.
    from mlperf_logging.result_summarizer import result_summarizer as oracle

    with contextlib.redirect_stdout(io.StringIO()):
        score, _, _ = oracle._compute_strong_score_standalone(
            "bert", folder.parent.name, False, str(folder), "training", RULESET)
    return float(score) * 60.0


def test_two_systems_mlperf_scores_and_cost_to_train_in_every_format(tmp_path: Path) -> None:
    study = EXAMPLES / "mlperf-two-systems.yaml"
    assert run_cli("validate", str(study), cwd=tmp_path).returncode == 0
    res = run_cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress",
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (run_dir,) = (p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    want = {s: _mlperf_s(EXAMPLES / "mlperf-results" / s / "bert") for s in ("sys-a", "sys-b")}
    data = json.loads((run_dir / "result.json").read_text())
    by = {p["name"]: p for p in data["training"]["platforms"]}
    texts = {"console": res.stdout,
             "md": run_cli("report", str(run_dir), "--format", "md", cwd=tmp_path).stdout,
             "html": (run_dir / "report.html").read_text(encoding="utf-8")}
    for name, score_s in want.items():
        p = by[name]
        assert p["time_to_target"]["value_s"] == pytest.approx(score_s, abs=5e-4)
        assert p["time_to_target"]["benchmark"] == "bert"
        assert p["target_source"].startswith("MLPerf training rules, bert")
        usd = p["cost"]["cost_per_run_usd"]
        assert usd > 0
        for fmt, text in texts.items():
            assert f"{score_s:,.3f} s" in text, (fmt, name)   # the score, to the ms
            assert f"${usd:.2f} per training run" in text, (fmt, name)
    assert not by["sys-b"]["runs"][6]["reached"]
    assert by["sys-b"]["runs"][6]["run_status"] == "aborted"


def test_validate_and_run_refuse_a_missing_or_empty_log_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    study = write_study(tmp_path / "study.yaml", {"name": "bad-logs", "training": {
        "target": {"max_eval_loss": 1.0},
        "platforms": [{"name": "p", "logs": {"runs": [{"path": "missing.jsonl"},
                                                      {"path": "empty.jsonl"}]}}]}})
    for argv in (("validate", str(study)),
                 ("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress")):
        res = run_cli(*argv, cwd=tmp_path)
        assert res.returncode == 2, res.stdout + res.stderr
        out = res.stdout + res.stderr
        assert "missing.jsonl does not exist" in out and "no data in" in out
        assert "Traceback" not in out
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
