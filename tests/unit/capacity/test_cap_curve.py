"""Max rate under the SLO from measured points (built through summarize_point), and the
batching trade-off."""

from __future__ import annotations

import pytest
from cap_fixtures import closed_point, open_point

from acceval.capacity import (
    CurvePoint,
    batching_knee,
    batching_tradeoff,
    curve_from_points,
    max_rate_under_slo,
)
from acceval.study import SLO


def _curve(pairs: list[tuple[float, float]], **kw: object) -> list[CurvePoint]:
    return curve_from_points([open_point(i, r, t, **kw)  # type: ignore[arg-type]
                              for i, (r, t) in enumerate(pairs)])


def test_interpolates_where_the_slo_ratio_crosses_one() -> None:
    # TTFT bound 100 ms: 80 ms at 4 rps passes (0.8), 160 ms at 8 rps fails (1.6).
    c = _curve([(1, 20), (2, 40), (4, 80), (8, 160), (16, 400)])
    m = max_rate_under_slo(c)
    assert m.method == "interpolated"
    assert (m.low_rps, m.high_rps, m.n_points) == (4.0, 8.0, 5)
    assert m.rate_rps == pytest.approx(4 + (1 - 0.8) / (1.6 - 0.8) * 4)   # 5.0
    assert "5 points" in m.note


def test_offered_rate_of_open_loop_points_is_the_axis() -> None:
    c = _curve([(2, 40), (4, 80)])
    assert [p.rate_rps for p in c] == [2.0, 4.0]
    assert c[0].binding_metric == "ttft_ms" and c[0].slo_ratio == pytest.approx(0.4)
    assert c[0].throughput_rps is not None


def test_errors_fail_a_point_and_the_ratio_says_so() -> None:
    slo = SLO(ttft_ms=100.0, max_error_rate=0.05)
    c = _curve([(1, 20), (2, 20)], slo=slo) + curve_from_points(
        [open_point(3, 4, 20, slo=slo, errors=8)])
    m = max_rate_under_slo(c)
    bad = c[-1]
    assert bad.meets_slo is False and bad.binding_metric == "error_rate"
    assert m.method == "interpolated" and 2 < (m.rate_rps or 0) < 4


def test_never_failed_is_a_lower_bound() -> None:
    m = max_rate_under_slo(_curve([(1, 10), (2, 20)]))
    assert (m.method, m.rate_rps, m.high_rps) == ("never-failed", 2.0, None)
    assert "lower bound" in m.note


def test_never_passed_gives_no_rate() -> None:
    m = max_rate_under_slo(_curve([(1, 200), (2, 300)]))
    assert m.method == "never-passed" and m.rate_rps is None and m.high_rps == 1.0


def test_midpoint_without_ratios_and_noise_is_ignored() -> None:
    pts = [CurvePoint(1, True), CurvePoint(2, False), CurvePoint(3, True)]
    m = max_rate_under_slo(pts)
    assert m.method == "midpoint" and m.rate_rps == 1.5
    assert "1 point(s) above the first failure passed" in m.note


def test_no_slo_uses_saturation_and_no_points_say_so() -> None:
    m = max_rate_under_slo([CurvePoint(1, None, throughput_rps=0.9),
                            CurvePoint(5, None, throughput_rps=3.0)])
    assert m.method == "no-slo" and m.rate_rps == 3.0
    assert max_rate_under_slo([]).method == "no-data"


def test_batching_tradeoff_and_knee() -> None:
    pts = [closed_point(i, c, t, 30) for i, (c, t) in
           enumerate([(1, 20), (2, 22), (4, 30), (8, 60), (16, 130)])]
    steps = batching_tradeoff(pts)
    assert [s.concurrency for s in steps] == [1, 2, 4, 8, 16]
    assert steps[0].gain is None and steps[0].wait_added_ms == 0
    # c=1: 40 requests of 50 ms back to back (20 rps); c=2: 20 rounds of 52 ms
    assert steps[1].gain == pytest.approx(2 * 50 / 52 - 1, rel=1e-6)
    assert steps[3].wait_added_ms == pytest.approx(40.0)
    assert steps[4].meets_slo is False and steps[4].gain is not None and steps[4].gain < 0
    knee = batching_knee(steps, min_gain=0.1)
    assert knee is not None and knee.concurrency == 8
    assert batching_knee(steps, min_gain=0.5) is not None
    assert batching_knee(steps, min_gain=0.5).concurrency == 4  # type: ignore[union-attr]
    assert batching_knee([]) is None
