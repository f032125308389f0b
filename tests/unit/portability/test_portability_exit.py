"""Exit test: the exit-cost formula by hand, answers need evidence, the managed-service axes
stay apart, and the readiness summary."""

from __future__ import annotations

import pytest

from acceval.economics import StudyCosts
from acceval.economics.provenance import SourcedValue, assumed
from acceval.portability import (
    ExitSpec,
    ManagedService,
    assess_managed_service,
    exit_cost,
    exit_test,
)
from acceval.portability.ledger import MigrationLedger

DOC = "https://example.com/service-terms"
ARTICLE = "shared/seeds/000_b56544e53be49cd0.txt"


def test_exit_cost_hand_computed() -> None:
    c = exit_cost(
        engineering_hours=assumed(80), engineer_usd_per_hour=assumed(120),
        revalidation_usd=assumed(2500), recompile_usd=assumed(400),
        stranded_commitment_usd=assumed(30_000), resale_usd=assumed(10_000),
        egress_gb=assumed(500), egress_usd_per_gb=assumed(0.09),
        dual_running_hours=assumed(720),
        fleet_usd_per_hour=SourcedValue(value=98.32, origin="catalog", source="price list",
                                        date="2026-10-01"),
    )
    # 80*120 = 9600; 2500; 400; 30000-10000 = 20000; 500*0.09 = 45; 720*98.32 = 70790.4
    by_name = {i.name: i.usd for i in c.items}
    assert by_name == pytest.approx({
        "engineering": 9600.0, "re-validation": 2500.0, "re-compile/tune": 400.0,
        "stranded commitment": 20_000.0, "egress": 45.0, "dual running": 70_790.4})
    assert c.total_usd == pytest.approx(103_335.4)
    dual = next(i for i in c.items if i.name == "dual running")
    assert dual.inputs["fleet_usd_per_hour"].origin == "catalog"  # provenance travels


def test_missing_inputs_are_none_not_zero() -> None:
    c = exit_cost(engineering_hours=assumed(10), engineer_usd_per_hour=assumed(100),
                  stranded_commitment_usd=assumed(0))
    assert c.total_usd is None
    assert c.known_usd == pytest.approx(1000.0)  # engineering + a zero commitment
    assert set(c.missing) == {"re-validation", "re-compile/tune", "egress", "dual running"}
    # a commitment without a declared resale value stays unknown
    c2 = exit_cost(stranded_commitment_usd=assumed(5000))
    assert "stranded commitment" in c2.missing
    assert c2.total_usd is None


def _forge(**overrides: object) -> ManagedService:
    base: dict[str, object] = {
        "name": "hosted fine-tuning service",
        "customization_depth": "pre_training",
        "depth_evidence": ARTICLE,
        "depth_quote": "permite empezar desde puntos de control de Nova en preentrenamiento",
        "model_ownership": {"status": "unknown"},
        "weights_export": {"status": "no", "evidence": ARTICLE,
                           "quote": "no debe confundirse con un modelo de pesos abiertos"},
        "optimizer_state_export": {"status": "unknown"},
        "data_deletion": {"status": "yes", "evidence": DOC, "answer": "on request, 30 days"},
        "logs_retained": {"status": "yes"},  # no evidence: must become unknown
        "service_end": {"status": "unknown"},
    }
    base.update(overrides)
    return ManagedService.model_validate(base)


def test_managed_service_keeps_depth_and_freedom_apart() -> None:
    a = assess_managed_service(_forge())
    assert a.customization_depth.level == "pre_training"
    assert a.customization_depth.rank == a.customization_depth.of  # deepest
    assert a.freedom_to_leave.level == "locked"  # weights cannot leave
    assert a.customization_depth.evidence.kind == "file"
    # no merged score: the two axes are separate keys, nothing combines them
    assert not ({"score", "overall", "portability_score"} & set(type(a).model_fields))
    assert a.questions["logs_retained"].status == "unknown"
    assert "without evidence" in a.questions["logs_retained"].note
    assert a.questions["weights_export"].evidence.quote.startswith("no debe")


def test_shallow_but_free_service() -> None:
    yes = {"status": "yes", "evidence": DOC}
    a = assess_managed_service(_forge(
        customization_depth="adapters", model_ownership=yes, weights_export=yes,
        optimizer_state_export=yes, data_deletion=yes, service_end=yes))
    assert a.customization_depth.rank == 2
    assert a.freedom_to_leave.level == "free"
    assert a.freedom_to_leave.favorable == 5


def _yes(fmt: str) -> dict[str, object]:
    return {"status": "yes", "formats": [fmt], "evidence": DOC}


def test_exit_test_ready_with_hours_from_the_ledger() -> None:
    spec = ExitSpec.model_validate({
        "weights": _yes("safetensors"), "optimizer_state": {"status": "n/a"},
        "data": _yes("jsonl"), "logs": _yes("json"), "code": _yes("git"),
        "revalidation_usd": 500, "recompile_usd": 0, "egress_gb": 20,
        "stranded_commitment_usd": 0, "dual_running_hours": 24})
    led = MigrationLedger("trn", "h200", adaptation_hours=40)
    t = exit_test(spec, costs=StudyCosts(engineer_usd_per_hour=100, egress_usd_per_gb=0.09),
                  ledger=led, fleet_usd_per_hour=SourcedValue(value=10.0, origin="measured",
                                                              source="bill"),
                  artifact_verdict="pass")
    assert t.migration_hours.value == 40 and t.migration_hours.origin == "derived"
    assert t.cost.total_usd == pytest.approx(40 * 100 + 500 + 0 + 0 + 20 * 0.09 + 24 * 10)
    assert t.readiness == "ready" and t.reasons == []
    assert t.exports["weights"].formats == ["safetensors"]


def test_exit_test_partial_and_locked() -> None:
    spec = ExitSpec.model_validate({
        "weights": _yes("safetensors"), "data": _yes("jsonl"), "code": _yes("git"),
        "logs": {"status": "partial", "evidence": DOC},
        "lost_functions": ["NKI kernels"], "engineering_hours": 10})
    t = exit_test(spec, costs=StudyCosts(engineer_usd_per_hour=100))
    assert t.readiness == "partial"
    assert "would lose: NKI kernels" in t.reasons
    assert any(r.startswith("exit cost incomplete") for r in t.reasons)
    assert "logs: partial" in t.reasons and "optimizer_state: unknown" in t.reasons
    locked = exit_test(ExitSpec.model_validate({
        "weights": {"status": "no", "evidence": DOC}}), costs=StudyCosts())
    assert locked.readiness == "locked" and locked.reasons == ["weights cannot be exported"]
    service = exit_test(ExitSpec.model_validate({"managed_service": _forge().model_dump()}),
                        costs=StudyCosts())
    assert service.readiness == "locked"
    assert service.managed_service is not None
    assert service.managed_service.freedom_to_leave.level == "locked"
