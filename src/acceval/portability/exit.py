"""The exit test: could we leave, in which formats, how long it would take, what would be lost
and what it would cost. And, for a managed service, customization depth and freedom to leave
as two separate axes.

Exit cost, each input a :class:`~acceval.economics.provenance.SourcedValue`::

    exit_cost = engineering_hours × engineer $/h + re-validation + re-compile/tune compute
              + (stranded commitment − resale value) + egress GB × $/GB
              + dual-running hours × fleet $/h

Missing inputs leave their item (and the total) ``None``, never 0; ``known_usd`` sums what is
known and ``missing`` names the rest.
"""

from __future__ import annotations

from typing import Literal

from pydantic import computed_field

from acceval.economics.provenance import MISSING, assumed
from acceval.economics.spec import StudyCosts
from acceval.portability.evidence import Evidence, Verdict, from_reference
from acceval.portability.ledger import MigrationLedger
from acceval.portability.spec import Answer, ExitSpec, ManagedService
from acceval.results.section import Section, SourcedValue

Readiness = Literal["ready", "partial", "locked"]


class ExportAnswer(Section):
    status: str
    formats: list[str]
    answer: str | None
    evidence: Evidence | None
    note: str | None


class ExitCostItemResult(Section):
    name: str
    usd: float | None
    formula: str
    inputs: dict[str, SourcedValue]


