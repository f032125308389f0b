"""Capacity: demand profiles and their Poisson replay, the max rate under the SLO from a
measured curve, fleet sizing hour by hour, utilization and idle chip-hours, queueing
approximations, availability checks and a vectorised fleet what-if with failures.

Pure functions over arrays and results. Formulas and how to read the outputs:
docs/capacity.md.
"""

from acceval.capacity.apply import DEFAULT_RESTART_S, TargetCapacity, capacity_for, utilization_for
from acceval.capacity.availability import (
    AvailabilityCheck,
    Finding,
    availability_without_demand,
    check_availability,
)
from acceval.capacity.curve import (
    BatchStep,
    CurvePoint,
    ExcludedPoint,
    MaxRateResult,
    batching_families,
    batching_knee,
    batching_tradeoff,
    curve_from_points,
    max_rate_under_slo,
    trusted_only,
)
from acceval.capacity.fleet import (
    DemandCostResult,
    FleetPlan,
    demand_cost,
    plan_fleet,
    replicas_needed,
)
from acceval.capacity.profile import (
    BUILTIN_SHAPES,
    BurstWindow,
    DemandProfile,
    builtin_profile,
    compress_factor,
    load_profile,
    nhpp_schedule,
    parse_profile_csv,
    replay_seed,
)
from acceval.capacity.queueing import (
    QueueEstimate,
    erlang_b,
    erlang_c,
    ggc,
    min_servers,
    mmc,
    variability_factor,
)
from acceval.capacity.simulate import (
    FleetSimSummary,
    Outage,
    SpareWhatIfResult,
    simulate_fleet,
    spare_capacity_whatif,
    with_spares,
)
from acceval.capacity.spec import Availability, Burst, Demand, Replay, WhatIf

__all__ = [
    "BUILTIN_SHAPES", "DEFAULT_RESTART_S", "Availability", "AvailabilityCheck", "BatchStep",
    "Burst", "BurstWindow", "CurvePoint", "Demand", "DemandCostResult", "DemandProfile",
    "ExcludedPoint",
    "Finding", "FleetPlan", "FleetSimSummary", "MaxRateResult", "Outage", "QueueEstimate", "Replay",
    "SpareWhatIfResult", "TargetCapacity", "WhatIf", "availability_without_demand",
    "batching_families", "batching_knee", "batching_tradeoff",
    "builtin_profile", "capacity_for", "check_availability", "compress_factor",
    "curve_from_points", "demand_cost", "erlang_b", "erlang_c", "ggc", "load_profile",
    "max_rate_under_slo", "min_servers", "mmc", "nhpp_schedule", "parse_profile_csv",
    "plan_fleet", "replay_seed", "replicas_needed", "simulate_fleet", "spare_capacity_whatif",
    "trusted_only", "utilization_for", "variability_factor", "with_spares",
]
