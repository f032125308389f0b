"""Capacity from one load family at a time, open-loop arrivals first (capacity.family).

The queueing case: a server with two slots and a 50 ms service time. Closed-loop points
(1, 2, 4 in flight) all pass the 400 ms TTFT bound up to 39 req/s, since a closed loop never
lets a queue build past its concurrency. Poisson arrivals queue: the p95 TTFT at 10, 20 and
30 req/s is the M/M/2 one (acceval.capacity.mmc: 73, 145 and 305 ms) and 40 req/s, the
server's whole service rate, misses the bound. Read together, the curve's first failure is
at 40 req/s and the closed-loop pass at 39 req/s sits just below it: 39 req/s. Poisson
arrivals alone give about 30.
"""

from __future__ import annotations

import math

import pytest
from cap_fixtures import closed_point, open_point

from acceval.capacity import curve_from_points, max_rate_under_slo, mmc
from acceval.capacity.curve import CurvePoint
from acceval.capacity.family import capacity_rate, chosen_family
from acceval.capacity.sweep import next_rate
from acceval.study import SLO

SLO_400 = SLO(ttft_ms=400.0)
SERVICE_S = 0.05


def _p95_ttft_ms(rate_rps: float) -> float:
    """The M/M/2 p95 of the time to first token (service plus the wait's 95th percentile)."""
    q = mmc(rate_rps, SERVICE_S, 2)
    wait = 0.0 if q.p_wait <= 0.05 else math.log(q.p_wait / 0.05) / (2 / SERVICE_S - rate_rps)
    return 1000 * (SERVICE_S + wait)


def _queueing_case() -> list[CurvePoint]:
    closed = [closed_point(i, c, ttft, 5.0, slo=SLO_400)
              for i, (c, ttft) in enumerate([(1, 50.0), (2, 50.0), (4, 97.0)])]
    opened = [open_point(10 + i, r, _p95_ttft_ms(r), slo=SLO_400) for i, r in
              enumerate([10.0, 20.0, 30.0])]
    opened.append(open_point(13, 40.0, 1500.0, slo=SLO_400))  # saturated: the queue grows
    return curve_from_points(closed + opened)


def test_the_queueing_case_reads_capacity_from_the_open_loop_points() -> None:
    curve = _queueing_case()
    mixed = max_rate_under_slo(curve)
    assert mixed.rate_rps == pytest.approx(39, abs=1)   # what reading both together gave
    mr = capacity_rate(curve)
    assert mr.family == "poisson" and mr.loop == "open"
    assert mr.rate_rps == pytest.approx(30, abs=2)
    assert (mr.low_rps, mr.high_rps) == (30.0, 40.0)
    assert "from the poisson (open-loop) points only" in mr.note
    assert "concurrency (closed-loop) points alone would give at least 39.2 rps" in mr.note


def test_closed_loop_is_used_only_when_no_open_loop_point_is_trusted() -> None:
    closed = [closed_point(i, c, 50.0, 5.0) for i, c in enumerate([1, 2])]
    late = open_point(5, 30.0, 50.0, late_ms=30)   # schedule lag 30 ms: not trusted
    curve = curve_from_points([*closed, late])
    assert chosen_family(curve) == "concurrency"
    mr = capacity_rate(curve)
    assert mr.family == "concurrency" and mr.loop == "closed"
    assert "no open-loop point was trusted and judged" in mr.note
    assert "poisson (open-loop) points have no trusted judged point" in mr.note


def test_an_untrusted_first_point_is_said() -> None:
    pts = [open_point(0, 10.0, 50.0, late_ms=30), open_point(1, 20.0, 60.0)]
    mr = capacity_rate(curve_from_points(pts))
    assert "could not start at its lowest point poisson=10: not trusted" in mr.note


def test_a_sweep_that_cannot_start_says_why() -> None:
    # Only an untrusted point to start from: the search stops and names the reason.
    d = next_rate(curve_from_points([open_point(0, 10.0, 50.0, late_ms=30)]))
    assert (d.rate_rps, d.why) == (None, "untrusted")


def test_the_sweep_brackets_within_the_open_loop_family() -> None:
    # A closed-loop pass at 39 rps must not make the search bisect above the open-loop
    # failure at 40 from it: the bracket is the Poisson points' 30–40.
    d = next_rate(_queueing_case())
    assert d.why == "bisect" and d.rate_rps == pytest.approx(35.0)
