"""The load sweep's search against a fake latency curve: it brackets the SLO limit, bisects,
stops on its budgets, and reports every run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from acceval.capacity.curve import CurvePoint
from acceval.capacity.sweep import MAX_UNTRUSTED_TRIES, Decision, next_rate, search

LIMIT = 7.3  # the fake target meets the SLO up to this rate


def fake(rate: float) -> CurvePoint:
    ratio = rate / LIMIT  # latency / bound grows with the rate
    return CurvePoint(rate, ratio <= 1.0, ratio, ratio * 100.0, "ttft_ms", rate, f"{rate}")


def run_search(initial: list[float], *, clock: Callable[[], float] | None = None,
               **kw: float) -> tuple[list[float], object]:
    measured: list[float] = []

    async def measure(rate: float) -> CurvePoint:
        measured.append(rate)
        return fake(rate)

    args = {"max_steps": 6, "point_s": 1.0, "max_s": 1e9, "rel_tol": 0.05, **kw}
    extra = {"clock": clock} if clock else {}
    out = asyncio.run(search(measure, [fake(r) for r in initial], **args, **extra))  # type: ignore[arg-type]
    return measured, out


def test_bisects_between_the_last_pass_and_the_first_fail() -> None:
    measured, out = run_search([2.0, 4.0, 16.0])
    assert measured[:3] == [10.0, 7.0, 8.5]  # midpoints of (4,16), (4,10), (7,10)
    mr = out.max_rate  # type: ignore[attr-defined]
    assert mr.low_rps <= LIMIT <= mr.high_rps
    assert out.runs == len(measured) <= 6  # type: ignore[attr-defined]
    # the final estimate interpolates in the SLO ratio inside the bracket: exact on this line
    assert mr.rate_rps == pytest.approx(LIMIT, rel=1e-9)


def test_grows_while_every_point_passes_then_bisects() -> None:
    measured, out = run_search([1.0, 2.0], max_steps=4)
    assert measured[:3] == [4.0, 8.0, 6.0]
    assert out.stopped_by == "max_steps"  # type: ignore[attr-defined]
    assert out.max_rate.method == "interpolated"  # type: ignore[attr-defined]


def test_shrinks_when_the_lowest_point_already_fails() -> None:
    assert next_rate([fake(20.0), fake(40.0)]).rate_rps == 10.0
    measured, _ = run_search([20.0], max_steps=3)
    assert measured == [10.0, 5.0, 7.5]


def test_stops_when_the_bracket_is_narrow() -> None:
    d = next_rate([fake(7.2), fake(7.4)], rel_tol=0.05)
    assert d.rate_rps is None and d.why == "converged"
    measured, out = run_search([7.0, 7.5], rel_tol=0.1)
    assert measured == [] and out.stopped_by == "converged"  # type: ignore[attr-defined]


def test_caps_growth_at_max_rate() -> None:
    d = next_rate([fake(1.0), fake(5.0)], max_rate_rps=6.0)
    assert d.rate_rps == 6.0 and d.why == "grow"
    d = next_rate([fake(1.0), fake(6.0)], max_rate_rps=6.0)
    assert d.rate_rps is None and d.why == "at-max-rate"


def test_no_slo_means_nothing_to_search() -> None:
    pts = [CurvePoint(r, None, None, None, None, r) for r in (1.0, 2.0)]
    assert next_rate(pts).why == "no-slo"


def test_time_budget_stops_before_a_step_that_would_overrun() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 2.0  # every look at the clock: 2 s later
        return now[0]

    measured, out = run_search([2.0, 4.0, 16.0], clock=clock, max_s=9.0, point_s=1.0)
    assert out.stopped_by == "max_s"  # type: ignore[attr-defined]
    assert 1 <= len(measured) < 6


def untrusted(rate: float, meets: bool = False) -> CurvePoint:
    return CurvePoint(rate, meets, 2.0 if not meets else 0.5, 200.0, "ttft_ms", rate,
                      f"{rate}", trusted=False, untrusted_reason="client event loop stalled")


def test_an_untrusted_failure_is_no_bracket() -> None:
    # 20 rps failed only because the client stalled: the search grows past it from 40.
    d = next_rate([fake(1.0), untrusted(2.0), fake(4.0)])
    assert (d.rate_rps, d.why) == (8.0, "grow")
    # ... and an untrusted pass does not grow it.
    d = next_rate([fake(1.0), untrusted(2.0, meets=True)])
    assert (d.rate_rps, d.why) == (2.0, "grow")


def test_an_untrusted_rate_is_tried_once_more_then_the_search_stops() -> None:
    once = [fake(4.0), fake(16.0), untrusted(10.0)]
    assert next_rate(once) == Decision(10.0, "bisect")
    twice = [*once, untrusted(10.0)]
    assert next_rate(twice) == Decision(None, "untrusted")
    assert MAX_UNTRUSTED_TRIES == 2


def test_search_records_trust_and_retries_a_stalled_step() -> None:
    calls: list[float] = []

    async def measure(rate: float) -> CurvePoint:
        calls.append(rate)
        return untrusted(rate) if len(calls) == 1 else fake(rate)

    out = asyncio.run(search(measure, [fake(4.0), fake(16.0)], max_steps=3, point_s=1.0,
                             max_s=1e9))
    assert calls[:2] == [10.0, 10.0]                       # the stalled step, measured again
    assert [s.trusted for s in out.steps] == [False, True, True]
    assert out.steps[0].untrusted_reason == "client event loop stalled"
    assert out.max_rate is not None and out.max_rate.excluded[0].rate_rps == 10.0
