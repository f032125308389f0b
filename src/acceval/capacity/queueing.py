"""Queueing approximations for fleet sizing: Erlang B/C (M/M/c), Allen–Cunneen (G/G/c) and the
smallest fleet that meets a waiting-time target.

Notation (docs/capacity.md): arrival rate ``lam`` (1/s), mean service time ``S`` (s), offered
load ``a = lam * S`` (Erlangs), ``c`` servers, utilization ``rho = a / c``.

- Erlang B by the stable recursion ``B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1))``.
- Erlang C from B: ``C = c B / (c - a (1 - B))`` for ``a < c`` (else 1: the queue grows).
- ``E[Wq] = C S / (c - a)``; ``P(Wq > t) = C exp(-(c - a) t / S)``.
- Allen–Cunneen: ``E[Wq](G/G/c) ~ E[Wq](M/M/c) (Ca^2 + Cs^2) / 2``.

An LLM replica with continuous batching is not c independent servers; the usual mapping
is c = slots per replica (the largest concurrency that still meets the TPOT
bound) x replicas, S = the end-to-end latency at that concurrency.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# Beyond this many servers the search gives up: the inputs are almost certainly in the wrong
# units (a service time in ms given as s), and the O(c) recursion would take long.
MAX_SERVERS = 10_000_000


def erlang_b(servers: int, load_erl: npt.ArrayLike) -> FloatArray:
    """Blocking probability of M/M/c/c with ``servers`` servers at offered load ``load_erl``
    (vectorised over the load)."""
    if servers < 0:
        raise ValueError("servers must be >= 0")
    a = np.asarray(load_erl, dtype=np.float64)
    if np.any(a < 0):
        raise ValueError("offered load must be >= 0")
    b = np.ones_like(a)
    for k in range(1, servers + 1):
        b = a * b / (k + a * b)
    return b


def _c_from_b(c: int, a: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = c * b / (c - a * (1.0 - b))
    return np.where(a >= c, 1.0, np.clip(out, 0.0, 1.0))


def erlang_c(servers: int, load_erl: npt.ArrayLike) -> FloatArray:
    """Probability that an arrival waits in M/M/c (1 when ``load >= servers``)."""
    if servers < 1:
        raise ValueError("servers must be >= 1")
    a = np.asarray(load_erl, dtype=np.float64)
    return _c_from_b(servers, a, erlang_b(servers, a))


@dataclass(frozen=True, slots=True)
class QueueEstimate:
    """Waiting in a c-server queue. ``mean_wait_s`` is inf when the queue is unstable."""

    servers: int
    arrival_rps: float
    service_s: float
    load_erl: float
    utilization: float        # a / c, may exceed 1 (unstable)
    p_wait: float             # Erlang C (the M/M/c probability of waiting)
    mean_wait_s: float        # E[Wq], with the Allen–Cunneen factor applied
    variability: float = 1.0  # (Ca^2 + Cs^2) / 2; 1 for M/M/c
    model: str = "M/M/c"

    @property
    def stable(self) -> bool:
        return self.load_erl < self.servers

    def p_wait_longer(self, t_s: float) -> float:
        """P(Wq > t): exact for M/M/c; for G/G/c the exponential tail is stretched so that its
        mean is the Allen–Cunneen mean (a heuristic, stated as such in docs/capacity.md)."""
        if not self.stable:
            return 1.0
        rate = (self.servers - self.load_erl) / self.service_s / self.variability
        return float(self.p_wait * math.exp(-rate * t_s))


def _check(arrival_rps: float, service_s: float) -> None:
    if not arrival_rps >= 0 or not math.isfinite(arrival_rps):
        raise ValueError(f"arrival_rps must be finite and >= 0, got {arrival_rps}")
    if not service_s > 0 or not math.isfinite(service_s):
        raise ValueError(f"service_s must be finite and > 0, got {service_s}")


def _estimate(c: int, lam: float, s: float, b: float, variability: float,
              model: str) -> QueueEstimate:
    a = lam * s
    pw = float(_c_from_b(c, np.asarray(a), np.asarray(b)))
    wait = math.inf if a >= c else pw * s / (c - a) * variability
    return QueueEstimate(c, lam, s, a, a / c, pw, wait, variability, model)


def variability_factor(cv_arrival: float = 1.0, cv_service: float = 1.0) -> float:
    """Allen–Cunneen's (Ca^2 + Cs^2) / 2: 1 for Poisson arrivals and exponential service."""
    if cv_arrival < 0 or cv_service < 0:
        raise ValueError("coefficients of variation must be >= 0")
    return (cv_arrival ** 2 + cv_service ** 2) / 2.0


def mmc(arrival_rps: float, service_s: float, servers: int) -> QueueEstimate:
    """M/M/c: Poisson arrivals, exponential service, ``servers`` servers (Erlang C)."""
    _check(arrival_rps, service_s)
    if servers < 1:
        raise ValueError("servers must be >= 1")
    b = float(erlang_b(servers, arrival_rps * service_s))
    return _estimate(servers, arrival_rps, service_s, b, 1.0, "M/M/c")


def ggc(arrival_rps: float, service_s: float, servers: int, *, cv_arrival: float = 1.0,
        cv_service: float = 1.0) -> QueueEstimate:
    """G/G/c by Allen–Cunneen: the M/M/c mean wait times (Ca^2 + Cs^2) / 2."""
    _check(arrival_rps, service_s)
    if servers < 1:
        raise ValueError("servers must be >= 1")
    b = float(erlang_b(servers, arrival_rps * service_s))
    return _estimate(servers, arrival_rps, service_s, b,
                     variability_factor(cv_arrival, cv_service), "G/G/c (Allen-Cunneen)")


def _walk(a: float, step: int) -> Iterator[tuple[int, float]]:
    """(c, Erlang B at c) for c = step, 2 step, ... (the recursion carried along)."""
    b, k = 1.0, 0
    while k < MAX_SERVERS:
        for _ in range(step):
            k += 1
            b = a * b / (k + a * b)
        yield k, b
    raise ValueError(f"no fleet below {MAX_SERVERS} servers meets the target; check units")


def min_servers(arrival_rps: float, service_s: float, *, max_mean_wait_s: float | None = None,
                max_p_wait: float | None = None, max_utilization: float = 1.0,
                cv_arrival: float = 1.0, cv_service: float = 1.0,
                step: int = 1) -> QueueEstimate:
    """The smallest fleet (a multiple of ``step`` servers, e.g. slots per replica) that is stable,
    keeps utilization <= ``max_utilization`` and meets every waiting target given.

    The answer is never below the offered-load bound ``ceil(a)`` (rounded up to ``step``).
    """
    _check(arrival_rps, service_s)
    if step < 1:
        raise ValueError("step must be >= 1")
    if not 0 < max_utilization <= 1:
        raise ValueError("max_utilization must be in (0, 1]")
    v = variability_factor(cv_arrival, cv_service)
    model = "M/M/c" if v == 1.0 else "G/G/c (Allen-Cunneen)"
    a = arrival_rps * service_s
    for c, b in _walk(a, step):
        if a >= c or a / c > max_utilization:
            continue
        est = _estimate(c, arrival_rps, service_s, b, v, model)
        if max_mean_wait_s is not None and est.mean_wait_s > max_mean_wait_s:
            continue
        if max_p_wait is not None and est.p_wait > max_p_wait:
            continue
        return est
    raise AssertionError("unreachable: _walk raises at its limit")
