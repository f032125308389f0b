"""An implausible figure is shown with a flag and its likely cause, never as if true: MFU
above 100 % (the measured rate above the peak's upper bound) in every format."""

from __future__ import annotations

import json
from pathlib import Path

from acceval.economics.spec import StudyCosts
from acceval.training.analyze import platform_result
from acceval.training.spec import Training


def _spec(tmp: Path, peak_tflops: float) -> Training:
    rows = [{"step": i, "t_s": i * 0.5, "loss": 2.0, "tokens": 4096, "step_s": 0.5}
            for i in range(1, 11)]
    rows.append({"step": 10, "t_s": 5.0, "eval_loss": 1.0})
    (tmp / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Training.model_validate({"target": {"max_eval_loss": 1.5}, "platforms": [{
        "name": "p", "peak_tflops": peak_tflops, "model": {"params": 1.0e9},
        "logs": {"runs": [{"path": "a.jsonl"}]}}]})


def _mfu(tmp: Path, peak: float):
    spec = _spec(tmp, peak)
    res = platform_result(spec, spec.platforms[0], base_dir=tmp, run_dir=None,
                          study_costs=StudyCosts(), catalog=None)
    assert res.mfu is not None and res.mfu.mfu is not None
    return res.mfu


def test_mfu_above_100_percent_is_flagged_with_its_likely_cause(tmp_path: Path) -> None:
    # 8192 tokens/s x 6e9 FLOP/token = 49 TFLOP/s against a declared 10 TFLOPS peak.
    m = _mfu(tmp_path, 10.0)
    assert m.mfu > 1 and not m.plausible
    assert m.flag.startswith("implausible: MFU 492 % is above 100 %")
    assert "peak is too low" in m.flag and "FLOP count" in m.flag


def test_a_plausible_mfu_has_no_flag(tmp_path: Path) -> None:
    m = _mfu(tmp_path, 1000.0)
    assert m.mfu < 1 and m.plausible and m.flag == ""
