"""Workflow metrics: pure functions over counts and per-episode values (docs/agents.md).

- a rate with its 95 % Wilson interval (:func:`rate`);
- pass^k over repeated trials, τ-bench's definition (:func:`pass_hat_k`);
- per-step success fitted to the completion curve, completion(n) = p^n (:func:`per_step_success`);
- summaries of steps, tokens, latency and recovery times (:func:`stats`);
- the interval of a cost per correct workflow from the completion's (:func:`per_correct_interval`).

A metric with nothing to count is ``None``, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from acceval.metrics import wilson_interval
from acceval.results.section import Section

#: χ²(1) at 95 %: the likelihood-ratio interval of the per-step success.
_CHI2_95 = 3.841458820694124


class RateResult(Section):
    """k of n, with its 95 % Wilson interval (None when n == 0)."""

    k: int
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None


def rate(k: int, n: int) -> RateResult:
    """k of n, with the 95 % Wilson interval (all None when n == 0)."""
    if n <= 0:
        return RateResult(k=k, n=n, value=None, ci_low=None, ci_high=None)
    lo, hi = wilson_interval(k, n)
    return RateResult(k=k, n=n, value=k / n, ci_low=lo, ci_high=hi)


def per_correct_interval(per_attempt_usd: float | None, completion: RateResult
                         ) -> tuple[float, float] | None:
    """The cost per correct workflow's 95 % interval: the cost per attempt over the
    completion interval's high and low ends (inf where an end is 0); None without either."""
    if per_attempt_usd is None or completion.ci_low is None or completion.ci_high is None:
        return None
    return (_div(per_attempt_usd, completion.ci_high), _div(per_attempt_usd, completion.ci_low))


def _div(a: float, b: float) -> float:
    return a / b if b > 0 else float("inf")


def pass_hat_k(tasks: Sequence[tuple[int, int]], k: int) -> float | None:
    """pass^k = mean over tasks of C(c, k) / C(n, k): the chance that k trials of a task,
    drawn without replacement from its n, all succeed (τ-bench, arXiv 2406.12045).

    ``tasks`` holds (c, n) per task: c successes in n trials. Tasks with fewer than k
    trials are left out; None when none is left."""
    if k < 1:
        raise ValueError(f"pass^k needs k >= 1 (got {k})")
    terms = [math.comb(c, k) / math.comb(n, k) for c, n in tasks if n >= k]
    return float(np.mean(terms)) if terms else None


def _loglik(p: float, points: Sequence[tuple[int, int, int]]) -> float:
    total = 0.0
    for steps, n, c in points:
        q = p ** steps
        if c:
            total += c * steps * math.log(p) if p > 0 else -math.inf
        if n - c:
            total += (n - c) * math.log1p(-q) if q < 1 else -math.inf
    return total


class StepSuccessResult(Section):
    """Per-step success fitted to completion(steps) = p^steps, with its 95 % interval."""

    value: float | None        # the fitted p
    ci_low: float | None       # 95 % likelihood-ratio interval
    ci_high: float | None


def per_step_success(points: Sequence[tuple[int, int, int]]) -> StepSuccessResult:
    """The per-step success p that best explains completion against the number of steps,
    if each of a workflow's steps succeeds independently with p: completion(s) = p^s.

    ``points`` holds (steps, episodes, completed) per workflow length. Maximum likelihood
    over the binomial counts, with the 95 % likelihood-ratio interval; None without data.
    The log-likelihood is concave in p, so a bounded search finds its maximum."""
    points = [(s, n, c) for s, n, c in points if n > 0 and s > 0]
    if not points:
        return StepSuccessResult(value=None, ci_low=None, ci_high=None)
    total_n = sum(n for _, n, _ in points)
    total_c = sum(c for _, _, c in points)
    if total_c == 0:
        return StepSuccessResult(value=0.0, ci_low=0.0,
                                 ci_high=_bound(points, 0.0, lower=False, top=0.0))
    if total_c == total_n:
        return StepSuccessResult(value=1.0, ci_low=_bound(points, 1.0, lower=True, top=0.0),
                                 ci_high=1.0)
    a, b = 0.0, 1.0
    for _ in range(200):  # golden-section search
        m1, m2 = a + (b - a) * 0.382, a + (b - a) * 0.618
        if _loglik(m1, points) < _loglik(m2, points):
            a = m1
        else:
            b = m2
    p = (a + b) / 2
    top = _loglik(p, points)
    return StepSuccessResult(value=p, ci_low=_bound(points, p, lower=True, top=top),
                             ci_high=_bound(points, p, lower=False, top=top))


def _bound(points: Sequence[tuple[int, int, int]], p: float, *, lower: bool,
           top: float) -> float:
    """Where the log-likelihood falls χ²/2 below its top, on one side of ``p`` (bisection:
    ``inside`` is within the interval, ``outside`` beyond it)."""
    inside, outside = p, (0.0 if lower else 1.0)
    for _ in range(100):
        mid = (inside + outside) / 2
        if 2 * (top - _loglik(mid, points)) <= _CHI2_95:
            inside = mid
        else:
            outside = mid
    return inside


class StatsResult(Section):
    """Count, mean, median, 90th percentile and maximum of per-episode values."""

    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    max: float | None


def stats(values: Sequence[float]) -> StatsResult:
    """Count, mean, median, 90th percentile and maximum (None without values)."""
    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if not arr.size:
        return StatsResult(n=0, mean=None, p50=None, p90=None, max=None)
    return StatsResult(n=int(arr.size), mean=float(arr.mean()),
                       p50=float(np.percentile(arr, 50)), p90=float(np.percentile(arr, 90)),
                       max=float(arr.max()))


__all__ = ["RateResult", "StatsResult", "StepSuccessResult", "pass_hat_k", "per_correct_interval",
           "per_step_success", "rate", "stats"]
