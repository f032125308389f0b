"""Availability: a target that cannot be had where and when the demand needs it is flagged."""

from __future__ import annotations

from acceval.capacity import Availability, Demand, availability_without_demand, check_availability

DEMAND = Demand(profile="builtin:flat", peak_rps=10, residency=["eu-west-1", "eu-central-1"],
                need_by_days=30)


def _fields(check: object, severity: str) -> set[str]:
    return {f.field for f in check.findings if f.severity == severity}  # type: ignore[attr-defined]


def test_all_declared_and_fine_is_available() -> None:
    av = Availability(regions=["eu-west-1", "us-east-1"], quota_replicas=10, lead_time_days=7,
                      failover_region="eu-central-1", reserved_replicas=8)
    c = check_availability("h200", av, DEMAND, peak_replicas=8, base_replicas=2,
                           chips_per_replica=8)
    assert c.status == "available", c.findings
    assert c.usable_regions == ("eu-west-1",) and c.peak_chips == 64
    row = c.result()
    assert row.blockers == [] and row.lead_time_days == 7


def test_quota_residency_and_lead_time_block() -> None:
    av = Availability(regions=["us-east-1"], quota_replicas=4, quota_chips=16,
                      lead_time_days=90, failover_region="us-west-2")
    c = check_availability("trn2", av, DEMAND, peak_replicas=5, chips_per_replica=4)
    assert c.status == "blocked"
    assert _fields(c, "blocker") == {"regions", "quota_replicas", "quota_chips",
                                     "lead_time_days"}
    assert "failover_region" in _fields(c, "warning")
    assert any("needs 5 replicas; quota allows 4" in f.message for f in c.blockers)
    assert any("90 days" in m for m in c.result().blockers)


def test_partial_reservation_is_a_risk_not_a_blocker() -> None:
    av = Availability(regions=["eu-west-1"], quota_replicas=20, lead_time_days=1,
                      reserved_replicas=3, failover_region="eu-central-1")
    c = check_availability("b200", av, DEMAND, peak_replicas=10, base_replicas=3)
    assert c.status == "at-risk" and _fields(c, "warning") == {"reserved_replicas"}


def test_undeclared_is_unknown_never_available() -> None:
    c = check_availability("x", None, DEMAND, peak_replicas=3)
    assert c.status == "unknown" and c.peak_replicas == 3
    bare = check_availability("x", Availability(), None, peak_replicas=3)
    assert bare.status == "unknown"
    assert {"regions", "quota", "lead_time_days", "failover_region"} <= _fields(bare, "note")


def test_without_demand_the_deployment_is_checked_against_quota() -> None:
    # No demand profile: the study still deploys one replica of 16 chips, and a 8-chip quota
    # blocks it.
    av = Availability(regions=["us-east-1"], quota_chips=8, lead_time_days=3,
                      failover_region="us-west-2")
    c = availability_without_demand("trn2", av, chips_per_replica=16)
    assert c.status == "blocked" and _fields(c, "blocker") == {"quota_chips"}
    assert c.peak_replicas == 1 and c.peak_chips == 16
    assert "needs 16 chips; quota allows 8" in c.blockers[0].message
    assert "no demand profile" in c.result().assessed_for
    ok = availability_without_demand("trn2", av.model_copy(update={"quota_chips": 64}),
                                     chips_per_replica=16)
    assert ok.status == "available"
    none_reserved = availability_without_demand(
        "trn2", av.model_copy(update={"quota_chips": 64, "reserved_replicas": 0}),
        chips_per_replica=16)
    assert none_reserved.status == "at-risk"
    assert availability_without_demand("x", None, chips_per_replica=1).status == "unknown"
