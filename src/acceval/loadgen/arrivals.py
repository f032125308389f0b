"""Open-loop arrival schedules: pure, seeded send offsets in nanoseconds.

A schedule is built once for a load point's horizon (its ``max_duration_s``) before the
first request, so drawing random numbers never competes with sending. Offsets are int64
nanoseconds from the point's start, sorted, all below the horizon.

Inter-arrival gaps (mean ``1/rate`` in every case):

- ``constant``: exactly ``1/rate``; the first send at 0.
- ``poisson``: exponential gaps (coefficient of variation 1).
- ``gamma``: gamma gaps with shape ``burstiness`` and scale ``1/(rate*burstiness)``;
  CV = ``1/sqrt(burstiness)``: 1 is Poisson, below 1 burstier, above 1 smoother
  (the convention of ``vllm bench serve --burstiness``).

Which process a load family uses is the family's own choice
(:mod:`acceval.loadgen.spec`); this module only generates.

Seeds: one :class:`numpy.random.SeedSequence` per dimension, derived from the study seed
by spawn keys (``SeedSequence(seed, spawn_key=(ARRIVALS, point_index))`` is the child
``SeedSequence(seed).spawn(...)[ARRIVALS].spawn(...)[point_index]``), so adding a load point
or a dimension never shifts another one's draws. :func:`seed_info` says what was used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

# Spawn-key slots: one per random dimension the load generator owns.
ARRIVALS = 0

_NS = 1_000_000_000

Offsets = npt.NDArray[np.int64]
GapFn = Callable[[np.random.Generator, int], npt.NDArray[np.float64]]
"""``gaps(rng, n)``: ``n`` inter-arrival gaps in seconds."""


def arrivals_seed(seed: int, point_index: int) -> np.random.SeedSequence:
    """The seed sequence of one load point's arrivals."""
    return np.random.SeedSequence(seed, spawn_key=(ARRIVALS, point_index))


def seed_info(ss: np.random.SeedSequence) -> dict[str, Any]:
    """What reproduces a generator: entropy, spawn key and bit generator."""
    entropy = ss.entropy
    return {
        "entropy": int(entropy) if isinstance(entropy, int | np.integer) else entropy,
        "spawn_key": [int(k) for k in ss.spawn_key],
        "bit_generator": "PCG64",
    }


def _check(rate_rps: float, horizon_s: float) -> None:
    if not rate_rps > 0 or not np.isfinite(rate_rps):
        raise ValueError(f"rate_rps must be a positive finite number, got {rate_rps}")
    if not horizon_s > 0:
        raise ValueError(f"horizon_s must be positive, got {horizon_s}")


def constant(rate_rps: float, horizon_s: float) -> Offsets:
    """Evenly spaced sends, ``1/rate`` apart, the first at 0."""
    _check(rate_rps, horizon_s)
    n = int(np.ceil(horizon_s * rate_rps))
    offsets = np.floor(np.arange(n, dtype=np.float64) * (_NS / rate_rps)).astype(np.int64)
    return offsets[offsets < int(horizon_s * _NS)]


def exponential_gaps(rate_rps: float) -> GapFn:
    """Poisson arrivals: exponential gaps with mean ``1/rate`` (CV 1)."""
    return lambda rng, n: rng.exponential(1.0 / rate_rps, n)


def gamma_gaps(rate_rps: float, burstiness: float) -> GapFn:
    """Gamma gaps with shape ``burstiness`` and mean ``1/rate`` (CV ``1/sqrt(burstiness)``)."""
    if not burstiness > 0:
        raise ValueError(f"burstiness must be positive, got {burstiness}")
    return lambda rng, n: rng.gamma(burstiness, 1.0 / (rate_rps * burstiness), n)


def renewal(gaps: GapFn, rate_rps: float, horizon_s: float, *,
            rng: np.random.Generator | None, kind: str = "renewal",
            dispersion: float = 1.0) -> Offsets:
    """Send offsets of a renewal process (independent gaps from ``gaps``) before
    ``horizon_s``. ``dispersion`` widens the first block drawn (the gaps' variance relative
    to Poisson), so a second block is rarely needed."""
    _check(rate_rps, horizon_s)
    if rng is None:
        raise ValueError(f"{kind} arrivals need a seeded rng")
    expected = horizon_s * rate_rps
    block = int(expected + 6.0 * np.sqrt(expected * dispersion) + 16)
    total = 0.0
    pieces: list[npt.NDArray[np.float64]] = []
    while total < horizon_s:
        times = total + np.cumsum(gaps(rng, block))
        pieces.append(times)
        total = float(times[-1])
    times = np.concatenate(pieces)
    # Cut in seconds, before the cast: a gap of 1e300 s (a rate of 1e-300) is past int64
    # nanoseconds, and the cast would wrap it to a negative send time.
    times = times[times < horizon_s]
    offsets = (times * _NS).astype(np.int64)
    return offsets[offsets < int(horizon_s * _NS)]


def varying(segments: list[tuple[float, float, float]], *,
            rng: np.random.Generator | None) -> Offsets:
    """Poisson arrivals whose rate follows ``segments``, back to back from 0: each is
    ``(duration_s, rate_at_start_rps, rate_at_end_rps)``, the rate linear in between (a step
    holds one rate, a ramp changes it). Exact by time rescaling: unit-rate arrivals ``E``
    are mapped through the inverse of the cumulative rate ``Λ(t)``, piecewise quadratic."""
    if rng is None:
        raise ValueError("time-varying arrivals need a seeded rng")
    if not segments or any(d <= 0 or a < 0 or b < 0 for d, a, b in segments):
        raise ValueError("segments need positive durations and rates >= 0")
    dur = np.array([s[0] for s in segments], dtype=np.float64)
    r0 = np.array([s[1] for s in segments], dtype=np.float64)
    r1 = np.array([s[2] for s in segments], dtype=np.float64)
    start = np.concatenate([[0.0], np.cumsum(dur)[:-1]])
    cum = np.concatenate([[0.0], np.cumsum(dur * (r0 + r1) / 2)])
    total = float(cum[-1])
    if not total > 0:
        raise ValueError("the rate is 0 throughout: nothing to send")
    block = int(total + 6.0 * np.sqrt(total) + 16)
    e = np.cumsum(rng.exponential(1.0, block))
    while e[-1] < total:
        e = np.concatenate([e, e[-1] + np.cumsum(rng.exponential(1.0, block))])
    e = e[e < total]
    seg = np.clip(np.searchsorted(cum, e, side="right") - 1, 0, len(segments) - 1)
    u = e - cum[seg]
    a = 0.5 * (r1[seg] - r0[seg]) / dur[seg]
    b = r0[seg]
    # Λ = b·x + a·x², solved in the form that is stable for a = 0 and for b = 0.
    den = b + np.sqrt(np.maximum(b * b + 4.0 * a * u, 0.0))
    x = np.divide(2.0 * u, den, out=np.zeros_like(u), where=den > 0)
    horizon_ns = float(dur.sum()) * _NS
    out: Offsets = np.minimum((start[seg] + x) * _NS, horizon_ns - 1).astype(np.int64)
    return out
