"""Two synthetic targets: the cheaper-per-token one loses on cost per correct task, and the
sensitivity analysis names the swings that flip the ranking."""

import pytest

from acceval.economics import (
    Measured,
    Price,
    Sensitivity,
    Swing,
    build_cost_inputs,
    compute_bill,
    frontier,
    sensitivity,
)
from acceval.verdict import cheapest


def _inputs():
    # fast: $2/chip-h, 800 s, 40% correct; accurate: $3/chip-h, 1000 s, 95% correct
    fast = build_cost_inputs("fast", chips=1, price=Price(usd_per_hour=2.0),
                             measured_values=Measured(duration_s=800, requests=1000,
                                                      correct=400, output_tokens=1_000_000))
    accurate = build_cost_inputs("accurate", chips=1, price=Price(usd_per_hour=3.0),
                                 measured_values=Measured(duration_s=1000, requests=1000,
                                                          correct=950, output_tokens=1_000_000))
    return [fast, accurate]


def test_cheaper_per_token_loses_on_cost_per_correct_task() -> None:
    fast, accurate = (compute_bill(ci) for ci in _inputs())
    assert fast.cost_per_mtok_output_usd < accurate.cost_per_mtok_output_usd
    assert fast.cost_per_correct_usd > accurate.cost_per_correct_usd
    assert fast.cost_per_correct_usd == pytest.approx(2 * 800 / 3600 / 400)
    assert accurate.cost_per_correct_usd == pytest.approx(3 * 1000 / 3600 / 950)
    assert frontier([fast, accurate]).entries[0].target == "accurate"


def test_sensitivity_names_the_swings_that_flip_the_winner() -> None:
    rep = sensitivity(_inputs(), cheapest)       # defaults: price +-30%, utilization 0.3..0.9
    assert rep.base_winner == "accurate"
    flips = {(f.input, f.scope, f.side) for f in rep.flips}
    assert flips == {("price", "fast", "low"), ("price", "accurate", "high"),
                     ("utilization", "accurate", "low")}
    assert all(f.winner == "fast" for f in rep.flips)
    bar = next(b for b in rep.bars if b.target == "accurate" and b.input == "utilization")
    assert (bar.low_value, bar.high_value) == (0.3, 0.9)
    assert bar.low_usd == pytest.approx(bar.base_usd / 0.3)
    assert bar.high_usd == pytest.approx(bar.base_usd / 0.9)
    assert rep.bars[0].width_usd >= rep.bars[-1].width_usd      # tornado order
    # undeclared inputs are not swung
    assert {b.input for b in rep.bars} == {"price", "utilization"}


def test_narrower_ranges_flip_nothing() -> None:
    ranges = Sensitivity(price=Swing(pct=5), utilization=Swing(low=0.95, high=1.0))
    assert sensitivity(_inputs(), cheapest, ranges).flips == []


def test_reports_serialise_to_plain_data() -> None:
    import json

    rep = sensitivity(_inputs(), cheapest).model_dump(mode="json")
    assert rep["base_winner"] == "accurate"
    assert {f["input"] for f in rep["flips"]} == {"price", "utilization"}
    assert all("width_usd" in b for b in rep["bars"])
    fr = frontier([compute_bill(ci) for ci in _inputs()]).model_dump(mode="json")
    assert "winner" not in fr and fr["entries"][0]["target"] == "accurate"
    json.dumps({"sensitivity": rep, "frontier": fr})
