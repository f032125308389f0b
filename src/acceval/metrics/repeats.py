"""Confidence intervals across repeats of one load point (``load[].repeats``).

Each repeat is a whole load point measured again (its own schedule seed, its own records),
so each gives one value of a statistic: its p95 TTFT, its request throughput. Across the
``n`` repeats the interval is Student's t-interval of the mean of those values:

    mean ± t(1 - (1 - confidence)/2, n - 1) · s / √n,   s the sample std (ddof = 1)

It treats the repeats as independent draws of the statistic (the server's state carries over
between them; run order is interleaved across points to spread drift). With n = 1 there is no
spread, so no interval. The t quantile is computed here (the regularised incomplete beta
function by its continued fraction) so that the core needs no SciPy. AIPerf's multi-run
confidence (``--num-profile-runs``) uses the same t-interval over runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from acceval.metrics._model import MetricModel

DEFAULT_CONFIDENCE = 0.95
METHOD = "Student t-interval of the mean over repeats (s with ddof=1)"


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
          + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on the CDF; 0 < p < 1, df > 0)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0 (got p={p}, df={df})")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


class RepeatInterval(MetricModel):
    """One statistic over a point's repeats: each repeat's value, their mean and the
    t-interval (``low``/``high`` None with fewer than two values)."""

    n: int
    values: tuple[float, ...]
    mean: float | None
    low: float | None
    high: float | None
    confidence: float = DEFAULT_CONFIDENCE
    method: str = METHOD

    def overlaps(self, other: RepeatInterval) -> bool | None:
        """Whether the two intervals share a value (None: either has no interval)."""
        if None in (self.low, self.high, other.low, other.high):
            return None
        assert self.low is not None and self.high is not None
        assert other.low is not None and other.high is not None
        return self.low <= other.high and other.low <= self.high


def t_interval(values: Sequence[float | None],
               confidence: float = DEFAULT_CONFIDENCE) -> RepeatInterval:
    """The t-interval of the mean of ``values`` (None and NaN are left out)."""
    vals = tuple(float(v) for v in values if v is not None and math.isfinite(v))
    n = len(vals)
    if n == 0:
        return RepeatInterval(n=0, values=(), mean=None, low=None, high=None,
                              confidence=confidence)
    mean = math.fsum(vals) / n
    if n < 2:
        return RepeatInterval(n=n, values=vals, mean=mean, low=None, high=None,
                              confidence=confidence)
    s = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * s / math.sqrt(n)
    return RepeatInterval(n=n, values=vals, mean=mean, low=mean - half, high=mean + half,
                          confidence=confidence)
