"""Can the target be had where and when the demand needs it?

Checks a target's declared :class:`~acceval.capacity.spec.Availability` against the demand's
constraints (data residency, need-by date) and the fleet the demand needs (peak replicas and
chips against quota, reservations). Each finding is a blocker (the target cannot serve this
demand as declared), a warning (it can, at a cost or a risk) or a note (a fact left
undeclared). The row it returns is decision-table data for the report.

Without a demand profile, :func:`availability_without_demand` checks the same declarations
against what the study itself deploys: one replica of ``platform.chips`` chips, as measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acceval.capacity.spec import Availability, Demand
from acceval.results.section import Section


class AvailabilityResult(Section):
    target: str
    status: str
    usable_regions: list[str]
    peak_replicas: int | None
    peak_chips: int | None
    blockers: list[str]
    warnings: list[str]
    notes: list[str]
    lead_time_days: float | None = None
    failover_region: str | None = None
    transfer_usd_per_gb: float | None = None
    transfer_gb_per_request: float | None = None
    source: str | None = None
    assessed_for: str | None = None
    quota_chips: int | None = None



Severity = Literal["blocker", "warning", "note"]
Status = Literal["available", "at-risk", "blocked", "unknown"]


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    field: str
    message: str


@dataclass(frozen=True, slots=True)
class AvailabilityCheck:
    target: str
    status: Status
    findings: tuple[Finding, ...] = ()
    usable_regions: tuple[str, ...] = ()
    peak_replicas: int | None = None
    peak_chips: int | None = None
    assessed_for: str = "this demand"    # what the fleet was sized for, for a sentence
    lead_time_days: float | None = None
    failover_region: str | None = None
    transfer_usd_per_gb: float | None = None
    transfer_gb_per_request: float | None = None
    source: str | None = None

    @property
    def blockers(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "blocker"]

    def result(self) -> AvailabilityResult:
        """One row of the decision table, as the result stores it."""
        def said(severity: Severity) -> list[str]:
            return [f.message for f in self.findings if f.severity == severity]
        return AvailabilityResult(
            target=self.target, status=self.status, usable_regions=list(self.usable_regions),
            peak_replicas=self.peak_replicas, peak_chips=self.peak_chips,
            assessed_for=self.assessed_for, blockers=said("blocker"), warnings=said("warning"),
            notes=said("note"), lead_time_days=self.lead_time_days,
            failover_region=self.failover_region, transfer_usd_per_gb=self.transfer_usd_per_gb,
            transfer_gb_per_request=self.transfer_gb_per_request, source=self.source)


def _replicas(n: int) -> str:
    return f"{n} replica" if n == 1 else f"{n} replicas"


def check_availability(target: str, availability: Availability | None, demand: Demand | None,
                       *, peak_replicas: int | None = None, base_replicas: int | None = None,
                       chips_per_replica: int = 1, need: str = "the peak hour",
                       assessed_for: str = "this demand") -> AvailabilityCheck:
    """Flag what stops ``target`` from serving the demand where and when it is needed.

    ``peak_replicas`` is the fleet at the busiest hour (spares included), ``base_replicas``
    the smallest hourly fleet (what a reservation would cover all day). ``need`` names that
    fleet in the findings ("the peak hour needs 5 replicas"), ``assessed_for`` in the row.
    """
    if availability is None:
        return AvailabilityCheck(target, "unknown", (Finding(
            "note", "availability", "availability not declared (regions, quota, lead time)"),),
            peak_replicas=peak_replicas,
            peak_chips=None if peak_replicas is None else peak_replicas * chips_per_replica,
            assessed_for=assessed_for)
    av = availability
    out: list[Finding] = []
    regions = tuple(av.regions)
    residency = None if demand is None or demand.residency is None else set(demand.residency)
    usable = regions if residency is None else tuple(r for r in regions if r in residency)
    if not regions:
        out.append(Finding("note", "regions", "regions not declared"))
    elif residency is not None and not usable:
        out.append(Finding("blocker", "regions",
                           f"offered in {', '.join(regions)}, none of which the data may use "
                           f"(residency: {', '.join(sorted(residency))})"))
    if av.failover_region is None:
        out.append(Finding("note", "failover_region", "no failover region declared"))
    elif residency is not None and av.failover_region not in residency:
        out.append(Finding("warning", "failover_region",
                           f"failover region {av.failover_region} is outside the residency list; "
                           "a failover would move data where it may not go"))
    elif regions and av.failover_region in usable and len(usable) == 1:
        out.append(Finding("warning", "failover_region",
                           f"failover region {av.failover_region} is the only usable region"))

    peak_chips = None if peak_replicas is None else peak_replicas * chips_per_replica
    if peak_replicas is not None:
        if av.quota_replicas is not None and peak_replicas > av.quota_replicas:
            out.append(Finding("blocker", "quota_replicas",
                               f"{need} needs {_replicas(peak_replicas)}; quota allows "
                               f"{av.quota_replicas}"))
        if av.quota_chips is not None and peak_chips is not None and peak_chips > av.quota_chips:
            out.append(Finding("blocker", "quota_chips",
                               f"{need} needs {peak_chips} chips; quota allows "
                               f"{av.quota_chips}"))
        if av.quota_replicas is None and av.quota_chips is None:
            out.append(Finding("note", "quota", "quota not declared"))
        if av.reserved_replicas is not None and av.reserved_replicas < peak_replicas:
            base = f" (base load {base_replicas})" if base_replicas is not None else ""
            out.append(Finding("warning", "reserved_replicas",
                               f"{av.reserved_replicas} reserved of {peak_replicas} needed "
                               f"for {need}{base}: the rest is on-demand capacity that may not "
                               "be there when asked for"))
    need_by = None if demand is None else demand.need_by_days
    if av.lead_time_days is None:
        out.append(Finding("note", "lead_time_days", "provisioning lead time not declared"))
    elif need_by is not None and av.lead_time_days > need_by:
        out.append(Finding("blocker", "lead_time_days",
                           f"lead time {av.lead_time_days:g} days is longer than the "
                           f"{need_by:g} days until it is needed"))

    if any(f.severity == "blocker" for f in out):
        status: Status = "blocked"
    elif any(f.severity == "warning" for f in out):
        status = "at-risk"
    elif regions and peak_replicas is not None and (
            av.quota_replicas is not None or av.quota_chips is not None):
        status = "available"
    else:
        status = "unknown"
    return AvailabilityCheck(
        target, status, tuple(out), usable, peak_replicas, peak_chips, assessed_for,
        lead_time_days=av.lead_time_days, failover_region=av.failover_region,
        transfer_usd_per_gb=av.transfer_usd_per_gb,
        transfer_gb_per_request=av.transfer_gb_per_request, source=av.source)


def availability_without_demand(target: str, availability: Availability | None, *,
                                chips_per_replica: int, replicas: int = 1) -> AvailabilityCheck:
    """Availability when the study declares no ``demand:``: the same checks (regions, quota,
    reservations, failover, lead time) against what the study itself deploys, ``replicas``
    replicas of ``chips_per_replica`` chips (one replica of ``platform.chips``, as measured).

    With no demand there is no residency list and no need-by date, so regions and lead time
    give notes only; quota and reservations are checked against the deployment.
    """
    deployed = f"{_replicas(replicas)} of {chips_per_replica} chips"
    return check_availability(
        target, availability, None, peak_replicas=replicas, base_replicas=None,
        chips_per_replica=chips_per_replica, need=f"the deployment as measured ({deployed})",
        assessed_for=f"what the study deploys ({deployed}; no demand profile)")
