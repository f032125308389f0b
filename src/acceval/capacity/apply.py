"""Capacity of one measured target under the study's demand: the max rate under the SLO from
its curve, the fleet hour by hour, utilization (the economics' idle-capacity input), the cost
per correct task under demand, availability findings and the N+1 failure what-if.

Pure over the study and a ``TargetResult`` (duck-typed, see :mod:`acceval.capacity.curve`),
so a re-analysis reproduces it. How the pipeline calls it: docs/capacity.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from acceval.capacity.availability import AvailabilityCheck, AvailabilityResult, check_availability
from acceval.capacity.curve import (
    MaxRateResult,
    curve_from_points,
    trusted_only,
)
from acceval.capacity.family import capacity_rate
from acceval.capacity.fleet import (
    DemandCostResult,
    FleetPlan,
    FleetPlanResult,
    demand_cost,
    plan_fleet,
)
from acceval.capacity.profile import DemandProfile, load_profile
from acceval.capacity.simulate import SpareWhatIfResult, spare_capacity_whatif
from acceval.capacity.spec import Availability, Demand
from acceval.economics.catalog import Catalog
from acceval.economics.inputs import BilledTarget, resolve_rate
from acceval.economics.provenance import SourcedValue
from acceval.errors import AccevalError
from acceval.metrics import Accuracy
from acceval.results.runlog import LocalServerInfo
from acceval.results.section import PointResult, Section
from acceval.units import number


class CapacityResult(Section):
    """The max rate under the SLO from trusted points, and (with a demand profile) the fleet."""

    max_rate_under_slo: MaxRateResult
    saturation_rps: float | None
    utilization_under_demand: float | None
    declared_utilization: float
    plan: FleetPlanResult | None
    cost: DemandCostResult | None
    availability: AvailabilityResult
    what_if: SpareWhatIfResult | None




class MeasuredTarget(Protocol):
    """What capacity reads of a measured target (``TargetResult`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def points(self) -> Sequence[PointResult]: ...
    @property
    def accuracy(self) -> Accuracy | None: ...
    @property
    def local_server(self) -> LocalServerInfo | None: ...


class CapacityTarget(BilledTarget, Protocol):
    """What capacity reads from a study target (``acceval.study.Target`` is one)."""

    @property
    def availability(self) -> Availability | None: ...


class CapacityStudy(Protocol):
    """What capacity reads from a study."""

    @property
    def demand(self) -> Demand | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def targets(self) -> Sequence[CapacityTarget]: ...

#: Restart time used by the what-if when neither the study nor the run gives one.
DEFAULT_RESTART_S = 300.0


@dataclass(frozen=True, slots=True)
class TargetCapacity:
    target: str
    max_rate: MaxRateResult
    saturation_rps: float | None
    plan: FleetPlan | None
    cost: DemandCostResult | None
    availability: AvailabilityCheck
    what_if: SpareWhatIfResult | None
    declared_utilization: float

    @property
    def utilization(self) -> float | None:
        return None if self.plan is None else self.plan.utilization

    @property
    def utilization_input(self) -> SourcedValue | None:
        """The bill's utilization input, derived from the demand and the measured curve
        (None when the curve gives no rate under the SLO)."""
        u = self.utilization
        if u is None or not u > 0 or self.plan is None:
            return None
        return SourcedValue(value=min(u, 1.0), origin="derived",
                            source=f"demand / provisioned capacity: {self.plan.replica_hours:g} "
                            f"replica-hours at {number(self.plan.per_replica_rps)} rps each "
                            f"({self.max_rate.method}; docs/capacity.md)")

    def result(self) -> CapacityResult:
        """What the result stores: the fleet's hour arrays as lists, the what-if's days."""
        return CapacityResult(
            max_rate_under_slo=self.max_rate, saturation_rps=self.saturation_rps,
            utilization_under_demand=self.utilization,
            declared_utilization=self.declared_utilization,
            plan=None if self.plan is None else self.plan.result(), cost=self.cost,
            availability=self.availability.result(),
            what_if=self.what_if)


def _usd_per_replica_hour(spec: BilledTarget, catalog: Catalog | None) -> float | None:
    if spec.price is None:
        return None
    rate = resolve_rate(spec.name, spec.price, catalog, spec.platform.hardware)
    v = rate.usd_per_chip_hour.value
    return None if v is None else v * spec.platform.chips


def capacity_for(study: CapacityStudy, target: MeasuredTarget, *, catalog: Catalog | None = None,
                 base_dir: str | Path | None = None, profile: DemandProfile | None = None,
                 simulate: bool = True) -> TargetCapacity | None:
    """Everything capacity says about ``target`` under ``study.demand`` (None: no demand).

    ``base_dir`` resolves a relative ``csv:PATH``; pass ``profile`` to reuse one already
    loaded for several targets.
    """
    demand = study.demand
    if demand is None:
        return None
    spec = next((t for t in study.targets if t.name == target.name), None)
    if spec is None:
        raise KeyError(f"target {target.name!r} is not in the study")
    prof = profile if profile is not None else load_profile(demand, base_dir)
    curve = curve_from_points(target.points)
    mr = capacity_rate(curve)  # one load family, open-loop arrivals first
    # Saturation from trusted points only: an untrusted point measured the client.
    sat = max((c.throughput_rps for c in trusted_only(curve) if c.throughput_rps is not None),
              default=None)
    chips = spec.platform.chips
    plan = cost = what_if = None
    if mr.rate_rps is not None and mr.rate_rps > 0:
        plan = plan_fleet(prof, mr.rate_rps, chips_per_replica=chips, headroom=demand.headroom,
                          spares=demand.spares, scaling=demand.scaling)
        price = _usd_per_replica_hour(spec, catalog)
        acc = target.accuracy.accuracy if target.accuracy is not None else None
        if price is not None and acc is not None:
            cost = demand_cost(plan, price, acc, saturation_rps=sat)
        if simulate:
            wi = demand.what_if
            restart = wi.restart_s
            if restart is None and target.local_server is not None:
                restart = target.local_server.startup_s
            seed = wi.seed if wi.seed is not None else study.seed
            what_if = spare_capacity_whatif(
                prof, plan, spares=1, mtbf_h=wi.mtbf_h,
                restart_s=DEFAULT_RESTART_S if restart is None else restart,
                timeout_s=wi.timeout_s, seed=seed, usd_per_replica_hour=price)
    avail = check_availability(
        spec.name, spec.availability, demand,
        peak_replicas=None if plan is None else plan.peak_replicas,
        base_replicas=None if plan is None else plan.min_replicas, chips_per_replica=chips)
    return TargetCapacity(spec.name, mr, sat, plan, cost, avail, what_if,
                          spec.costs.utilization)


def utilization_for(study: CapacityStudy, target: MeasuredTarget, *, catalog: Catalog | None = None,
                    base_dir: str | Path | None = None) -> SourcedValue | None:
    """The utilization input for ``target``'s bill under ``study.demand``, or None (no demand,
    or no load point met the SLO). Skips the what-if simulation."""
    cap = capacity_for(study, target, catalog=catalog, base_dir=base_dir, simulate=False)
    return None if cap is None else cap.utilization_input


class DemandResult(Section):
    """The study's demand as the fleet was sized for it: the profile's hours, or why they
    could not be read (a relative ``csv:`` path that does not resolve from the run folder)."""

    profile: str
    peak_rps: float | None
    days: int
    headroom: float
    spares: int
    scaling: str
    hourly_mean_rps: list[float] | None = None
    hourly_peak_rps: list[float] | None = None
    note: str | None = None

    @property
    def expected_requests_per_day(self) -> float | None:
        if not self.hourly_mean_rps:
            return None
        return sum(self.hourly_mean_rps) * 3600.0 / (len(self.hourly_mean_rps) / 24.0)


def demand_section(demand: Demand | None, base_dir: str | Path | None,
                   plans: Sequence[FleetPlanResult | None] = ()) -> DemandResult | None:
    """The demand's hourly rates, from the profile itself, else from a stored fleet plan."""
    if demand is None:
        return None
    out = DemandResult(profile=demand.profile, peak_rps=demand.peak_rps, days=demand.days,
                       headroom=demand.headroom, spares=demand.spares, scaling=demand.scaling)
    try:
        mean, peak = load_profile(demand, base_dir).hourly()
    except (AccevalError, OSError, ValueError) as exc:
        plan = next((p for p in plans if p is not None and p.hourly_mean_rps), None)
        if plan is not None:
            return out.model_copy(update={"hourly_mean_rps": list(plan.hourly_mean_rps),
                                          "hourly_peak_rps": list(plan.hourly_peak_rps)})
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return out.model_copy(update={"note": f"the demand profile could not be loaded ({why})"})
    return out.model_copy(update={"hourly_mean_rps": [float(x) for x in mean],
                                  "hourly_peak_rps": [float(x) for x in peak]})
