import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acceval.economics import (
    BillItemResult,
    Measured,
    Price,
    StudyCosts,
    TargetCosts,
    build_cost_inputs,
    compute_bill,
    frontier,
)


def _bill(price: Price | None = None, costs: TargetCosts | None = None,
          study: StudyCosts | None = None, m: Measured | None = None, chips: int = 2):
    ci = build_cost_inputs(
        "t", chips=chips, price=price or Price(usd_per_hour=3.0), costs=costs,
        study_costs=study,
        measured_values=m or Measured(duration_s=1800, requests=100, correct=80,
                                      output_tokens=50_000),
    )
    return compute_bill(ci)


def _item(bill, name: str) -> BillItemResult:
    return next(i for i in bill.items if i.name == name)


def test_compute_is_rate_times_chips_times_time_over_utilization() -> None:
    b = _bill(costs=TargetCosts(utilization=0.5))
    # $3/chip-h x 2 chips x 0.5 h / 0.5
    assert _item(b, "compute").usd == pytest.approx(6.0)
    assert b.total_usd == pytest.approx(6.0)
    assert b.cost_per_attempt_usd == pytest.approx(0.06)
    assert b.cost_per_correct_usd == pytest.approx(6.0 / 80)
    assert b.cost_per_mtok_output_usd == pytest.approx(6.0 / 0.05)
    assert b.success_rate == pytest.approx(0.8)


def test_undeclared_items_are_not_counted_rather_than_zero() -> None:
    b = _bill()
    assert set(b.not_counted) == {"compile", "storage", "observability", "egress",
                                  "transfer", "engineering", "energy"}
    assert _item(b, "energy").note == "inside the hourly rate"
    assert "not declared" in _item(b, "storage").note


def test_every_item_of_the_whole_bill() -> None:
    b = _bill(
        costs=TargetCosts(storage_usd_per_month=730.0, observability_usd_per_month=146.0,
                          egress_gb_per_request=0.01, compile_s=900, engineering_hours=40,
                          starts_per_month=2, utilization=1.0),
        study=StudyCosts(engineer_usd_per_hour=100, horizon_months=10,
                         expected_requests_per_month=1000, egress_usd_per_gb=0.09),
    )
    # 0.25 h x $3 x 2 chips per start, 2 starts a month, 100 of 1000 monthly requests
    assert _item(b, "compile").usd == pytest.approx(0.25 * 3 * 2 * 2 * 100 / 1000)
    assert _item(b, "storage").usd == pytest.approx(730.0 * 0.5 / 730)   # prorated by time
    assert _item(b, "observability").usd == pytest.approx(146.0 * 0.5 / 730)
    assert _item(b, "egress").usd == pytest.approx(100 * 0.01 * 0.09)
    assert _item(b, "engineering").usd == pytest.approx(40 * 100 * 100 / (10 * 1000))
    expected = 3.0 + 0.3 + 0.5 + 0.1 + 0.09 + 40.0
    assert b.total_usd == pytest.approx(expected)
    assert b.cost_per_correct_usd == pytest.approx(expected / 80)


def test_declared_compile_time_wins_and_the_measured_one_stands_beside_it() -> None:
    # A declared 900 s compile must not become a local server's 0.24 s start-up.
    b = _bill(costs=TargetCosts(compile_s=900, starts_per_month=1),
              study=StudyCosts(expected_requests_per_month=10),
              m=Measured(duration_s=1800, requests=10, correct=5, compile_s=0.24))
    assert _item(b, "compile").usd == pytest.approx(0.25 * 3 * 2)
    assert b.inputs["compile_s"].value == 900
    assert b.inputs["compile_s"].origin == "assumption"
    assert b.inputs["compile_s"].source == "study file: targets.t.costs.compile_s"
    assert b.inputs["compile_s_measured"].value == pytest.approx(0.24)
    assert b.inputs["compile_s_measured"].origin == "measured"
    note = _item(b, "compile").note
    assert "900 s" in note and "measured start-up 0.24 s" in note and "rule:" in note


def test_measured_start_up_is_used_when_nothing_is_declared() -> None:
    b = _bill(costs=TargetCosts(starts_per_month=1),
              study=StudyCosts(expected_requests_per_month=10),
              m=Measured(duration_s=1800, requests=10, correct=5, compile_s=1800))
    assert _item(b, "compile").usd == pytest.approx(0.5 * 3 * 2)
    assert b.inputs["compile_s"].origin == "measured"
    assert b.inputs["compile_s"] == b.inputs["compile_s_measured"]


def test_no_correct_answer_costs_infinity() -> None:
    b = _bill(m=Measured(duration_s=60, requests=10, correct=0))
    assert b.cost_per_correct_usd == math.inf
    assert b.cost_per_mtok_output_usd is None      # tokens not measured: None, not 0


