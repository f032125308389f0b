"""The exit test: could we leave, in which formats, how long it would take, what would be lost
and what it would cost. And, for a managed service, customization depth and freedom to leave
as two separate axes.

Exit cost (reference §9), each input a :class:`~acceval.economics.provenance.SourcedValue`::

    exit_cost = engineering_hours × engineer $/h + re-validation + re-compile/tune compute
              + (stranded commitment − resale value) + egress GB × $/GB
              + dual-running hours × fleet $/h

Missing inputs leave their item (and the total) ``None``, never 0; ``known_usd`` sums what is
known and ``missing`` names the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from acceval.economics.provenance import MISSING, SourcedValue, assumed
from acceval.economics.spec import StudyCosts
from acceval.portability.evidence import EvidenceResult, Verdict, from_reference
from acceval.portability.ledger import MigrationLedger
from acceval.portability.spec import Answer, ExitSpec, ManagedService
from acceval.results.section import Section, SourcedValue


class ExportAnswer(Section):
    status: str
    formats: list[str]
    answer: str | None
    evidence: EvidenceResult | None
    note: str | None


class ExitCostItemResult(Section):
    name: str
    usd: float | None
    formula: str
    inputs: dict[str, SourcedValue]


class ExitCostResult(Section):
    total_usd: float | None
    known_usd: float
    missing: list[str]
    items: list[ExitCostItemResult]


class CustomizationDepth(Section):
    level: str
    rank: int
    of: int
    evidence: EvidenceResult | None


class FreedomToLeave(Section):
    level: str
    favorable: int
    unknown: int
    of: int


class ManagedServiceResult(Section):
    service: str
    customization_depth: CustomizationDepth
    freedom_to_leave: FreedomToLeave
    questions: dict[str, ExportAnswer]


class ExitResult(Section):
    readiness: str
    reasons: list[str]
    exports: dict[str, ExportAnswer]
    lost_functions: list[str]
    migration_hours: SourcedValue
    cost: ExitCostResult
    managed_service: ManagedServiceResult | None
    notes: list[str]



Readiness = Literal["ready", "partial", "locked"]
ASSETS = ("weights", "optimizer_state", "data", "logs", "code")
DEPTHS = ("none", "prompting", "adapters", "fine_tuning", "post_training", "mid_training",
          "pre_training")
SERVICE_QUESTIONS = ("model_ownership", "weights_export", "optimizer_state_export",
                     "data_deletion", "logs_retained", "service_end")
# "yes" to these means the customer can leave with what it paid for.
_FREEDOM_QUESTIONS = ("model_ownership", "weights_export", "optimizer_state_export",
                      "data_deletion", "service_end")


@dataclass(frozen=True, slots=True)
class ExitCostItem:
    name: str
    usd: float | None
    formula: str
    inputs: dict[str, SourcedValue]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "usd": self.usd, "formula": self.formula,
                "inputs": {k: v.to_dict() for k, v in self.inputs.items()}}


@dataclass(frozen=True, slots=True)
class ExitCost:
    items: tuple[ExitCostItem, ...]

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.items if i.usd is None)

    @property
    def known_usd(self) -> float:
        return sum(i.usd for i in self.items if i.usd is not None)

    @property
    def total_usd(self) -> float | None:
        return None if self.missing else self.known_usd

    def to_dict(self) -> dict[str, Any]:
        return {"total_usd": self.total_usd, "known_usd": self.known_usd,
                "missing": list(self.missing), "items": [i.to_dict() for i in self.items]}


def _product(a: SourcedValue, b: SourcedValue) -> float | None:
    return None if a.value is None or b.value is None else a.value * b.value


def exit_cost(*, engineering_hours: SourcedValue = MISSING, engineer_usd_per_hour: SourcedValue = MISSING,
              revalidation_usd: SourcedValue = MISSING, recompile_usd: SourcedValue = MISSING,
              stranded_commitment_usd: SourcedValue = MISSING, resale_usd: SourcedValue = MISSING,
              egress_gb: SourcedValue = MISSING, egress_usd_per_gb: SourcedValue = MISSING,
              dual_running_hours: SourcedValue = MISSING,
              fleet_usd_per_hour: SourcedValue = MISSING) -> ExitCost:
    """The exit bill, item by item (pure)."""
    stranded = stranded_commitment_usd.value
    if stranded is not None and stranded == 0:
        net: float | None = 0.0
    elif stranded is None or resale_usd.value is None:
        net = None
    else:
        net = max(0.0, stranded - resale_usd.value)
    return ExitCost((
        ExitCostItem("engineering", _product(engineering_hours, engineer_usd_per_hour),
                     "engineering_hours × engineer_usd_per_hour",
                     {"engineering_hours": engineering_hours,
                      "engineer_usd_per_hour": engineer_usd_per_hour}),
        ExitCostItem("re-validation", revalidation_usd.value, "revalidation_usd",
                     {"revalidation_usd": revalidation_usd}),
        ExitCostItem("re-compile/tune", recompile_usd.value, "recompile_usd",
                     {"recompile_usd": recompile_usd}),
        ExitCostItem("stranded commitment", net, "max(0, stranded_commitment_usd − resale_usd)",
                     {"stranded_commitment_usd": stranded_commitment_usd,
                      "resale_usd": resale_usd}),
        ExitCostItem("egress", _product(egress_gb, egress_usd_per_gb),
                     "egress_gb × egress_usd_per_gb",
                     {"egress_gb": egress_gb, "egress_usd_per_gb": egress_usd_per_gb}),
        ExitCostItem("dual running", _product(dual_running_hours, fleet_usd_per_hour),
                     "dual_running_hours × fleet_usd_per_hour",
                     {"dual_running_hours": dual_running_hours,
                      "fleet_usd_per_hour": fleet_usd_per_hour}),
    ))


def answer_dict(a: Answer) -> dict[str, Any]:
    """An answer as reported: a yes/no/partial without evidence becomes ``unknown``."""
    ev = from_reference(a.evidence, a.quote)
    status = a.status
    note = None
    if ev is None and status in ("yes", "no", "partial"):
        note = f"declared '{status}' without evidence"
        status = "unknown"
    return {"status": status, "formats": list(a.formats), "answer": a.answer,
            "evidence": ev.to_dict() if ev else None, "note": note}


def assess_managed_service(ms: ManagedService) -> dict[str, Any]:
    """Customization depth and freedom to leave, kept apart: a deep customization says nothing
    about whether the result can leave (the article's Nova Forge point)."""
    qs = {q: answer_dict(getattr(ms, q)) for q in SERVICE_QUESTIONS}
    statuses = [qs[q]["status"] for q in _FREEDOM_QUESTIONS]
    favorable = sum(s == "yes" for s in statuses)
    unknown = sum(s == "unknown" for s in statuses)
    if qs["weights_export"]["status"] == "no" or qs["model_ownership"]["status"] == "no":
        level = "locked"
    elif favorable == len(statuses):
        level = "free"
    elif unknown * 2 > len(statuses):
        level = "unknown"
    else:
        level = "restricted"
    depth_ev = from_reference(ms.depth_evidence, ms.depth_quote)
    return {
        "service": ms.name,
        "customization_depth": {
            "level": ms.customization_depth, "rank": DEPTHS.index(ms.customization_depth),
            "of": len(DEPTHS) - 1, "evidence": depth_ev.to_dict() if depth_ev else None},
        "freedom_to_leave": {"level": level, "favorable": favorable, "unknown": unknown,
                             "of": len(statuses)},
        "questions": qs,
    }


@dataclass(frozen=True, slots=True)
class ExitTest:
    exports: dict[str, dict[str, Any]]
    lost_functions: tuple[str, ...]
    migration_hours: SourcedValue
    cost: ExitCost
    readiness: Readiness
    reasons: tuple[str, ...]
    managed_service: dict[str, Any] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"readiness": self.readiness, "reasons": list(self.reasons),
                "exports": self.exports, "lost_functions": list(self.lost_functions),
                "migration_hours": self.migration_hours.to_dict(),
                "cost": self.cost.to_dict(), "managed_service": self.managed_service,
                "notes": list(self.notes)}


