"""Correctness joined to every request, and cost per correct task, against real mock servers.

- The mock answers a known fraction of tasks correctly: the measured accuracy interval
  contains that fraction (issue: correct tasks).
- A cheaper, faster but less accurate target loses on cost per correct task, with the bill's
  breakdown and the sensitivity saying why (issue: cost per correct task).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase


def _mock(name: str, price: float, **opts: object) -> dict[str, object]:
    return {"name": name, "serve": {"engine": "mock", "options": {"answers": "@tasks", **opts}},
            "price": {"usd_per_hour": price, "source": "test figure"}}


def test_measured_accuracy_interval_contains_the_true_fraction(tmp_path: Path) -> None:
    study = study_from_dict({
        "name": "fraction",
        "tasks": {"source": "builtin:arithmetic", "count": 400, "seed": 5, "max_tokens": 8},
        "targets": [_mock("m70", 1.0, correct_fraction=0.7, seed=3, ttft_ms=1)],
        "load": [{"concurrency": [8]}, {"poisson_rps": [200]}],
        "quality": {"min_accuracy": 0.8},
    })
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    t = result.target("m70")
    assert t.accuracy is not None and t.accuracy.n == 800
    assert t.accuracy.ci_low is not None and t.accuracy.ci_high is not None
    assert t.accuracy.ci_low <= 0.7 <= t.accuracy.ci_high
    for p in t.points:  # quality at each load point, each with its own interval
        acc = p.summary.accuracy
        assert acc is not None and acc.n == 400
        assert acc.ci_low is not None and acc.ci_high is not None
        assert acc.ci_low <= 0.7 <= acc.ci_high
        assert p.summary.correct_goodput_rps is not None
        assert p.summary.correct_goodput_rps < (p.summary.goodput_rps or 0)
    assert t.gate.passed is False and "accuracy" in t.gate.reasons[0]


def test_cheap_fast_but_wrong_loses_on_cost_per_correct_task(tmp_path: Path) -> None:
    study = study_from_dict({
        "name": "cost",
        "tasks": {"source": "builtin:arithmetic", "count": 300, "seed": 9, "max_tokens": 8},
        "targets": [
            _mock("fast-wrong", 1.0, correct_fraction=0.1, seed=1, ttft_ms=2, itl_ms=1),
            _mock("slow-right", 1.5, correct_fraction=1.0, seed=2, ttft_ms=10, itl_ms=1),
        ],
        "load": [{"concurrency": [4]}],
    })
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    v = result.verdict
    fast, slow = v.standing("fast-wrong"), v.standing("slow-right")
    assert fast is not None and slow is not None
    fast_bill = result.target("fast-wrong").economics.point(fast.operating_point).bill  # type: ignore[union-attr]
    slow_bill = result.target("slow-right").economics.point(slow.operating_point).bill  # type: ignore[union-attr]
    # Per attempt and per token the fast one is cheaper ...
    assert (fast_bill.cost_per_attempt_usd or 0) < (slow_bill.cost_per_attempt_usd or 0)
    assert (fast_bill.cost_per_mtok_output_usd or 0) < (slow_bill.cost_per_mtok_output_usd or 0)
    # ... per correct task it is not.
    assert fast_bill.cost_per_correct_usd > slow_bill.cost_per_correct_usd
    assert not math.isinf(slow_bill.cost_per_correct_usd)
    assert v.winner == "slow-right" and slow.rank == 1
    # The breakdown says where the money went; the verdict says why the cheap one lost.
    items = {i.name: i.usd for i in fast_bill.items}
    assert items["compute"] is not None and items["compute"] > 0
    assert any("cheapest per token (fast-wrong" in line for line in v.lines)
    assert result.economics is not None
    bars = result.economics.sensitivity.bars
    assert {b.target for b in bars} == {"fast-wrong", "slow-right"}
    assert any(b.input == "price" for b in bars)
