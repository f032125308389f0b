"""The fleet what-if: conservation, determinism, failures and outages cost requests, spares
buy them back, reactive scaling is late at ramps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.capacity import (
    DemandProfile,
    Outage,
    builtin_profile,
    plan_fleet,
    simulate_fleet,
    spare_capacity_whatif,
    with_spares,
)

DAY = builtin_profile("business-hours", 1000.0)
PLAN = plan_fleet(DAY, 40.0, headroom=0.2)


def _conserved(r: object) -> None:
    assert r.on_time + r.late + r.lost == pytest.approx(r.arrivals)  # type: ignore[attr-defined]


def test_ample_fleet_without_failures_meets_every_request() -> None:
    r = simulate_fleet(DAY, PLAN, mtbf_h=None, seed=1)
    assert r.seconds == 86_400 and r.failures == 0
    assert r.arrivals == pytest.approx(DAY.expected_requests(), rel=0.01)
    assert r.slo_attainment == 1.0 and r.late == 0 and r.lost == 0
    rises = sum(max(0, b - a) for a, b in zip(PLAN.replicas[:-1], PLAN.replicas[1:], strict=True))
    # replicas added for an hour are started restart_s (300 s) ahead, and paid for it
    assert r.replica_hours == pytest.approx(PLAN.replica_hours + rises * 300 / 3600)
    _conserved(r)


def test_deterministic_with_a_seed() -> None:
    a = simulate_fleet(DAY, PLAN, mtbf_h=6, restart_s=900, seed=4)
    b = simulate_fleet(DAY, PLAN, mtbf_h=6, restart_s=900, seed=4)
    c = simulate_fleet(DAY, PLAN, mtbf_h=6, restart_s=900, seed=5)
    assert a == b and a != c
    assert a.failures > 0 and a.down_replica_s > 0
    _conserved(a)


def test_outage_without_spare_loses_requests_and_n_plus_1_buys_them_back() -> None:
    flat = DemandProfile((100.0,) * 24)
    tight = plan_fleet(flat, 10.0)                       # exactly 10 replicas, no headroom
    outage = (Outage(start_s=3600, duration_s=600, replicas=1),)
    w = spare_capacity_whatif(flat, tight, spares=1, mtbf_h=None, outages=outage,
                              timeout_s=30, seed=2, usd_per_replica_hour=10.0)
    assert w.without.late + w.without.lost > 0
    assert w.without.lost > 0                            # a 10-minute deficit outlasts 30 s
    assert w.with_spares.lost == 0
    assert w.extra_replica_hours == 24 and w.extra_cost_usd == pytest.approx(240.0)
    assert w.usd_per_request_saved == pytest.approx(240.0 / (w.late_avoided + w.lost_avoided))


def test_total_outage_loses_what_arrives_after_the_timeout() -> None:
    flat = DemandProfile((50.0,) * 24)
    plan = plan_fleet(flat, 100.0)                       # one replica
    r = simulate_fleet(flat, plan, mtbf_h=None, timeout_s=10, seed=0, horizon_s=3600,
                       outages=(Outage(100, 300, 1),))
    assert r.min_up_replicas == 0
    # 300 s down at 50 rps: 15 000 arrive; those older than 10 s when it returns are lost.
    assert r.lost == pytest.approx(50 * 290, rel=0.05)
    _conserved(r)


def test_reactive_scaling_is_late_at_the_morning_ramp() -> None:
    ahead = simulate_fleet(DAY, PLAN, mtbf_h=None, restart_s=600, seed=3)
    late = simulate_fleet(DAY, PLAN, mtbf_h=None, restart_s=600, seed=3,
                          reactive_scaling=True)
    assert ahead.late == 0 and late.late > 0
    assert ahead.replica_hours > late.replica_hours      # starting ahead is paid


def test_series_per_minute() -> None:
    r = simulate_fleet(DAY, PLAN, mtbf_h=None, seed=0, horizon_s=3600, keep_series=True)
    assert len(r.series["arrivals"]) == 60
    assert sum(r.series["arrivals"]) == r.arrivals


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), mtbf=st.floats(0.5, 48.0), restart=st.floats(0, 3600))
def test_spares_never_make_it_worse(seed: int, mtbf: float, restart: float) -> None:
    flat = DemandProfile(tuple(float(60 + 5 * (h % 6)) for h in range(24)))
    plan = plan_fleet(flat, 10.0)
    kw = {"mtbf_h": mtbf, "restart_s": restart, "seed": seed, "horizon_s": 6 * 3600}
    base = simulate_fleet(flat, plan, **kw)  # type: ignore[arg-type]
    more = simulate_fleet(flat, with_spares(plan, 1), **kw)  # type: ignore[arg-type]
    assert more.lost <= base.lost + 1e-6
    assert more.late + more.lost <= base.late + base.lost + 1e-6
    _conserved(base)
    _conserved(more)