def _readiness(exports: dict[str, dict[str, Any]], lost: list[str], cost: ExitCost,
               artifact: Verdict | None, service: dict[str, Any] | None
               ) -> tuple[Readiness, list[str]]:
    locked = [f"{a} cannot be exported" for a in ("weights", "data", "code")
              if exports[a]["status"] == "no"]
    if service is not None and service["freedom_to_leave"]["level"] == "locked":
        locked.append(f"{service['service']}: the resulting model cannot leave the service")
    if locked:
        return "locked", locked
    reasons = [f"{a}: {exports[a]['status']}" for a in ASSETS
               if exports[a]["status"] not in ("yes", "n/a")]
    reasons += [f"would lose: {f}" for f in lost]
    if cost.missing:
        reasons.append("exit cost incomplete: " + ", ".join(cost.missing))
    if artifact == "fail":
        reasons.append("artifact portability check failed")
    if service is not None and service["freedom_to_leave"]["level"] != "free":
        reasons.append(f"{service['service']}: freedom to leave is "
                       f"{service['freedom_to_leave']['level']}")
    return ("partial", reasons) if reasons else ("ready", [])


def exit_test(spec: ExitSpec, *, costs: StudyCosts, ledger: MigrationLedger | None = None,
              fleet_usd_per_hour: SourcedValue | None = None,
              artifact_verdict: Verdict | None = None) -> ExitTest:
    """Exports, lost functions, migration time and cost, and a readiness summary."""
    exports = {a: answer_dict(getattr(spec, a)) for a in ASSETS}
    if spec.engineering_hours is not None:
        hours = assumed(spec.engineering_hours)
    elif ledger is not None and ledger.adaptation_hours is not None:
        hours = SourcedValue(value=ledger.adaptation_hours, origin="derived",
                        source="migration ledger: adaptation_hours to port here, taken as the "
                        "effort to port away")
    else:
        hours = MISSING
    fleet = (assumed(spec.fleet_usd_per_hour) if spec.fleet_usd_per_hour is not None
             else fleet_usd_per_hour or MISSING)
    cost = exit_cost(
        engineering_hours=hours,
        engineer_usd_per_hour=_opt(costs.engineer_usd_per_hour),
        revalidation_usd=_opt(spec.revalidation_usd), recompile_usd=_opt(spec.recompile_usd),
        stranded_commitment_usd=_opt(spec.stranded_commitment_usd),
        resale_usd=_opt(spec.resale_usd), egress_gb=_opt(spec.egress_gb),
        egress_usd_per_gb=_opt(costs.egress_usd_per_gb),
        dual_running_hours=_opt(spec.dual_running_hours), fleet_usd_per_hour=fleet)
    service = (assess_managed_service(spec.managed_service)
               if spec.managed_service is not None else None)
    readiness, reasons = _readiness(exports, list(spec.lost_functions), cost, artifact_verdict,
                                    service)
    return ExitTest(exports, tuple(spec.lost_functions), hours, cost, readiness,
                    tuple(reasons), service)


def _opt(v: float | None) -> SourcedValue:
    return assumed(v) if v is not None else MISSING
