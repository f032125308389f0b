"""The three levels of portability, each a verdict with its evidence.

- **source**: the same program runs. Every target acceval measured ran the same study through
  the same client path (the OpenAI-compatible API), so a measured target passes; the ledger
  adds how many lines of model/serving code had to change.
- **artifact**: weights and checkpoints move. An :class:`~acceval.portability.artifact.
  ArtifactCheck` (checksums, two runtimes, agreement), or a declared verdict with its source.
- **performance**: the cost and latency contract holds on the target, measured, with margins.

"Que el código arranque no garantiza que aproveche la arquitectura": a target can pass the
first level and fail the third, so the three verdicts are never merged into one score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import Field, field_validator

from acceval.economics.apply import TargetEconomics
from acceval.portability.artifact import ArtifactCheck
from acceval.portability.evidence import Evidence, Verdict, declared, from_reference
from acceval.portability.ledger import MigrationLedger
from acceval.portability.spec import ArtifactSpec, Contract
from acceval.results.runlog import EndpointLog, LocalServerInfo
from acceval.results.section import PointResult, Section
from acceval.units import number


class PortableTarget(Protocol):
    """What the portability levels read of a measured target (``PortableTarget`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def points(self) -> Sequence[PointResult]: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def endpoint(self) -> EndpointLog | None: ...
    @property
    def economics(self) -> TargetEconomics | None: ...
    @property
    def local_server(self) -> LocalServerInfo | None: ...
    @property
    def chips(self) -> int: ...
    def point(self, label: str | None) -> PointResult | None: ...


LevelName = Literal["source", "artifact", "performance"]


class SourceDetails(Section):
    """How much model/serving code the port changed, from the ledger; None without one."""

    lines_added: int | None = None
    lines_removed: int | None = None
    files_changed: int | None = None
    unchanged_fraction: float | None = None


class ContractCheck(Section):
    """One bound of the performance contract at the operating point. ``ok`` and the margins
    are None when the value was not measured; the margin is positive when the bound holds."""

    name: str
    measured: float | None
    bound: float
    ok: bool | None
    margin: float | None
    margin_pct: float | None


class PerformanceDetails(Section):
    """The operating point the contract was checked at, each bound's check and §9's goodput
    ratio to the reference (None when either side has no correct goodput)."""

    operating_point: str | None = None
    checks: list[ContractCheck] = Field(default_factory=list)
    goodput_ratio_to_reference: float | None = None


LevelDetails = SourceDetails | ArtifactCheck | PerformanceDetails | None


class LevelResult(Section):
    """One portability level's verdict, its evidence and the measurements behind it. Each level
    is its own subclass, named by its ``level`` literal, whose ``details`` is that level's own
    model; code that reads every level alike (a table row per level) reads this base."""

    level: LevelName
    verdict: Verdict
    summary: str
    evidence: list[Evidence] = Field(default_factory=list)
    details: LevelDetails


class SourceLevel(LevelResult):
    level: Literal["source"] = "source"
    details: SourceDetails = Field(default_factory=SourceDetails)


class ArtifactLevel(LevelResult):
    """``details`` is the check that ran, or None for a declared or unassessed artifact."""

    level: Literal["artifact"] = "artifact"
    details: ArtifactCheck | None = None

    @field_validator("details", mode="before")
    @classmethod
    def _empty_is_none(cls, v: Any) -> Any:
        return None if v == {} else v  # earlier versions stored no check as {}


class PerformanceLevel(LevelResult):
    level: Literal["performance"] = "performance"
    details: PerformanceDetails = Field(default_factory=PerformanceDetails)


def source_level(t: PortableTarget, ledger: MigrationLedger | None) -> SourceLevel:
    details = SourceDetails()
    ev: list[Evidence] = []
    code = ledger.code if ledger is not None else None
    change = ""
    if code is not None:
        details = SourceDetails(lines_added=code.lines_added, lines_removed=code.lines_removed,
                                files_changed=code.files_changed,
                                unchanged_fraction=code.unchanged_fraction)
        ev.append(code.evidence)
        change = (f"; model/serving code changed by {code.lines_added + code.lines_removed} "
                  f"lines in {code.files_changed} files")
    if t.failure:
        return SourceLevel(verdict="fail",
                           summary=f"the study could not run against it: {t.failure}",
                           evidence=ev, details=details)
    measured = [p for p in t.points if p.completed > 0]
    if not measured:
        return SourceLevel(verdict="not assessed",
                           summary="no load point completed a request" + change,
                           evidence=ev, details=details)
    api = t.endpoint.api if t.endpoint is not None else "completions"
    ev.insert(0, Evidence(kind="measurement",
                          detail=f"{len(measured)} load point(s) measured through "
                          f"acceval's one OpenAI-compatible client (/v1/{api})"))
    return SourceLevel(verdict="pass",
                       summary="the same study and client ran unchanged" + change,
                       evidence=ev, details=details)


def artifact_level(spec: ArtifactSpec | None, check: ArtifactCheck | None) -> ArtifactLevel:
    if check is not None:
        ev = Evidence(kind="command",
                      detail=f"check_artifact({check.path!r}, runtime_a={check.runtime_a!r}, "
                      f"runtime_b={check.runtime_b!r})")
        if check.verdict == "pass":
            summary = (f"loads in {check.runtime_a} and {check.runtime_b}: agreement "
                       f"{check.agreement_rate:.0%} on {check.prompts} prompts, checksums "
                       f"{check.manifest_status}")
        else:
            summary = "; ".join(check.reasons) or check.verdict
        return ArtifactLevel(verdict=check.verdict, summary=summary, evidence=[ev],
                             details=check)
    if spec is not None and spec.portable is not None:
        note = spec.note or ""
        ev = (from_reference(note) if note.startswith(("http://", "https://"))
              else None) or declared(spec.note or "study file")
        return ArtifactLevel(verdict="pass" if spec.portable else "fail",
                             summary=f"declared {'portable' if spec.portable else 'not portable'}"
                             + (f": {spec.note}" if spec.note else ""), evidence=[ev])
    return ArtifactLevel(verdict="not assessed",
                         summary="no artifact check ran and no verdict was declared")


def _point(t: PortableTarget, label: str | None) -> PointResult | None:
    """The verdict's operating point; without one, the fastest point meeting the SLO."""
    hit = t.point(label)
    if hit is not None:
        return hit
    ok = [p for p in t.points if p.trusted and p.summary.meets_slo
          and p.summary.request_throughput_rps]
    if ok:
        return max(ok, key=lambda p: p.summary.request_throughput_rps or 0.0)
    return t.points[0] if t.points else None


def _cost(t: PortableTarget | None, label: str | None) -> float | None:
    """Cost per correct task at the operating point's bill."""
    if t is None or t.economics is None or label is None:
        return None
    pc = t.economics.point(label)
    return None if pc is None else pc.bill.cost_per_correct_usd


def _check(name: str, measured: float | None, bound: float, upper: bool = True
           ) -> ContractCheck:
    if measured is None:
        return ContractCheck(name=name, measured=None, bound=bound, ok=None, margin=None,
                             margin_pct=None)
    margin = bound - measured if upper else measured - bound
    return ContractCheck(name=name, measured=measured, bound=bound, ok=margin >= 0,
                         margin=margin, margin_pct=100.0 * margin / bound if bound else None)


def _goodput_ratio(t: PortableTarget, reference: PortableTarget | None,
                   reference_point: str | None, goodput_rps: float | None) -> float | None:
    """§9's performance score: correct goodput after the port over the origin's."""
    ref_p = (_point(reference, reference_point)
             if reference is not None and reference is not t else None)
    if ref_p is None or not ref_p.summary.correct_goodput_rps or goodput_rps is None:
        return None
    return goodput_rps / ref_p.summary.correct_goodput_rps


def performance_level(t: PortableTarget, contract: Contract,
                      reference: PortableTarget | None = None, *,
                      operating_point: str | None = None,
                      reference_point: str | None = None) -> PerformanceLevel:
    """Each bound of the contract at the target's operating point, with its margin."""
    p = _point(t, operating_point)
    if p is None:
        return PerformanceLevel(verdict="not assessed", summary="no load point was measured")
    s = p.summary
    checks: list[ContractCheck] = []
    # Every answer one token long: no decode phase, so a TPOT bound has nothing to judge
    # (as the SLO treats it), rather than leaving the level "not assessed".
    one_token = s.output_tokens.count > 0 and (s.output_tokens.max or 0.0) <= 1
    for name, dist, bound in (("ttft_ms", s.ttft_ms, contract.ttft_ms),
                              ("tpot_ms", s.tpot_ms, contract.tpot_ms),
                              ("e2e_ms", s.e2e_ms, contract.e2e_ms)):
        if name == "tpot_ms" and one_token:
            continue
        if bound is not None:
            try:
                value = dist.percentile(contract.percentile)
            except ValueError:
                value = None
            checks.append(_check(f"p{contract.percentile:g} {name}", value, bound))
    cost = _cost(t, p.label)
    if contract.cost_per_correct_usd is not None:
        checks.append(_check("cost_per_correct_usd", cost, contract.cost_per_correct_usd))
    if contract.cost_ratio_to_reference is not None and reference is not None:
        ref_at = _point(reference, reference_point)
        ref_cost = _cost(reference, ref_at.label if ref_at is not None else None)
        ratio = cost / ref_cost if cost is not None and ref_cost else None
        checks.append(_check(f"cost ratio to {reference.name}", ratio,
                             contract.cost_ratio_to_reference))
    if contract.min_accuracy is not None:
        acc = s.accuracy.accuracy if s.accuracy is not None else None
        checks.append(_check("accuracy", acc, contract.min_accuracy, upper=False))
    details = PerformanceDetails(operating_point=p.label, checks=checks,
                                 goodput_ratio_to_reference=_goodput_ratio(
                                     t, reference, reference_point, s.correct_goodput_rps))
    ev = (Evidence(kind="measurement",
                   detail=f"load point {p.label}: latency percentiles from records, "
                   "cost per correct task from the bill"),)
    if not checks:
        return PerformanceLevel(verdict="not assessed",
                                summary="the contract sets no bound (set portability.contract "
                                "or slo)", evidence=ev, details=details)
    failed = [c for c in checks if c.ok is False]
    unknown = [c for c in checks if c.ok is None]
    if failed:
        text = "; ".join(f"{c.name} {number(c.measured)} > {number(c.bound)}"
                         if c.name != "accuracy" else
                         f"accuracy {c.measured or 0.0:.3f} < {c.bound:.3f}" for c in failed)
        return PerformanceLevel(verdict="fail", summary=f"contract broken at {p.label}: {text}",
                                evidence=ev, details=details)
    if unknown:
        return PerformanceLevel(verdict="not assessed", summary="not measured: "
                                + ", ".join(c.name for c in unknown), evidence=ev,
                                details=details)
    worst = min(checks, key=lambda c: c.margin_pct if c.margin_pct is not None else 0.0)
    return PerformanceLevel(verdict="pass",
                            summary=f"contract holds at {p.label}; smallest margin {worst.name} "
                            f"{worst.margin_pct or 0.0:.1f} %", evidence=ev, details=details)
