"""capacity_for / utilization_for over a measured target, and how the bill takes the
derived utilization (what the analysis's pricing does)."""

from __future__ import annotations

import dataclasses

import pytest
from cap_fixtures import open_point

from acceval.capacity import capacity_for, utilization_for
from acceval.economics import Measured, compute_bill, cost_inputs_for
from acceval.results.runlog import LocalServerInfo
from acceval.run_result import TargetResult
from acceval.study import Study


def _study(demand: dict[str, object] | None, quota: int = 100) -> Study:
    return Study.model_validate({
        "name": "cap", "seed": 9,
        "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:1/v1", "model": "m"},
                     "platform": {"chips": 2}, "price": {"usd_per_hour": 3.0},
                     "availability": {"regions": ["eu-west-1"], "quota_replicas": quota,
                                      "lead_time_days": 2, "failover_region": "eu-west-1"}}],
        "slo": {"ttft_ms": 100},
        **({"demand": demand} if demand else {}),
    })


def _target() -> TargetResult:
    # TTFT 80 ms at 4 rps (pass), 160 ms at 8 rps (fail): 5 rps per replica within the SLO.
    pts = [open_point(i, r, t) for i, (r, t) in enumerate([(1, 20), (4, 80), (8, 160)])]
    return TargetResult(name="a", endpoint=None, platform={"chips": 2}, points=pts,
                        accuracy=pts[0].summary.accuracy,
                        local_server=LocalServerInfo(engine="mock", model=None, precision=None,
                                                     pid=None, startup_s=42.0))


DEMAND = {"profile": "builtin:flat", "peak_rps": 20, "headroom": 0.0}


def test_no_demand_no_capacity() -> None:
    assert capacity_for(_study(None), _target()) is None
    assert utilization_for(_study(None), _target()) is None


def test_flat_demand_sizes_from_the_interpolated_rate() -> None:
    cap = capacity_for(_study(DEMAND), _target())
    assert cap is not None and cap.plan is not None
    assert cap.max_rate.rate_rps == pytest.approx(5.0)
    assert cap.plan.replicas.tolist() == [4] * 24           # 20 rps / 5 rps
    assert cap.utilization == pytest.approx(1.0)
    assert cap.cost is not None
    assert cap.cost.usd_per_replica_hour == pytest.approx(6.0)   # 3 $/chip-h x 2 chips
    assert cap.availability.status == "at-risk"              # failover in the only region
    assert cap.what_if is not None
    assert cap.what_if.without.seed == 9                     # the study seed by default
    cap.result().model_dump_json()                           # result.json-ready


def test_headroom_lowers_utilization_and_quota_blocks() -> None:
    cap = capacity_for(_study({**DEMAND, "headroom": 0.5, "spares": 1}, quota=5), _target(),
                       simulate=False)
    assert cap is not None and cap.plan is not None and cap.what_if is None
    assert cap.plan.peak_replicas == 7                       # ceil(20 x 1.5 / 5) + 1
    assert cap.utilization == pytest.approx(4 / 7)
    assert cap.availability.status == "blocked"
    u = utilization_for(_study({**DEMAND, "headroom": 0.5, "spares": 1}), _target())
    assert u is not None and u.origin == "derived" and u.value == pytest.approx(4 / 7)


def test_bill_divides_by_the_derived_utilization() -> None:
    s = _study({**DEMAND, "headroom": 0.5, "spares": 1})
    t = _target()
    p = t.points[1]
    assert p.summary.duration_s is not None and p.summary.accuracy is not None
    ci = cost_inputs_for(s.targets[0], s, None, Measured(
        p.summary.duration_s, p.summary.requests, p.summary.accuracy.correct))
    assert ci is not None
    u = utilization_for(s, t)
    assert u is not None
    before = compute_bill(ci).cost_per_correct_usd
    after = compute_bill(dataclasses.replace(ci, utilization=u)).cost_per_correct_usd
    assert after == pytest.approx(before * 7 / 4)
