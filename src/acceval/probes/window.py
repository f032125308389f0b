"""Energy of a time window from cumulative ``energy_j`` samples (pure).

Each (probe, device) series is a cumulative counter; the window's energy is the counter
interpolated linearly at the window's end minus at its start, summed over devices. A series
that does not cover the window contributes nothing, and no series at all gives ``None``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable

from acceval.probes.base import Sample


def _at(ts: list[int], vs: list[float], t: int) -> float | None:
    if not ts or t < ts[0] or t > ts[-1]:
        return None
    i = bisect_left(ts, t)
    if ts[i] == t:
        return vs[i]
    t0, t1, v0, v1 = ts[i - 1], ts[i], vs[i - 1], vs[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def energy_between(samples: Iterable[Sample], start_ns: int, end_ns: int, *,
                   probe: str | None = None, metric: str = "energy_j") -> float | None:
    """Joules spent between ``start_ns`` and ``end_ns`` (run-relative), over all devices."""
    series: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for s in samples:
        if s.metric == metric and (probe is None or s.probe == probe):
            series[(s.probe, s.device)].append((s.t_ns, s.value))
    total, covered = 0.0, False
    for points in series.values():
        points.sort()
        ts = [p[0] for p in points]
        vs = [p[1] for p in points]
        a, b = _at(ts, vs, start_ns), _at(ts, vs, end_ns)
        if a is None or b is None:
            continue
        total += b - a
        covered = True
    return total if covered else None
