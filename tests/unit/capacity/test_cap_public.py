"""The public names of acceval.capacity are pinned: changing them is a deliberate act."""

from __future__ import annotations

import numpy as np

import acceval.capacity as cap
from acceval.capacity import DemandProfile, nhpp_schedule, replay_seed

PUBLIC = {
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
}


def test_public_names_are_pinned() -> None:
    assert set(cap.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(cap, name) is not None


def test_replay_seed_defaults_to_the_study_seed_and_is_its_own_dimension() -> None:
    p = DemandProfile((5.0,) * 24)
    a = nhpp_schedule(p, 60, seed=replay_seed(3))
    assert np.array_equal(a, nhpp_schedule(p, 60, seed=replay_seed(3, None)))
    assert np.array_equal(nhpp_schedule(p, 60, seed=replay_seed(0, 3)), a)
    # not the load generator's arrivals stream for the same study seed
    assert replay_seed(3).spawn_key != (0, 0)
    assert not np.array_equal(a, nhpp_schedule(p, 60, seed=replay_seed(4)))
