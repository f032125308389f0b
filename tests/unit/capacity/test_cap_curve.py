"""Max rate under the SLO from measured points (built through summarize_point), and the
batching trade-off."""

from __future__ import annotations

import math

import pytest
from cap_fixtures import closed_point, open_point
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.capacity import (
    CurvePoint,
    batching_families,
    batching_knee,
    batching_tradeoff,
    curve_from_points,
    max_rate_under_slo,
    trusted_only,
)
from acceval.capacity.curve import required_gain
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


# --- trusted points only -------------------------------------------------------------------

def test_an_untrusted_failing_point_does_not_cap_the_max_rate() -> None:
    # 20 rps: the client sent every other request 30 ms late, so its response TTFT (110 ms)
    # fails the 100 ms bound and the self-check flags it. 10 and 40 rps are clean and pass.
    pts = [open_point(0, 10, 50), open_point(1, 20, 80, late_ms=30), open_point(2, 40, 60)]
    assert pts[1].summary.meets_slo is False and pts[1].summary.trusted is False
    c = curve_from_points(pts)
    assert [p.trusted for p in c] == [True, False, True]     # shown, marked
    assert c[1].untrusted_reason is not None and "schedule lag" in c[1].untrusted_reason
    m = max_rate_under_slo(c)
    assert (m.method, m.rate_rps, m.n_points) == ("never-failed", 40.0, 2)
    assert [(e.label, e.rate_rps) for e in m.excluded] == [("poisson=20", 20.0)]
    assert "schedule lag" in m.excluded[0].reason
    assert "1 point(s) not trusted and left out: poisson=20 (schedule lag" in m.note
    m.model_dump_json()                                      # result.json-ready
    assert m.model_dump()["excluded"][0]["label"] == "poisson=20"
    assert trusted_only(c) == [c[0], c[2]]


def test_only_untrusted_points_give_no_rate() -> None:
    m = max_rate_under_slo(curve_from_points([open_point(0, 20, 50, late_ms=30)]))
    assert m.method == "no-data" and m.rate_rps is None and len(m.excluded) == 1
    assert m.note.startswith("no trusted load point")


def test_saturation_of_the_capacity_stage_ignores_untrusted_points() -> None:
    from acceval.capacity import capacity_for
    from acceval.run_result import TargetResult
    from acceval.study import Study

    study = Study.model_validate({
        "name": "cap", "seed": 1,
        "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:1/v1",
                                                 "model": "m"}}],
        "slo": {"ttft_ms": 100}, "demand": {"profile": "builtin:flat", "peak_rps": 10}})
    pts = [open_point(0, 10, 50), open_point(1, 80, 60, late_ms=30)]
    cap = capacity_for(study, TargetResult(name="a", endpoint=None, platform={}, points=pts),
                       simulate=False)
    assert cap is not None and cap.max_rate.rate_rps == 10.0
    assert cap.saturation_rps == pytest.approx(pts[0].summary.request_throughput_rps)


_rates = st.lists(st.sampled_from([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]), min_size=1, max_size=6,
                  unique=True)


@settings(max_examples=60, deadline=None)
@given(_rates, st.lists(st.floats(0.2, 3.0), min_size=6, max_size=6),
       st.lists(st.tuples(st.floats(0.5, 40.0), st.booleans(), st.floats(0.1, 5.0)),
                max_size=4))
def test_untrusted_points_never_change_the_estimate(rates, ratios, noise) -> None:
    clean = [CurvePoint(r, q <= 1.0, q, label=f"{r}") for r, q in zip(rates, ratios,
                                                                         strict=False)]
    bad = [CurvePoint(r, ok, q, label=f"bad {r}", trusted=False, untrusted_reason="stall")
           for r, ok, q in noise]
    base, mixed = max_rate_under_slo(clean), max_rate_under_slo(clean + bad)
    assert (mixed.rate_rps, mixed.low_rps, mixed.high_rps, mixed.method, mixed.n_points) == (
        base.rate_rps, base.low_rps, base.high_rps, base.method, base.n_points)
    assert len(mixed.excluded) == len(bad) and base.excluded == []


# --- batching: one family, trusted points, no negative waits, no false knee -----------------

def test_batching_never_mixes_load_families() -> None:
    closed = [closed_point(i, c, t, 30) for i, (c, t) in enumerate([(1, 20), (2, 22), (4, 30)])]
    opened = [open_point(10 + i, r, 25) for i, r in enumerate([2.0, 5.0, 10.0])]
    fams = batching_families(closed + opened)
    assert set(fams) == {"concurrency", "poisson"}
    assert [s.level for s in fams["concurrency"]] == [1, 2, 4]
    assert [s.level for s in fams["poisson"]] == [2.0, 5.0, 10.0]
    assert all(s.family == "poisson" for s in fams["poisson"])
    # The default table is the closed-loop one; an open-loop point is not a concurrency step.
    assert [s.label for s in batching_tradeoff(opened + closed)] == [
        "concurrency=1", "concurrency=2", "concurrency=4"]
    assert batching_tradeoff(opened)[0].family == "poisson"
    assert batching_tradeoff(closed, family="gamma") == []
    with pytest.raises(ValueError, match="one load family"):
        batching_knee(fams["concurrency"] + fams["poisson"])


def test_batching_leaves_untrusted_points_out() -> None:
    pts = [open_point(i, r, 25, late_ms=30 if r == 4.0 else 0.0)
           for i, r in enumerate([2.0, 4.0, 8.0])]
    assert [s.level for s in batching_tradeoff(pts)] == [2.0, 8.0]


def test_noise_at_the_lowest_level_gives_no_negative_wait() -> None:
    # Median TTFT 25 ms at one in flight but 21 ms at two: noise, not negative queueing.
    pts = [closed_point(i, c, t, 30) for i, (c, t) in enumerate([(1, 25), (2, 21), (4, 40)])]
    steps = batching_tradeoff(pts)
    assert [s.wait_added_ms for s in steps] == pytest.approx([4.0, 0.0, 19.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(5.0, 200.0), min_size=2, max_size=5))
def test_waits_added_are_never_negative(ttfts) -> None:
    pts = [closed_point(i, 2 ** i, t, 30, n=8) for i, t in enumerate(ttfts)]
    steps = batching_tradeoff(pts)
    assert all(s.wait_added_ms is not None and s.wait_added_ms >= 0 for s in steps)
    assert min(s.wait_added_ms or 0.0 for s in steps) == 0.0


def test_closely_spaced_rates_are_no_knee() -> None:
    # An open-loop family whose throughput follows the offered rate (a sweep bisecting
    # 7.0 -> 7.3 -> 7.5 rps): each step gains ~3-4 %, which is all a 3-4 % step can gain.
    pts = [open_point(i, r, 25) for i, r in enumerate([1.0, 2.0, 4.0, 7.0, 7.3, 7.5])]
    steps = batching_tradeoff(pts)
    assert all(s.gain is None or s.gain < 0.05 for s in steps[4:])
    knee = batching_knee(steps)
    assert knee is steps[-1]                 # still gaining at the highest level measured
    assert required_gain(1, 2, 0.05) == pytest.approx(0.05)
    assert required_gain(7.0, 7.3, 0.05) == pytest.approx(1.05 ** math.log2(7.3 / 7) - 1)