def test_owned_hardware_bills_capex_and_measured_energy() -> None:
    price = Price(pricing="owned", capex_usd=35_040, lifetime_years=4, power_kw=1.0)
    study = StudyCosts(electricity_usd_per_kwh=0.10)
    m = Measured(duration_s=3600, requests=10, correct=10, energy_j=7.2e6,
                 energy_level="facility")
    b = _bill(price=price, study=study, m=m, chips=1)
    assert _item(b, "compute").usd == pytest.approx(1.0)
    assert _item(b, "energy").usd == pytest.approx(0.2)           # 2 kWh x $0.10
    assert b.inputs["usd_per_chip_hour"].origin == "derived"
    assert b.inputs["energy_j"].origin == "derived"                # not a pure device reading
    # no measurement: declared all-in power x paid time
    b2 = _bill(price=price, study=study, m=Measured(duration_s=3600, requests=10, correct=10),
               chips=1)
    assert _item(b2, "energy").usd == pytest.approx(0.1)


def test_provenance_travels_with_every_input() -> None:
    b = _bill(costs=TargetCosts(utilization=0.7))
    assert b.inputs["duration_s"].origin == "measured"
    assert b.inputs["utilization"].origin == "assumption"
    assert b.inputs["utilization"].source == "study file"
    assert b.model_dump()["inputs"]["usd_per_chip_hour"]["value"] == 3.0


def test_frontier_picks_the_lowest_cost_of_pass_over_load_points() -> None:
    bills = [
        _bill(m=Measured(duration_s=3600, requests=100, correct=50)),  # 2 x $3 x 1 h / 50 = $0.12
        _bill(m=Measured(duration_s=1800, requests=100, correct=50)),     # $0.06
    ]
    other = compute_bill(build_cost_inputs(
        "u", chips=1, price=Price(usd_per_hour=1.0),
        measured_values=Measured(duration_s=3600, requests=100, correct=0)))
    f = frontier([*bills, other], baseline_usd=20.0)
    assert f.entries[0].target == "t"
    assert f.entries[0].cost_of_pass_usd == pytest.approx(0.06)
    assert f.entries[-1].cost_of_pass_usd == math.inf
    assert not f.baseline_wins
    f2 = frontier(bills, baseline_usd=0.05)
    assert f2.baseline_wins and f2.frontier_usd == 0.05 and f2.entries[0].target == "t"


def _cpc(correct: int, rate: float) -> float:
    return _bill(price=Price(usd_per_hour=rate),
                 m=Measured(duration_s=600, requests=200, correct=correct)).cost_per_correct_usd


@given(st.integers(0, 199), st.floats(0.01, 100))
def test_cost_per_correct_never_rises_with_accuracy(correct: int, rate: float) -> None:
    assert _cpc(correct + 1, rate) <= _cpc(correct, rate)


@given(st.integers(1, 200), st.floats(0.01, 100), st.floats(1.0, 10.0))
def test_cost_per_correct_is_monotone_in_price(correct: int, rate: float, k: float) -> None:
    assert _cpc(correct, rate * k) >= _cpc(correct, rate)


def test_cross_region_transfer_is_priced_from_the_availability_section() -> None:
    from acceval.economics import cost_inputs_for
    from acceval.study import Study

    s = Study.model_validate({
        "name": "x",
        "targets": [{"name": "trn2", "endpoint": {"base_url": "http://127.0.0.1:9/v1",
                                                  "model": "m"},
                     "price": {"usd_per_hour": 2.0},
                     "availability": {"failover_region": "us-west-2",
                                      "transfer_usd_per_gb": 0.02,
                                      "transfer_gb_per_request": 0.5,
                                      "source": "AWS console, 2026-05"}}],
    })
    ci = cost_inputs_for(s.targets[0], s, None, Measured(duration_s=3600, requests=100,
                                                         correct=50))
    assert ci is not None
    b = compute_bill(ci)
    assert _item(b, "transfer").usd == pytest.approx(100 * 0.5 * 0.02)
    assert b.total_usd == pytest.approx(2.0 + 1.0)
    price = b.inputs["transfer_usd_per_gb"]
    assert price.origin == "assumption" and "AWS console, 2026-05" in (price.source or "")
    assert b.inputs["transfer_gb_per_request"].value == 0.5
    # a price without a volume is listed as not counted, never as 0
    data = s.model_dump(mode="json")
    del data["targets"][0]["availability"]["transfer_gb_per_request"]
    s2 = Study.model_validate(data)
    ci2 = cost_inputs_for(s2.targets[0], s2, None, Measured(duration_s=3600, requests=100,
                                                            correct=50))
    assert ci2 is not None
    assert _item(compute_bill(ci2), "transfer").usd is None


def test_a_result_file_from_before_the_frontier_stopped_ranking_still_loads() -> None:
    """Only the verdict ranks: the frontier's ``winner`` is retired, read and dropped."""
    from acceval.economics.bill import FrontierResult

    old = {"entries": [], "winner": "t", "frontier_usd": 1.0, "baseline_usd": None,
           "baseline_wins": False}
    f = FrontierResult.model_validate(old)
    assert f.frontier_usd == 1.0 and "winner" not in f.model_dump()
