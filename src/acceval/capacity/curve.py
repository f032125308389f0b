"""The measured latency–load curve of one target, the largest rate that still meets the SLO
(goodput in DistServe's sense, per replica), and the batching trade-off.

Inputs are the ``PointResult`` objects of a run (duck-typed: ``level``, ``kind``,
``requested_rate_rps``, ``summary``), so this module never imports the result or metrics
packages (the study file imports :mod:`acceval.capacity.spec`, and those import the study).

Trusted points only: a point whose self-check failed (``summary.trusted`` False) stays on the
curve, marked, so it can be shown with its reason; the max rate, the sweep that reads it and
the batching table leave it out, and the max rate lists what it left out (``excluded``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from pydantic import Field

from acceval.loadgen.spec import family
from acceval.results.section import PointResult, Section
from acceval.units import number


class ExcludedPoint(Section):
    """A point left out of the curve's estimate because it was not trusted."""

    label: str
    rate_rps: float | None
    reason: str




Method = Literal["interpolated", "midpoint", "never-failed", "never-passed", "no-slo", "no-data"]


class MaxRateResult(Section):
    """The largest rate one replica serves within the SLO, and how it was found.

    ``low_rps``/``high_rps`` bracket it: the last passing and the first failing point
    (``high_rps`` None: no point failed, so ``rate_rps`` is only a lower bound).
    ``n_points`` counts the trusted points used; ``excluded`` lists the points left out as
    not trusted, with the reason."""

    rate_rps: float | None
    low_rps: float | None
    high_rps: float | None
    n_points: int  # trusted points judged
    method: Method
    note: str
    excluded: list[ExcludedPoint] = Field(default_factory=list)
    # The one load family the rate came from (open-loop arrivals first; capacity.family),
    # and its loop ("open" or "closed").
    family: str | None = None
    loop: str | None = None



