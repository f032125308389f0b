"""Capacity: demand profiles and their Poisson replay, the max rate under the SLO from a
measured curve, fleet sizing hour by hour, utilization and idle chip-hours, queueing
approximations, availability checks and a vectorised fleet what-if with failures.

Pure functions over arrays and results. Formulas and how to read the outputs:
docs/capacity.md.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.capacity.apply import (
        DEFAULT_RESTART_S,
        TargetCapacity,
        capacity_for,
        utilization_for,
    )
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

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "DEFAULT_RESTART_S": "acceval.capacity.apply", "TargetCapacity": "acceval.capacity.apply",
    "capacity_for": "acceval.capacity.apply", "utilization_for": "acceval.capacity.apply",
    "AvailabilityCheck": "acceval.capacity.availability",
    "Finding": "acceval.capacity.availability",
    "availability_without_demand": "acceval.capacity.availability",
    "check_availability": "acceval.capacity.availability",
    "BatchStep": "acceval.capacity.curve", "CurvePoint": "acceval.capacity.curve",
    "ExcludedPoint": "acceval.capacity.curve", "MaxRateResult": "acceval.capacity.curve",
    "batching_families": "acceval.capacity.curve", "batching_knee": "acceval.capacity.curve",
    "batching_tradeoff": "acceval.capacity.curve",
    "curve_from_points": "acceval.capacity.curve",
    "max_rate_under_slo": "acceval.capacity.curve", "trusted_only": "acceval.capacity.curve",
    "DemandCostResult": "acceval.capacity.fleet", "FleetPlan": "acceval.capacity.fleet",
    "demand_cost": "acceval.capacity.fleet", "plan_fleet": "acceval.capacity.fleet",
    "replicas_needed": "acceval.capacity.fleet", "BUILTIN_SHAPES": "acceval.capacity.profile",
    "BurstWindow": "acceval.capacity.profile", "DemandProfile": "acceval.capacity.profile",
    "builtin_profile": "acceval.capacity.profile",
    "compress_factor": "acceval.capacity.profile", "load_profile": "acceval.capacity.profile",
    "nhpp_schedule": "acceval.capacity.profile",
    "parse_profile_csv": "acceval.capacity.profile", "replay_seed": "acceval.capacity.profile",
    "QueueEstimate": "acceval.capacity.queueing", "erlang_b": "acceval.capacity.queueing",
    "erlang_c": "acceval.capacity.queueing", "ggc": "acceval.capacity.queueing",
    "min_servers": "acceval.capacity.queueing", "mmc": "acceval.capacity.queueing",
    "variability_factor": "acceval.capacity.queueing",
    "FleetSimSummary": "acceval.capacity.simulate", "Outage": "acceval.capacity.simulate",
    "SpareWhatIfResult": "acceval.capacity.simulate",
    "simulate_fleet": "acceval.capacity.simulate",
    "spare_capacity_whatif": "acceval.capacity.simulate",
    "with_spares": "acceval.capacity.simulate", "Availability": "acceval.capacity.spec",
    "Burst": "acceval.capacity.spec", "Demand": "acceval.capacity.spec",
    "Replay": "acceval.capacity.spec", "WhatIf": "acceval.capacity.spec"})

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
