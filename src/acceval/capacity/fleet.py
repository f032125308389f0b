"""Fleet sizing for a demand profile: replicas hour by hour, utilization, idle chip-hours, and
the cost per correct task under that demand beside the cost at saturation.

Formulas (docs/capacity.md), with ``mu`` the rate one replica serves within
the SLO (:func:`acceval.capacity.curve.max_rate_under_slo`):

- replicas in hour h: ``N_h = max(min_replicas, ceil(peak_h (1 + headroom) / mu)) + spares``;
  ``static`` scaling holds ``max_h N_h`` all day. ``peak_h`` is the hour's highest rate (a
  burst inside the hour counts), never below the offered-load bound ``ceil(peak_h / mu)``.
- utilization ``U = sum_h mean_h / (mu sum_h N_h)``; idle chip-hours
  ``= chips sum_h (N_h - mean_h / mu)``.
- cost per correct under demand ``= price_replica_h sum_h N_h / (success sum_h 3600 mean_h)``;
  at saturation ``= price_replica_h / (3600 mu_sat success)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from acceval.capacity.profile import HOUR_S, DemandProfile
from acceval.results.section import Section


class FleetPlanResult(Section):
    per_replica_rps: float
    chips_per_replica: int
    headroom: float
    spares: int
    scaling: str
    hours: int
    replicas: list[int]
    hourly_mean_rps: list[float]
    hourly_peak_rps: list[float]
    peak_replicas: int
    min_replicas: int
    replica_hours: float
    chip_hours: float
    idle_chip_hours: float
    utilization: float | None
    expected_requests: float


class DemandCostResult(Section):
    """What a correct task costs when the fleet is sized for real demand, beside the cost at
    full use. ``ratio`` = under demand / at the SLO-bounded rate = 1 / utilization."""

    usd_per_replica_hour: float
    success_rate: float
    fleet_usd: float
    correct_tasks: float
    cost_per_correct_usd: float  # under the demand (idle capacity paid)
    cost_per_correct_at_slo_rate_usd: float  # every replica busy at mu, within the SLO
    cost_per_correct_at_saturation_usd: float | None  # at the highest measured throughput
    ratio: float



FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# A rate of 10.000000001 x mu is 10 replicas, not 11: float noise must not buy a replica.
_EPS = 1e-9


def replicas_needed(rate_rps: npt.ArrayLike, per_replica_rps: float, *, headroom: float = 0.0,
                    spares: int = 0, min_replicas: int = 1) -> IntArray:
    """Replicas that carry ``rate_rps`` (vectorised) at ``per_replica_rps`` each, with headroom
    and spares. Monotone non-decreasing in the rate, and never below ``ceil(rate / mu)``."""
    if not per_replica_rps > 0 or not math.isfinite(per_replica_rps):
        raise ValueError(f"per_replica_rps must be positive and finite, got {per_replica_rps}")
    if headroom < 0 or spares < 0 or min_replicas < 0:
        raise ValueError("headroom, spares and min_replicas must be >= 0")
    r = np.asarray(rate_rps, dtype=np.float64)
    if np.any(r < 0) or not np.all(np.isfinite(r)):
        raise ValueError("rates must be finite and >= 0")
    need = np.ceil(r * (1.0 + headroom) / per_replica_rps - _EPS)
    # ceil(x - eps) can fall one short of ceil(rate/mu) when headroom is 0 and x is just
    # above an integer; the bound must hold exactly.
    bound = np.ceil(r / per_replica_rps - _EPS)
    need = np.maximum(np.maximum(need, bound), min_replicas)
    return (need + spares).astype(np.int64)


@dataclass(frozen=True, slots=True)
class FleetPlan:
    """A provisioned fleet for a profile, hour by hour."""

    per_replica_rps: float
    chips_per_replica: int
    headroom: float
    spares: int
    scaling: str
    hourly_mean_rps: FloatArray
    hourly_peak_rps: FloatArray
    replicas: IntArray           # provisioned per hour
    offered_load_bound: IntArray  # ceil(peak_h / mu): the floor no plan may go below

    @property
    def hours(self) -> int:
        return int(self.replicas.size)

    @property
    def replica_hours(self) -> float:
        return float(self.replicas.sum())

    @property
    def chip_hours(self) -> float:
        return self.replica_hours * self.chips_per_replica

    @property
    def expected_requests(self) -> float:
        return float(self.hourly_mean_rps.sum() * HOUR_S)

    @property
    def utilization(self) -> float | None:
        """Share of provisioned SLO-bounded capacity that the demand uses, in [0, 1]."""
        cap = self.replica_hours * self.per_replica_rps
        return None if cap <= 0 else float(self.hourly_mean_rps.sum() / cap)

    @property
    def busy_chip_hours(self) -> float:
        return float((self.hourly_mean_rps / self.per_replica_rps).sum()) * self.chips_per_replica

    @property
    def idle_chip_hours(self) -> float:
        return self.chip_hours - self.busy_chip_hours

    @property
    def peak_replicas(self) -> int:
        return int(self.replicas.max())

    @property
    def min_replicas(self) -> int:
        return int(self.replicas.min())

    def result(self) -> FleetPlanResult:
        """The plan as the result stores it (hour arrays as lists, the derived totals)."""
        return FleetPlanResult(
            per_replica_rps=self.per_replica_rps, chips_per_replica=self.chips_per_replica,
            headroom=self.headroom, spares=self.spares, scaling=self.scaling, hours=self.hours,
            replicas=self.replicas.tolist(), hourly_mean_rps=self.hourly_mean_rps.tolist(),
            hourly_peak_rps=self.hourly_peak_rps.tolist(), peak_replicas=self.peak_replicas,
            min_replicas=self.min_replicas, replica_hours=self.replica_hours,
            chip_hours=self.chip_hours, idle_chip_hours=self.idle_chip_hours,
            utilization=self.utilization, expected_requests=self.expected_requests)


def plan_fleet(profile: DemandProfile, per_replica_rps: float, *, chips_per_replica: int = 1,
               headroom: float = 0.0, spares: int = 0, scaling: str = "hourly",
               min_replicas: int = 1) -> FleetPlan:
    """Replicas per hour over the profile's horizon (see the module formulas)."""
    if scaling not in ("hourly", "static"):
        raise ValueError(f"scaling must be hourly or static, got {scaling!r}")
    if chips_per_replica < 1:
        raise ValueError("chips_per_replica must be >= 1")
    mean, peak = profile.hourly()
    n = replicas_needed(peak, per_replica_rps, headroom=headroom, spares=spares,
                        min_replicas=min_replicas)
    if scaling == "static":
        n = np.full_like(n, n.max())
    bound = np.ceil(peak / per_replica_rps - _EPS).astype(np.int64)
    return FleetPlan(per_replica_rps, chips_per_replica, headroom, spares, scaling, mean, peak,
                     n, bound)


