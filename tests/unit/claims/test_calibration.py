"""The calibration band: published serving results (NVIDIA's TensorRT-LLM H200 launch
table) beside the planner's bound for the same cell, and the band they give a plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.analysis import plan_study
from acceval.claims.calibration import cell_bound, published
from acceval.claims.plan import PlanPoint, PlanResult, above_bound_cause
from acceval.claims.roofline import Bytes, Chip, Shape
from acceval.economics.catalog import load_catalog
from acceval.report._claims import calibration_text, measured_table
from acceval.results.section import SourcedValue
from acceval.study import load_study

ROOT = Path(__file__).parents[3]


def _h200() -> Chip:
    hw = load_catalog().chip("h200")
    assert hw is not None and hw.memory_bytes is not None
    return Chip(1.979e15, hw.memory_bytes, 4.8e12, 450e9, 8)


def test_every_published_cell_names_its_source_date_and_software() -> None:
    cells = published()
    assert len(cells) == 4
    for c in cells:
        assert "H200launch.md" in c.source and c.date and c.software
        assert c.hardware == "h200" and c.weights == "fp8"


def test_a_published_cell_against_its_bound_worked_by_hand() -> None:
    cell = next(c for c in published() if c.batch == 32)  # TP1, 2048 in, 128 out: 303 tok/s
    # Decode at context 2,112: 68.98e9 + 32 * 327,680 * 2,112 bytes / 4.8e12 = 18.985 ms
    # (memory-bound); prefill 2.8804e14 FLOPs / 1.979e15 = 145.55 ms (compute-bound);
    # 32 * 128 / (32 * 0.14555 + 128 * 0.018985) = 577.9 tok/s.
    bound = cell_bound(cell, _h200())
    assert bound == pytest.approx(577.9, rel=1e-3)
    assert cell.output_tps_per_chip / bound == pytest.approx(0.5243, abs=1e-3)


def test_plan_70b_gets_a_band_where_cells_are_close_and_says_so_where_none_is() -> None:
    plans = {p.target: p for p in plan_study(load_study(ROOT / "examples" / "plan-70b.yaml"),
                                             load_catalog())}
    short, long = plans["h200"].contexts
    cal = short.calibration
    assert cal is not None and len(cal.cells) == 3       # 128/2048 and two 2048/128 cells
    shares = [r.share for r in cal.cells if r.share is not None]
    assert (cal.low, cal.high) == (min(shares), max(shares))
    assert cal.low == pytest.approx(0.188, abs=0.002)
    assert cal.high == pytest.approx(0.524, abs=0.002)
    assert short.serving_tps_chip is not None
    assert cal.planned_low_tps_chip == pytest.approx(short.serving_tps_chip * cal.low)
    assert cal.planned_high_tps_chip == pytest.approx(short.serving_tps_chip * cal.high)
    assert "published systems reach 18.8%–52.4% of this bound" in calibration_text(short)
    assert long.calibration is not None and long.calibration.low is None
    assert "no published cell is close" in long.calibration.note
    trn3 = plans["trn3"].contexts[0].calibration
    assert trn3 is not None and "no published cell for trn3" in trn3.note


def test_a_measured_point_above_its_bound_says_why() -> None:
    tiny = Shape("tiny", 1.05e6, 4, 128, 4, 4, 32, 512)
    inputs = {"memory_bandwidth": SourcedValue(value=5e9, origin="measured",
                                               source="host")}
    why = above_bound_cause(tiny, Bytes(4.0, 4.0, 4.0), inputs, None)
    assert "fit in the CPU's caches" in why and "4.0 MiB" in why
    cached = above_bound_cause(tiny, Bytes(4.0, 4.0, 4.0), {}, 0.5)
    assert "50% of the prompt tokens came from the prefix cache" in cached
    plan = PlanResult(target="t", hardware="cpu", model="tiny", parameters=1.05e6,
                      weights="fp32", kv_cache="fp32", compute="fp32", inputs=inputs,
                      measured=[PlanPoint(label="concurrency 16", batch=16, input_tokens=8,
                                          output_tokens=5, measured_tps_chip=1720,
                                          bound_tps_chip=1691, efficiency=1720 / 1691,
                                          above_bound=why)])
    table = measured_table(plan)
    assert table is not None
    assert "102%; ABOVE the planned upper bound: likely the model's" in table[1][0][-1]
