"""Fleet sizing hour by hour: hand-computed plans, utilization, idle chip-hours, cost under
demand beside the cost at saturation; properties of replicas_needed and plan_fleet."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.capacity import (
    BurstWindow,
    DemandProfile,
    demand_cost,
    plan_fleet,
    replicas_needed,
)


def test_hand_plan_two_level_day() -> None:
    # 12 hours at 30 rps, 12 at 10 rps; a replica carries 10 rps within the SLO.
    p = DemandProfile((30.0,) * 12 + (10.0,) * 12)
    plan = plan_fleet(p, 10.0, chips_per_replica=8)
    assert plan.replicas.tolist() == [3] * 12 + [1] * 12
    assert plan.replica_hours == 48 and plan.chip_hours == 384
    assert plan.utilization == pytest.approx(1.0)
    assert plan.idle_chip_hours == pytest.approx(0.0)
    static = plan_fleet(p, 10.0, chips_per_replica=8, scaling="static")
    assert static.replicas.tolist() == [3] * 24
    assert static.utilization == pytest.approx(480 / 720)            # sum(rate) / (72 x 10)
    assert static.idle_chip_hours == pytest.approx(8 * (72 - 48))


def test_headroom_spares_and_float_noise() -> None:
    assert replicas_needed(100.0, 10.0).item() == 10             # exactly 10, not 11
    assert replicas_needed(100.0, 10.0, headroom=0.2).item() == 12
    assert replicas_needed(100.0, 10.0, headroom=0.2, spares=1).item() == 13
    assert replicas_needed(0.0, 10.0).item() == 1                # keep one warm
    assert replicas_needed(0.0, 10.0, min_replicas=0).item() == 0
    assert replicas_needed(0.3 * 3, 0.3).item() == 3             # 0.9/0.3 = 3.0000000000000004


def test_a_burst_inside_an_hour_sizes_that_hour() -> None:
    p = DemandProfile((10.0,) * 24, (BurstWindow(5 * 3600 + 600, 300, 4.0),))
    plan = plan_fleet(p, 10.0)
    assert plan.replicas[5] == 4 and plan.replicas[4] == 1
    assert plan.hourly_mean_rps[5] == pytest.approx(10 + 30 * 300 / 3600)


def test_cost_under_demand_is_saturation_cost_over_utilization() -> None:
    p = DemandProfile((30.0,) * 12 + (10.0,) * 12)
    plan = plan_fleet(p, 10.0, scaling="static")
    c = demand_cost(plan, usd_per_replica_hour=36.0, success_rate=0.9, saturation_rps=12.5)
    assert c.fleet_usd == pytest.approx(72 * 36)
    assert c.correct_tasks == pytest.approx(480 * 3600 * 0.9)
    assert c.cost_per_correct_usd == pytest.approx(72 * 36 / (480 * 3600 * 0.9))
    assert c.cost_per_correct_at_slo_rate_usd == pytest.approx(36 / (10 * 3600 * 0.9))
    assert c.cost_per_correct_at_saturation_usd == pytest.approx(36 / (12.5 * 3600 * 0.9))
    assert plan.utilization is not None
    assert c.ratio == pytest.approx(1 / plan.utilization)
    assert math.isinf(demand_cost(plan, 36.0, 0.0).cost_per_correct_usd)


# 0 or a real rate: a denormal rate underflows to a utilization of exactly 0.
rates = st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 2000.0)), min_size=24, max_size=24)


@settings(max_examples=60, deadline=None)
@given(base=rates, more=st.floats(0.0, 500.0), mu=st.floats(0.5, 200.0),
       headroom=st.floats(0.0, 1.0), spares=st.integers(0, 3),
       scaling=st.sampled_from(["hourly", "static"]))
def test_plan_properties(base: list[float], more: float, mu: float, headroom: float,
                         spares: int, scaling: str) -> None:
    lo = plan_fleet(DemandProfile(tuple(base)), mu, headroom=headroom, spares=spares,
                    scaling=scaling)
    hi = plan_fleet(DemandProfile(tuple(r + more for r in base)), mu, headroom=headroom,
                    spares=spares, scaling=scaling)
    assert np.all(lo.replicas <= hi.replicas)                     # monotone in demand
    for plan in (lo, hi):
        assert np.all(plan.replicas >= plan.offered_load_bound)   # never below ceil(lam/mu)
        assert np.all(plan.replicas >= 1)
        u = plan.utilization
        assert u is not None
        if plan.expected_requests > 0:
            assert 0 < u <= 1 + 1e-12
        assert plan.idle_chip_hours >= -1e-6


@settings(max_examples=60, deadline=None)
@given(rate=st.floats(0.0, 1e5), extra=st.floats(0.0, 1e4), mu=st.floats(0.01, 1e3))
def test_replicas_needed_monotone_and_bounded(rate: float, extra: float, mu: float) -> None:
    a = replicas_needed(rate, mu).item()
    b = replicas_needed(rate + extra, mu).item()
    assert a <= b
    assert a >= math.ceil(rate / mu - 1e-9)