class ExitCostResult(Section):
    """The exit bill item by item; an item whose inputs are missing is ``usd=None``."""

    items: list[ExitCostItemResult]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def missing(self) -> list[str]:
        return [i.name for i in self.items if i.usd is None]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def known_usd(self) -> float:
        return sum(i.usd for i in self.items if i.usd is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_usd(self) -> float | None:
        return None if self.missing else self.known_usd


class CustomizationDepth(Section):
    level: str
    rank: int
    of: int
    evidence: Evidence | None


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
    """Could we leave: exports, what would be lost, migration effort and cost, readiness."""

    readiness: Readiness
    reasons: list[str]
    exports: dict[str, ExportAnswer]
    lost_functions: list[str]
    migration_hours: SourcedValue
    cost: ExitCostResult
    managed_service: ManagedServiceResult | None
    notes: list[str]



ASSETS = ("weights", "optimizer_state", "data", "logs", "code")
DEPTHS = ("none", "prompting", "adapters", "fine_tuning", "post_training", "mid_training",
          "pre_training")
SERVICE_QUESTIONS = ("model_ownership", "weights_export", "optimizer_state_export",
                     "data_deletion", "logs_retained", "service_end")
# "yes" to these means the customer can leave with what it paid for.
_FREEDOM_QUESTIONS = ("model_ownership", "weights_export", "optimizer_state_export",
                      "data_deletion", "service_end")


def _product(a: SourcedValue, b: SourcedValue) -> float | None:
    return None if a.value is None or b.value is None else a.value * b.value


def exit_cost(*, engineering_hours: SourcedValue = MISSING,
              engineer_usd_per_hour: SourcedValue = MISSING,
              revalidation_usd: SourcedValue = MISSING, recompile_usd: SourcedValue = MISSING,
              stranded_commitment_usd: SourcedValue = MISSING, resale_usd: SourcedValue = MISSING,
              egress_gb: SourcedValue = MISSING, egress_usd_per_gb: SourcedValue = MISSING,
              dual_running_hours: SourcedValue = MISSING,
              fleet_usd_per_hour: SourcedValue = MISSING) -> ExitCostResult:
    """The exit bill, item by item (pure)."""
    stranded = stranded_commitment_usd.value
    if stranded is not None and stranded == 0:
        net: float | None = 0.0
    elif stranded is None or resale_usd.value is None:
        net = None
    else:
        net = max(0.0, stranded - resale_usd.value)
    return ExitCostResult(items=[
        ExitCostItemResult(name="engineering", usd=_product(engineering_hours,
                                                            engineer_usd_per_hour),
                     formula="engineering_hours × engineer_usd_per_hour",
                     inputs={"engineering_hours": engineering_hours,
                      "engineer_usd_per_hour": engineer_usd_per_hour}),
        ExitCostItemResult(name="re-validation", usd=revalidation_usd.value,
                           formula="revalidation_usd",
                     inputs={"revalidation_usd": revalidation_usd}),
        ExitCostItemResult(name="re-compile/tune", usd=recompile_usd.value, formula="recompile_usd",
                     inputs={"recompile_usd": recompile_usd}),
        ExitCostItemResult(name="stranded commitment", usd=net,
                           formula="max(0, stranded_commitment_usd − resale_usd)",
                     inputs={"stranded_commitment_usd": stranded_commitment_usd,
                      "resale_usd": resale_usd}),
        ExitCostItemResult(name="egress", usd=_product(egress_gb, egress_usd_per_gb),
                     formula="egress_gb × egress_usd_per_gb",
                     inputs={"egress_gb": egress_gb, "egress_usd_per_gb": egress_usd_per_gb}),
        ExitCostItemResult(name="dual running", usd=_product(dual_running_hours,
                                                             fleet_usd_per_hour),
                     formula="dual_running_hours × fleet_usd_per_hour",
                     inputs={"dual_running_hours": dual_running_hours,
                      "fleet_usd_per_hour": fleet_usd_per_hour}),
    ])


def export_answer(a: Answer) -> ExportAnswer:
    """An answer as reported: a yes/no/partial without evidence becomes ``unknown``."""
    ev = from_reference(a.evidence, a.quote)
    status = a.status
    note = None
    if ev is None and status in ("yes", "no", "partial"):
        note = f"declared '{status}' without evidence"
        status = "unknown"
    return ExportAnswer(status=status, formats=list(a.formats), answer=a.answer, evidence=ev,
                        note=note)


def assess_managed_service(ms: ManagedService) -> ManagedServiceResult:
    """Customization depth and freedom to leave, kept apart: a deep customization says nothing
    about whether the result can leave (the article's Nova Forge point)."""
    qs = {q: export_answer(getattr(ms, q)) for q in SERVICE_QUESTIONS}
    statuses = [qs[q].status for q in _FREEDOM_QUESTIONS]
    favorable = sum(s == "yes" for s in statuses)
    unknown = sum(s == "unknown" for s in statuses)
    if qs["weights_export"].status == "no" or qs["model_ownership"].status == "no":
        level = "locked"
    elif favorable == len(statuses):
        level = "free"
    elif unknown * 2 > len(statuses):
        level = "unknown"
    else:
        level = "restricted"
    depth_ev = from_reference(ms.depth_evidence, ms.depth_quote)
    return ManagedServiceResult(
        service=ms.name,
        customization_depth=CustomizationDepth(
            level=ms.customization_depth, rank=DEPTHS.index(ms.customization_depth),
            of=len(DEPTHS) - 1, evidence=depth_ev),
        freedom_to_leave=FreedomToLeave(level=level, favorable=favorable, unknown=unknown,
                                        of=len(statuses)),
        questions=qs)


def _readiness(exports: dict[str, ExportAnswer], lost: list[str], cost: ExitCostResult,
               artifact: Verdict | None, service: ManagedServiceResult | None
               ) -> tuple[Readiness, list[str]]:
    locked = [f"{a} cannot be exported" for a in ("weights", "data", "code")
              if exports[a].status == "no"]
    if service is not None and service.freedom_to_leave.level == "locked":
        locked.append(f"{service.service}: the resulting model cannot leave the service")
    if locked:
        return "locked", locked
    reasons = [f"{a}: {exports[a].status}" for a in ASSETS
               if exports[a].status not in ("yes", "n/a")]
    reasons += [f"would lose: {f}" for f in lost]
    if cost.missing:
        reasons.append("exit cost incomplete: " + ", ".join(cost.missing))
    if artifact == "fail":
        reasons.append("artifact portability check failed")
    if service is not None and service.freedom_to_leave.level != "free":
        reasons.append(f"{service.service}: freedom to leave is "
                       f"{service.freedom_to_leave.level}")
    return ("partial", reasons) if reasons else ("ready", [])


def exit_test(spec: ExitSpec, *, costs: StudyCosts, ledger: MigrationLedger | None = None,
              fleet_usd_per_hour: SourcedValue | None = None,
              artifact_verdict: Verdict | None = None) -> ExitResult:
    """Exports, lost functions, migration time and cost, and a readiness summary."""
    exports = {a: export_answer(getattr(spec, a)) for a in ASSETS}
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
    return ExitResult(readiness=readiness, reasons=reasons, exports=exports,
                      lost_functions=list(spec.lost_functions), migration_hours=hours, cost=cost,
                      managed_service=service, notes=[])


def _opt(v: float | None) -> SourcedValue:
    return assumed(v) if v is not None else MISSING
