"""Summary statistics of one sample of values (latencies, lags, token counts)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from acceval.metrics._model import MetricModel

FloatArray = npt.NDArray[np.float64]


def finite(values: npt.ArrayLike) -> FloatArray:
    """The values as float64 with NaN dropped (NaN is how a missing measurement travels)."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    return arr[~np.isnan(arr)]


def sorted_quantiles(ordered: FloatArray, qs: npt.ArrayLike) -> FloatArray:
    """The ``qs``-th percentiles (0..100) of an ascending array without NaN, by numpy's
    default (linear) method to the last bit: the index ``(n - 1) * q / 100``, and its
    neighbours blended as ``np.percentile`` blends them. One sort serves every level and the
    extremes; ``np.percentile`` partitions the unsorted values again for each call, three
    times the cost of the sort on a 250,000-value point."""
    n = ordered.size
    at = (n - 1) * np.true_divide(np.asarray(qs, dtype=np.float64), 100)
    low = np.floor(at)
    weight = at - low
    below = low.astype(np.intp)
    a = ordered[below]
    b = ordered[np.minimum(below + 1, n - 1)]
    step = b - a
    blended: FloatArray = np.where(weight >= 0.5, b - step * (1 - weight), a + step * weight)
    return blended


def percentile(values: npt.ArrayLike, q: float) -> float | None:
    """The ``q``-th percentile (0..100, linear interpolation), NaN ignored; None when empty."""
    arr = finite(values)
    if arr.size == 0:
        return None
    return float(np.percentile(arr, q))


class Distribution(MetricModel):
    """count, mean, std (population, ddof=0), min, p50..p99.9, max. All None when count == 0.

    Percentiles use numpy's default linear interpolation between order statistics, the same
    as vLLM bench; with few samples p99.9 is close to max, which is what the data can say.
    """

    QUANTILES: ClassVar[tuple[tuple[str, float], ...]] = (
        ("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9),
    )

    count: int
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: npt.ArrayLike) -> Distribution:
        """Summarise ``values``, ignoring NaN."""
        arr = finite(values)
        if arr.size == 0:
            return cls(count=0)
        ordered = np.sort(arr)
        qs = sorted_quantiles(ordered, [q for _, q in cls.QUANTILES])
        return cls(
            count=int(arr.size),
            mean=float(arr.mean()),     # in the values' own order: the same sum as before
            std=float(arr.std()),
            min=float(ordered[0]),
            max=float(ordered[-1]),
            **{name: float(v) for (name, _), v in zip(cls.QUANTILES, qs, strict=True)},
        )

    def percentile(self, q: float) -> float | None:
        """A stored percentile (0, 50, 90, 95, 99, 99.9 or 100). Raw values are not kept, so
        other levels raise ValueError: use :func:`percentile` on the raw array for those."""
        if q == 0:
            return self.min
        if q == 100:
            return self.max
        for name, level in self.QUANTILES:
            if q == level:
                value: float | None = getattr(self, name)
                return value
        stored = ", ".join(str(level) for _, level in self.QUANTILES)
        raise ValueError(f"percentile {q} is not stored (stored: 0, {stored}, 100)")
