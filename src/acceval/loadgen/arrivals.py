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

Seeds: one :class:`numpy.random.SeedSequence` per dimension, derived from the study seed
by spawn keys (``SeedSequence(seed, spawn_key=(ARRIVALS, point_index))`` is the child
``SeedSequence(seed).spawn(...)[ARRIVALS].spawn(...)[point_index]``), so adding a load point
or a dimension never shifts another one's draws. :func:`seed_info` says what was used.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

OpenKind = Literal["constant", "poisson", "gamma"]

# Spawn-key slots: one per random dimension the load generator owns.
ARRIVALS = 0

_NS = 1_000_000_000


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


def _gaps(kind: OpenKind, rate_rps: float, n: int, rng: np.random.Generator,
          burstiness: float) -> npt.NDArray[np.float64]:
    if kind == "poisson":
        return rng.exponential(1.0 / rate_rps, n)
    if kind == "gamma":
        return rng.gamma(burstiness, 1.0 / (rate_rps * burstiness), n)
    raise ValueError(f"unknown arrival kind {kind!r}")


def schedule(kind: OpenKind, rate_rps: float, horizon_s: float, *,
             rng: np.random.Generator | None = None, burstiness: float = 1.0
             ) -> npt.NDArray[np.int64]:
    """Send offsets (ns from the point's start) of every arrival before ``horizon_s``.

    ``rng`` is required for ``poisson`` and ``gamma``; pass ``numpy.random.default_rng(
    arrivals_seed(seed, index))``.
    """
    if not rate_rps > 0 or not np.isfinite(rate_rps):
        raise ValueError(f"rate_rps must be a positive finite number, got {rate_rps}")
    if not horizon_s > 0:
        raise ValueError(f"horizon_s must be positive, got {horizon_s}")
    if not burstiness > 0:
        raise ValueError(f"burstiness must be positive, got {burstiness}")
    horizon_ns = int(horizon_s * _NS)
    if kind == "constant":
        n = int(np.ceil(horizon_s * rate_rps))
        offsets = np.floor(np.arange(n, dtype=np.float64) * (_NS / rate_rps)).astype(np.int64)
        return offsets[offsets < horizon_ns]
    if rng is None:
        raise ValueError(f"{kind} arrivals need a seeded rng")
    expected = horizon_s * rate_rps
    # Draw in blocks (mean plus a margin); rarely needs a second block.
    block = int(expected + 6.0 * np.sqrt(expected / min(burstiness, 1.0)) + 16)
    total = 0.0
    pieces: list[npt.NDArray[np.float64]] = []
    while total < horizon_s:
        gaps = _gaps(kind, rate_rps, block, rng, burstiness)
        times = total + np.cumsum(gaps)
        pieces.append(times)
        total = float(times[-1])
    times_s = np.concatenate(pieces)
    offsets = (times_s * _NS).astype(np.int64)
    return offsets[offsets < horizon_ns]
