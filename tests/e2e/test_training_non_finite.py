"""NaN and infinities in a training log never crash the HTML report (issue 30: a NaN time
or an infinite token count reached the charts, and every later `report --format html`
failed the same way)."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.cli import run_cli, write_study

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "training"


def test_a_log_with_nan_and_inf_renders_every_format(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    shutil.copy(FIXTURES / "steps.jsonl", log)
    with log.open("a") as f:
        f.write('{"t_s": NaN, "step": 99, "loss": 1.0, "tokens": Infinity, '
                '"step_s": Infinity, "data_s": NaN}\n{"t_s": Infinity, "step": 100, '
                '"eval_loss": 0.5}\n{"t_s": 9.0, "step": 101, "loss": NaN}\n')
    study = write_study(tmp_path / "s.yaml", {
        "name": "nan", "training": {"target": {"max_eval_loss": 1.0}, "runs": 1,
                                    "platforms": [{"name": "p",
                                                   "logs": {"runs": [{"path": "steps.jsonl"}]}}]}})
    done = run_cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    for args in (["--format", "html", "--out", str(tmp_path / "r.html")],
                 ["--recompute", "--format", "html", "--out", str(tmp_path / "r2.html")],
                 ["--format", "md"]):
        rep = run_cli("report", str(run_dir), *args, cwd=tmp_path)
        assert rep.returncode == 0 and "Traceback" not in rep.stderr, rep.stderr
    md = run_cli("report", str(run_dir), "--format", "md", cwd=tmp_path).stdout
    assert "not understood" in md  # the lines with a NaN time or count are counted
