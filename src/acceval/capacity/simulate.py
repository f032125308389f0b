"""Fleet what-if: a day (or more) of demand against a provisioned fleet whose replicas fail and
restart, in one-second steps. It answers: how many requests are late or lost, what SLO
attainment is left, and what the spare capacity (N+1) that prevents it costs.

The model (docs/capacity.md):

- arrivals in second t: Poisson(rate(t)), drawn at once for the whole horizon;
- each replica slot alternates up ~ Exp(MTBF) and down = ``restart_s`` (restart + compile +
  load + warm-up), drawn per slot from its own seed so that adding a spare never changes the
  other slots' failures (common random numbers across what-ifs); only provisioned slots count;
- declared outages take replicas away over a window; reactive scaling makes new replicas of an
  hour start ``restart_s`` late (otherwise they are started ahead and paid for that time);
- the fleet serves up to ``up x mu`` per second within the SLO (``mu``: the rate one replica
  carries within the SLO); the rest waits in a FIFO fluid backlog. A request that waited at
  most ``late_after_s`` (default one step: the model cannot resolve sub-second waits, which a
  batching server absorbs) is on time; one that waited longer is late; one still waiting
  after ``timeout_s`` is lost.

The backlog recursion only runs over the seconds where the unbounded Lindley recursion
(vectorised: ``q_t = S_t - min(0, min_k<=t S_k)``) says a queue exists, so a healthy day costs
a few numpy passes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import Field, computed_field

from acceval.capacity.fleet import FleetPlan
from acceval.capacity.profile import CAPACITY_SEED_SLOT, HOUR_S, DemandProfile
from acceval.results.section import Section


class FleetSimSummary(Section):
    """One simulated day of a fleet: arrivals served on time, late or lost, and what it cost."""

    seconds: int
    arrivals: int
    on_time: float
    late: float
    lost: float
    failures: int
    down_replica_s: float
    min_up_replicas: int
    replica_hours: float  # provisioned, including replicas started ahead of an hour
    cost_usd: float | None
    seed: int
    series: dict[str, list[float]] = Field(default_factory=dict)  # per minute, if asked

    @computed_field  # type: ignore[prop-decorator]
    @property
    def slo_attainment(self) -> float | None:
        return None if self.arrivals == 0 else self.on_time / self.arrivals

    @computed_field  # type: ignore[prop-decorator]
    @property
    def late_fraction(self) -> float | None:
        return None if self.arrivals == 0 else self.late / self.arrivals

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lost_fraction(self) -> float | None:
        return None if self.arrivals == 0 else self.lost / self.arrivals


class SpareWhatIfResult(Section):
    """The same day with and without ``spares`` extra replicas (same arrivals, same failures
    of the shared slots)."""

    spares: int
    without: FleetSimSummary
    with_spares: FleetSimSummary
    extra_replica_hours: float
    extra_cost_usd: float | None
    late_avoided: float
    lost_avoided: float
    usd_per_request_saved: float | None



FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Spawn-key slots for the simulation's random dimensions, under capacity's first slot.
SIM_ARRIVALS = 1
SIM_FAILURES = 2


@dataclass(frozen=True, slots=True)
class Outage:
    """``replicas`` replicas unavailable over [start_s, start_s + duration_s)."""

    start_s: float
    duration_s: float
    replicas: int


def _seq(seed: int, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed, spawn_key=(CAPACITY_SEED_SLOT, *key))


def _slot_failures(slot: int, seed: int, horizon_s: float, mtbf_s: float,
                   restart_s: float) -> FloatArray:
    """Failure instants of one replica slot: up ~ Exp(mtbf), then down for restart_s."""
    rng = np.random.default_rng(_seq(seed, SIM_FAILURES, slot))
    mean_cycles = horizon_s / (mtbf_s + restart_s)
    k = int(mean_cycles + 6 * math.sqrt(mean_cycles) + 4)
    while True:
        up = rng.exponential(mtbf_s, k)
        fails = np.cumsum(up) + np.arange(k) * restart_s
        if fails[-1] >= horizon_s:
            return fails[fails < horizon_s]
        k *= 2  # astronomically rare; redraw longer rather than truncate


def _down_series(n_slots: IntArray, seconds: int, seed: int, mtbf_s: float | None,
                 restart_s: float) -> tuple[IntArray, int]:
    """Down replicas per second among the provisioned slots, and the failure count."""
    down = np.zeros(seconds, dtype=np.int64)
    if mtbf_s is None or restart_s <= 0:
        return down, 0
    width = max(1, math.ceil(restart_s))
    starts, slots = [], []
    for slot in range(int(n_slots.max())):
        f = _slot_failures(slot, seed, float(seconds), mtbf_s, restart_s)
        starts.append(np.floor(f).astype(np.int64))
        slots.append(np.full(f.size, slot, dtype=np.int64))
    s = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    slot_of = np.concatenate(slots) if slots else np.zeros(0, np.int64)
    live = slot_of < n_slots[s]          # a slot fails only while it is provisioned
    s, slot_of = s[live], slot_of[live]
    sec = (np.repeat(s, width) + np.tile(np.arange(width), s.size))
    owner = np.repeat(slot_of, width)
    keep = sec < seconds
    sec, owner = sec[keep], owner[keep]
    sec = sec[owner < n_slots[sec]]
    down += np.bincount(sec, minlength=seconds)[:seconds]
    return down, int(s.size)


def _backlog(arrivals: FloatArray, capacity: FloatArray, timeout_s: float,
             late_after_s: float) -> tuple[float, float]:
    """(late, lost) of a FIFO fluid queue with abandonment after ``timeout_s``; a request
    served ``w`` steps after its arrival step is late when ``w > late_after_s``."""
    net = np.cumsum(arrivals - capacity)
    queue = net - np.minimum(0.0, np.minimum.accumulate(net))
    busy = np.flatnonzero(queue > 1e-9)
    if busy.size == 0:
        return 0.0, 0.0
    # Visit every second from the first backlog to the end of each episode (+1 to drain).
    visit = np.unique(np.concatenate([busy, np.minimum(busy + 1, arrivals.size - 1)]))
    late = lost = 0.0
    cohorts: deque[list[float]] = deque()   # [arrival second, amount], oldest first
    prev = -2
    a_list, c_list = arrivals[visit].tolist(), capacity[visit].tolist()
    for t, a, cap in zip(visit.tolist(), a_list, c_list, strict=True):
        if t != prev + 1:
            cohorts.clear()  # the unbounded queue was empty in between, so this one is too
        prev = t
        while cohorts and t - cohorts[0][0] >= timeout_s:
            lost += cohorts.popleft()[1]
        while cohorts and cap > 0:
            take = min(cap, cohorts[0][1])
            if t - cohorts[0][0] > late_after_s:
                late += take
            cap -= take
            cohorts[0][1] -= take
            if cohorts[0][1] <= 1e-12:
                cohorts.popleft()
        rest = a - min(a, cap)
        if rest > 1e-12:
            cohorts.append([float(t), rest])
    late += sum(c[1] for c in cohorts)  # still queued at the horizon: served late, if at all
    return late, lost


def _minutes(x: npt.NDArray[Any]) -> list[float]:
    n = x.size // 60 * 60
    head = x[:n].reshape(-1, 60).sum(axis=1) if n else np.zeros(0)
    tail = [float(x[n:].sum())] if x.size > n else []
    return [float(v) for v in head] + tail


def simulate_fleet(profile: DemandProfile, plan: FleetPlan, *, mtbf_h: float | None = 72.0,
                   restart_s: float = 300.0, timeout_s: float = 30.0,
                   late_after_s: float = 1.0, seed: int = 0,
                   outages: Sequence[Outage] = (), reactive_scaling: bool = False,
                   usd_per_replica_hour: float | None = None, horizon_s: float | None = None,
                   keep_series: bool = False) -> FleetSimSummary:
    """Simulate ``plan`` serving ``profile`` over ``horizon_s`` (default: the plan's hours).
    Deterministic for a given ``seed``. ``mtbf_h=None`` turns random failures off."""
    if restart_s < 0 or timeout_s <= 0 or late_after_s < 0:
        raise ValueError("restart_s and late_after_s must be >= 0, timeout_s > 0")
    seconds = int(horizon_s if horizon_s is not None else plan.hours * HOUR_S)
    if seconds <= 0:
        raise ValueError("the horizon must be at least one second")
    t = np.arange(seconds, dtype=np.float64)
    hour = np.minimum((t // HOUR_S).astype(np.int64), plan.hours - 1)
    n_slots = plan.replicas[hour]
    rng = np.random.default_rng(_seq(seed, SIM_ARRIVALS))
    arrivals = rng.poisson(profile.rate_at(t + 0.5)).astype(np.float64)

    mtbf_s = None if mtbf_h is None else mtbf_h * HOUR_S
    down, failures = _down_series(n_slots, seconds, seed, mtbf_s, restart_s)
    for o in outages:
        a, b = max(0, int(o.start_s)), min(seconds, math.ceil(o.start_s + o.duration_s))
        down[a:b] += o.replicas
    rises = np.maximum(np.diff(plan.replicas, prepend=plan.replicas[0]), 0)
    if reactive_scaling and restart_s > 0:
        for h in np.flatnonzero(rises):
            a = int(h * HOUR_S)
            down[a:min(seconds, a + math.ceil(restart_s))] += int(rises[h])
    up = np.maximum(n_slots - down, 0)
    capacity = up * plan.per_replica_rps
    late, lost = _backlog(arrivals, capacity, timeout_s, late_after_s)
    total = float(arrivals.sum())
    used_h = plan.replicas[: math.ceil(seconds / HOUR_S)]
    replica_hours = float(used_h.sum())
    if not reactive_scaling:
        replica_hours += float(rises[: used_h.size].sum()) * restart_s / HOUR_S
    cost = None if usd_per_replica_hour is None else replica_hours * usd_per_replica_hour
    series: dict[str, list[float]] = {}
    if keep_series:
        series = {"arrivals": _minutes(arrivals), "capacity": _minutes(capacity),
                  "down_replica_s": _minutes(down.astype(np.float64))}
    return FleetSimSummary(
        seconds=seconds, arrivals=int(total), on_time=total - late - lost, late=late, lost=lost,
        failures=failures, down_replica_s=float(np.minimum(down, n_slots).sum()),
        min_up_replicas=int(up.min()), replica_hours=replica_hours, cost_usd=cost, seed=seed,
        series=series)


def with_spares(plan: FleetPlan, spares: int) -> FleetPlan:
    """``plan`` with ``spares`` more replicas every hour."""
    if spares < 0:
        raise ValueError("spares must be >= 0")
    return replace(plan, spares=plan.spares + spares, replicas=plan.replicas + spares)


def spare_capacity_whatif(profile: DemandProfile, plan: FleetPlan, *, spares: int = 1,
                          **kwargs: Any) -> SpareWhatIfResult:
    """Run :func:`simulate_fleet` on ``plan`` and on ``plan`` + ``spares``; what the spares
    cost and what they save. ``kwargs`` go to :func:`simulate_fleet` for both runs."""
    base = simulate_fleet(profile, plan, **kwargs)
    more = simulate_fleet(profile, with_spares(plan, spares), **kwargs)
    extra_h = more.replica_hours - base.replica_hours
    extra_usd = (None if base.cost_usd is None or more.cost_usd is None
                 else more.cost_usd - base.cost_usd)
    late_av, lost_av = base.late - more.late, base.lost - more.lost
    saved = late_av + lost_av
    per = None if extra_usd is None or saved <= 0 else extra_usd / saved
    return SpareWhatIfResult(spares=spares, without=base, with_spares=more,
                             extra_replica_hours=extra_h, extra_cost_usd=extra_usd,
                             late_avoided=late_av, lost_avoided=lost_av,
                             usd_per_request_saved=per)
