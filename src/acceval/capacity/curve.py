"""The measured latency–load curve of one target, the largest rate that still meets the SLO
(goodput in DistServe's sense, per replica), and the batching trade-off.

Inputs are the ``PointResult`` objects of a run (duck-typed: ``level``, ``kind``,
``requested_rate_rps``, ``summary``), so this module never imports the result or metrics
packages (the study file imports :mod:`acceval.capacity.spec`, and those import the study).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from acceval.loadgen.spec import family
from acceval.results.result import PointResult

RateBasis = Literal["offered", "achieved"]
Method = Literal["interpolated", "midpoint", "never-failed", "never-passed", "no-slo", "no-data"]


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One load point on the curve.

    ``slo_ratio`` is the worst of value/bound over the SLO's metrics at its percentile, and of
    error_rate/max_error_rate: <= 1 passes. It is what the interpolation follows."""

    rate_rps: float
    meets_slo: bool | None
    slo_ratio: float | None = None
    latency_ms: float | None = None      # the binding metric's percentile value
    binding_metric: str | None = None
    throughput_rps: float | None = None  # requests completed per second
    label: str = ""


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
        out.append(CurvePoint(float(r), s.meets_slo, ratio, latency, metric,
                              s.request_throughput_rps, p.label))
    return sorted(out, key=lambda c: c.rate_rps)


@dataclass(frozen=True, slots=True)
class MaxRate:
    """The largest rate one replica serves within the SLO, and how it was found.

    ``low_rps``/``high_rps`` bracket it: the last passing and the first failing point
    (``high_rps`` None: no point failed, so ``rate_rps`` is only a lower bound)."""

    rate_rps: float | None
    low_rps: float | None
    high_rps: float | None
    n_points: int
    method: Method
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def max_rate_under_slo(curve: Sequence[CurvePoint]) -> MaxRate:
    """Interpolate between the last passing and the first failing point.

    When both have an ``slo_ratio``, the rate where the ratio crosses 1 is found by linear
    interpolation (vLLM's serve_sla uses PCHIP over the same bracket); otherwise the midpoint
    of the bracket is taken. Points passing above the first failure (noise) are ignored, and
    the note says so: the estimate is conservative.
    """
    pts = sorted(curve, key=lambda c: c.rate_rps)
    judged = [c for c in pts if c.meets_slo is not None]
    n = len(pts)
    if not pts:
        return MaxRate(None, None, None, 0, "no-data", "no load point with a rate")
    if not judged:
        best = max((c.throughput_rps or c.rate_rps) for c in pts)
        return MaxRate(best, None, None, n, "no-slo",
                       f"the study sets no SLO bound; the highest measured throughput of {n} "
                       "points is used (saturation)")
    first_fail = next((i for i, c in enumerate(judged) if c.meets_slo is False), None)
    if first_fail is None:
        top = judged[-1]
        return MaxRate(top.rate_rps, top.rate_rps, None, n, "never-failed",
                       f"all {len(judged)} judged points met the SLO; {top.rate_rps:.4g} rps is a "
                       "lower bound (add higher load points to find the limit)")
    fail = judged[first_fail]
    if first_fail == 0:
        return MaxRate(None, 0.0, fail.rate_rps, n, "never-passed",
                       f"the lowest load point ({fail.rate_rps:.4g} rps) already misses the SLO")
    ok = judged[first_fail - 1]
    later = sum(1 for c in judged[first_fail + 1:] if c.meets_slo)
    noise = (f"; {later} point(s) above the first failure passed and were ignored"
             if later else "")
    lo_r, hi_r = ok.slo_ratio, fail.slo_ratio
    if lo_r is not None and hi_r is not None and lo_r <= 1.0 < hi_r:
        frac = (1.0 - lo_r) / (hi_r - lo_r)
        rate = ok.rate_rps + frac * (fail.rate_rps - ok.rate_rps)
        return MaxRate(rate, ok.rate_rps, fail.rate_rps, n, "interpolated",
                       f"linear in the SLO ratio between {ok.rate_rps:.4g} rps (ratio "
                       f"{lo_r:.3g}, pass) and {fail.rate_rps:.4g} rps (ratio {hi_r:.3g}, fail), "
                       f"{n} points{noise}")
    rate = (ok.rate_rps + fail.rate_rps) / 2
    return MaxRate(rate, ok.rate_rps, fail.rate_rps, n, "midpoint",
                   f"midpoint of {ok.rate_rps:.4g} rps (pass) and {fail.rate_rps:.4g} rps (fail); "
                   f"no SLO ratio to interpolate, {n} points{noise}")


@dataclass(frozen=True, slots=True)
class BatchStep:
    """One concurrency level against the one below it."""

    concurrency: float
    throughput_rps: float | None
    gain: float | None              # throughput / previous level's throughput - 1
    ttft_p50_ms: float | None
    e2e_p50_ms: float | None
    wait_added_ms: float | None     # TTFT p50 minus TTFT p50 at the lowest level
    ms_per_extra_rps: float | None  # E2E p50 added per rps gained over the previous level
    meets_slo: bool | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _concurrency(p: Any) -> float | None:
    if family(p.kind).loop == "closed":
        return float(p.level)
    # Open loop: Little's law, the mean number in flight is the effective concurrency.
    v = p.summary.mean_in_flight
    return None if v is None else float(v)


def batching_tradeoff(points: Iterable[PointResult]) -> list[BatchStep]:
    """Throughput gained against queueing wait added as concurrency grows.

    Closed-loop points use their concurrency level; open-loop points their measured mean
    number in flight. The wait added is the rise in median TTFT over the lowest level: time a
    request spends queued or sharing the chip before its first token.
    """
    rows = sorted(((c, p) for p in points if (c := _concurrency(p)) is not None),
                  key=lambda x: x[0])
    out: list[BatchStep] = []
    base_ttft: float | None = None
    prev: tuple[float | None, float | None] = (None, None)
    for i, (c, p) in enumerate(rows):
        s = p.summary
        tput, ttft, e2e = s.request_throughput_rps, s.ttft_ms.p50, s.e2e_ms.p50
        if i == 0:
            base_ttft = ttft
        gain = ms_per = None
        prev_tput, prev_e2e = prev
        if tput is not None and prev_tput:
            gain = tput / prev_tput - 1.0
            if e2e is not None and prev_e2e is not None and tput > prev_tput:
                ms_per = (e2e - prev_e2e) / (tput - prev_tput)
        wait = None if ttft is None or base_ttft is None else ttft - base_ttft
        out.append(BatchStep(c, tput, gain, ttft, e2e, wait, ms_per, s.meets_slo))
        prev = (tput, e2e)
    return out


def batching_knee(steps: Sequence[BatchStep], min_gain: float = 0.05) -> BatchStep | None:
    """The highest level reached while every step up still gained at least ``min_gain``
    throughput and met the SLO (None when there are no steps). Beyond it, more concurrency
    buys mostly waiting."""
    if not steps:
        return None
    knee = steps[0]
    for s in steps[1:]:
        if s.gain is None or s.gain < min_gain or s.meets_slo is False:
            break
        knee = s
    return knee