RateBasis = Literal["offered", "achieved"]


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One load point on the curve.

    ``slo_ratio`` is the worst of value/bound over the SLO's metrics at its percentile, and of
    error_rate/max_error_rate: <= 1 passes. It is what the interpolation follows.
    ``trusted`` False: the point's self-check failed (``untrusted_reason`` says how); it is
    on the curve to be shown, never to be used."""

    rate_rps: float
    meets_slo: bool | None
    slo_ratio: float | None = None
    latency_ms: float | None = None      # the binding metric's percentile value
    binding_metric: str | None = None
    throughput_rps: float | None = None  # requests completed per second
    label: str = ""
    trusted: bool = True
    untrusted_reason: str | None = None
    kind: str = ""  # the load family (poisson, concurrency, ...); "" when not known


def trusted_only(curve: Iterable[CurvePoint]) -> list[CurvePoint]:
    """The points of ``curve`` whose self-check passed (or could not be made)."""
    return [c for c in curve if c.trusted]


def _slo_ratio(summary: Any) -> tuple[float | None, float | None, str | None]:
    slo = summary.slo
    worst: float | None = None
    latency: float | None = None
    metric: str | None = None
    for name, value in (summary.slo_values_ms or {}).items():
        bound = getattr(slo, name, None)
        if value is None or not bound:
            continue
        r = float(value) / float(bound)
        if worst is None or r > worst:
            worst, latency, metric = r, float(value), name
    err = summary.error_rate
    if err is not None and worst is not None:
        cap = float(slo.max_error_rate)
        r = (err / cap) if cap > 0 else (0.0 if err == 0 else math.inf)
        if r > worst:
            worst, metric = r, "error_rate"
    return worst, latency, metric


def curve_from_points(points: Iterable[PointResult], *,
                      rate: RateBasis = "offered") -> list[CurvePoint]:
    """The curve of one target, sorted by rate. ``offered`` uses the requested rate of open-loop
    points and the completed-request throughput of closed-loop (concurrency) points, which
    have no offered rate; ``achieved`` uses the completed-request throughput everywhere."""
    out: list[CurvePoint] = []
    for p in points:
        s = p.summary
        r = p.requested_rate_rps if rate == "offered" else None
        if r is None:
            r = s.request_throughput_rps
        if r is None or not math.isfinite(r) or r <= 0:
            continue
        ratio, latency, metric = _slo_ratio(s)
        trusted = bool(getattr(s, "trusted", getattr(s, "degraded", None) is not True))
        out.append(CurvePoint(float(r), s.meets_slo, ratio, latency, metric,
                              s.request_throughput_rps, p.label, trusted,
                              None if trusted else (s.untrusted_reason or "not trusted"),
                              str(p.kind)))
    return sorted(out, key=lambda c: c.rate_rps)


def max_rate_under_slo(curve: Sequence[CurvePoint]) -> MaxRateResult:
    """Interpolate between the last passing and the first failing trusted point.

    When both have an ``slo_ratio``, the rate where the ratio crosses 1 is found by linear
    interpolation (vLLM's serve_sla uses PCHIP over the same bracket); otherwise the midpoint
    of the bracket is taken. Points passing above the first failure (noise) are ignored, and
    the note says so: the estimate is conservative. Untrusted points take no part; they are
    listed in ``excluded`` and named in the note.
    """
    ordered = sorted(curve, key=lambda c: c.rate_rps)
    excluded = [ExcludedPoint(label=c.label, rate_rps=c.rate_rps,
                              reason=c.untrusted_reason or "not trusted")
                for c in ordered if not c.trusted]
    mr = _max_rate(trusted_only(ordered), untrusted=bool(excluded))
    if not excluded:
        return mr
    left_out = "; ".join(f"{e.label or f'{number(e.rate_rps)} rps'} ({e.reason})"
                         for e in excluded)
    return mr.model_copy(update={
        "excluded": excluded,
        "note": f"{mr.note}; {len(excluded)} point(s) not trusted and left out: {left_out}"})


def _max_rate(pts: list[CurvePoint], *, untrusted: bool) -> MaxRateResult:
    judged = [c for c in pts if c.meets_slo is not None]
    n = len(pts)
    if not pts:
        return MaxRateResult(rate_rps=None, low_rps=None, high_rps=None, n_points=0,
                             method="no-data",
                             note="no trusted load point with a rate" if untrusted
                             else "no load point with a rate")
    if not judged:
        best = max((c.throughput_rps or c.rate_rps) for c in pts)
        return MaxRateResult(rate_rps=best, low_rps=None, high_rps=None, n_points=n,
                             method="no-slo",
                             note="the study sets no SLO bound; the highest measured throughput "
                             f"of {n} points is used (saturation)")
    first_fail = next((i for i, c in enumerate(judged) if c.meets_slo is False), None)
    if first_fail is None:
        top = judged[-1]
        return MaxRateResult(rate_rps=top.rate_rps, low_rps=top.rate_rps, high_rps=None,
                             n_points=n, method="never-failed",
                             note=f"all {len(judged)} judged points met the SLO; "
                             f"{number(top.rate_rps)} rps is a lower bound (add higher load points "
                             "to find the limit)")
    fail = judged[first_fail]
    if first_fail == 0:
        return MaxRateResult(rate_rps=None, low_rps=0.0, high_rps=fail.rate_rps, n_points=n,
                             method="never-passed",
                             note=f"the lowest load point ({number(fail.rate_rps)} rps) "
                             "already misses the SLO")
    ok = judged[first_fail - 1]
    later = sum(1 for c in judged[first_fail + 1:] if c.meets_slo)
    noise = (f"; {later} point(s) above the first failure passed and were ignored"
             if later else "")
    lo_r, hi_r = ok.slo_ratio, fail.slo_ratio
    if lo_r is not None and hi_r is not None and lo_r <= 1.0 < hi_r:
        frac = (1.0 - lo_r) / (hi_r - lo_r)
        rate = ok.rate_rps + frac * (fail.rate_rps - ok.rate_rps)
        return MaxRateResult(rate_rps=rate, low_rps=ok.rate_rps, high_rps=fail.rate_rps,
                             n_points=n, method="interpolated",
                             note=f"linear in the SLO ratio between {number(ok.rate_rps)} rps "
                             f"(ratio {number(lo_r)}, pass) and {number(fail.rate_rps)} rps (ratio "
                             f"{number(hi_r)}, fail), {n} points{noise}")
    rate = (ok.rate_rps + fail.rate_rps) / 2
    return MaxRateResult(rate_rps=rate, low_rps=ok.rate_rps, high_rps=fail.rate_rps, n_points=n,
                         method="midpoint",
                         note=f"midpoint of {number(ok.rate_rps)} rps (pass) and "
                         f"{number(fail.rate_rps)} rps (fail); no SLO ratio to interpolate, "
                         f"{n} points{noise}")


@dataclass(frozen=True, slots=True)
class BatchStep:
    """One level of a load family against the one below it."""

    concurrency: float
    throughput_rps: float | None
    gain: float | None              # throughput / previous level's throughput - 1
    ttft_p50_ms: float | None
    e2e_p50_ms: float | None
    wait_added_ms: float | None     # TTFT p50 minus the family's lowest TTFT p50 (>= 0)
    ms_per_extra_rps: float | None  # E2E p50 added per rps gained over the previous level
    meets_slo: bool | None
    family: str = "concurrency"     # the load kind all steps of one table share
    level: float | None = None      # the family's own axis: concurrency, or offered req/s
    label: str = ""



def _concurrency(p: Any) -> float | None:
    if family(p.kind).loop == "closed":
        return float(p.level)
    # Open loop: Little's law, the mean number in flight is the effective concurrency.
    v = p.summary.mean_in_flight
    return None if v is None else float(v)


def _trusted_point(p: Any) -> bool:
    s = p.summary
    return bool(getattr(s, "trusted", getattr(s, "degraded", None) is not True))


def _steps(family: str, points: list[Any]) -> list[BatchStep]:
    # One point per level (the first measured, by index): a repeated level would show as a
    # step that gained nothing, i.e. a knee that is not there.
    by_level: dict[float, Any] = {}
    for p in sorted(points, key=lambda p: p.index):
        by_level.setdefault(float(p.level), p)
    rows = sorted(((lv, c, p) for lv, p in by_level.items()
                   if (c := _concurrency(p)) is not None), key=lambda x: x[0])
    ttfts = [t for _, _, p in rows if (t := p.summary.ttft_ms.p50) is not None]
    # The least median TTFT of the family is its no-queue service time: waiting added is
    # measured from it, so noise at the lowest level cannot make later waits negative.
    base = min(ttfts) if ttfts else None
    out: list[BatchStep] = []
    prev: tuple[float | None, float | None] = (None, None)
    for level, c, p in rows:
        s = p.summary
        tput, ttft, e2e = s.request_throughput_rps, s.ttft_ms.p50, s.e2e_ms.p50
        gain = ms_per = None
        prev_tput, prev_e2e = prev
        if tput is not None and prev_tput:
            gain = tput / prev_tput - 1.0
            if e2e is not None and prev_e2e is not None and tput > prev_tput:
                ms_per = (e2e - prev_e2e) / (tput - prev_tput)
        wait = None if ttft is None or base is None else ttft - base
        out.append(BatchStep(c, tput, gain, ttft, e2e, wait, ms_per, s.meets_slo, family,
                             level, p.label))
        prev = (tput, e2e)
    return out


def batching_families(points: Iterable[PointResult]) -> dict[str, list[BatchStep]]:
    """The batching table of each load family (``kind``) with at least one trusted point.

    Levels are compared within one family only: a closed-loop level and an open-loop rate
    are different experiments (one fixes what is in flight, the other what arrives), so
    their throughputs are not steps of one curve. Untrusted points are left out. Closed-loop
    steps are ordered by concurrency, open-loop ones by offered rate."""
    fams: dict[str, list[Any]] = {}
    for p in points:
        if _trusted_point(p):
            fams.setdefault(str(p.kind), []).append(p)
    out = {k: _steps(k, v) for k, v in fams.items()}
    return {k: v for k, v in out.items() if v}


def batching_tradeoff(points: Iterable[PointResult],
                      family: str | None = None) -> list[BatchStep]:
    """Throughput gained against queueing wait added as concurrency grows, in one load family.

    ``family`` picks the load kind; by default the closed-loop family when it has two levels
    or more (its level *is* the concurrency), else the family with the most levels. Closed-loop
    points use their concurrency level; open-loop points their measured mean number in flight.
    The wait added is the rise in median TTFT over the family's lowest median TTFT: time a
    request spends queued or sharing the chip before its first token. Untrusted points are
    left out (:func:`batching_families`).
    """
    fams = batching_families(points)
    if family is not None:
        return fams.get(family, [])
    if not fams:
        return []
    if len(fams.get("concurrency", [])) >= 2:
        return fams["concurrency"]
    return max(fams.values(), key=len)


def required_gain(prev_level: float, level: float, min_gain: float) -> float:
    """The throughput gain a step from ``prev_level`` to ``level`` must show to count as
    still gaining: ``min_gain`` per doubling of the level, ``(1 + min_gain) ** log2(ratio) - 1``.
    A step of a few percent (sweep points close together) is thus not held to the gain of a
    doubling, which would read as a knee that is not there."""
    if prev_level <= 0 or level <= prev_level:
        return min_gain
    return float((1.0 + min_gain) ** math.log2(level / prev_level) - 1.0)


def batching_knee(steps: Sequence[BatchStep], min_gain: float = 0.05) -> BatchStep | None:
    """The highest level reached while every step up still gained at least ``min_gain``
    throughput per doubling of the level (:func:`required_gain`) and met the SLO (None when
    there are no steps). Beyond it, more concurrency buys mostly waiting. ``steps`` are one
    family's (:func:`batching_tradeoff`); mixing families raises ValueError."""
    if not steps:
        return None
    if len({s.family for s in steps}) > 1:
        raise ValueError("batching_knee compares levels of one load family; got "
                         + ", ".join(sorted({s.family for s in steps})))
    knee = steps[0]
    for prev, s in pairwise(steps):
        lo = prev.level if prev.level is not None else prev.concurrency
        hi = s.level if s.level is not None else s.concurrency
        if s.gain is None or s.gain < required_gain(lo, hi, min_gain) or s.meets_slo is False:
            break
        knee = s
    return knee