def demand_cost(plan: FleetPlan, usd_per_replica_hour: float, success_rate: float, *,
                saturation_rps: float | None = None) -> DemandCostResult:
    """Provisioned replicas x hours x price / correct tasks served (see module formulas).
    ``success_rate`` is the share of requests answered correctly (within the SLO)."""
    if usd_per_replica_hour < 0:
        raise ValueError("usd_per_replica_hour must be >= 0")
    if not 0 <= success_rate <= 1:
        raise ValueError("success_rate must be in [0, 1]")
    fleet_usd = plan.replica_hours * usd_per_replica_hour
    correct = plan.expected_requests * success_rate
    per_task = fleet_usd / correct if correct > 0 else math.inf
    per_s = 3600.0 * success_rate
    at_mu = usd_per_replica_hour / (plan.per_replica_rps * per_s) if per_s > 0 else math.inf
    at_sat: float | None = None
    if saturation_rps is not None and saturation_rps > 0:
        at_sat = usd_per_replica_hour / (saturation_rps * per_s) if per_s > 0 else math.inf
    ratio = per_task / at_mu if at_mu > 0 and math.isfinite(at_mu) else math.nan
    return DemandCostResult(
        usd_per_replica_hour=usd_per_replica_hour, success_rate=success_rate,
        fleet_usd=fleet_usd, correct_tasks=correct, cost_per_correct_usd=per_task,
        cost_per_correct_at_slo_rate_usd=at_mu, cost_per_correct_at_saturation_usd=at_sat,
        ratio=ratio)
