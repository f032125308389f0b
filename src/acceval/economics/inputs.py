"""Building :class:`~acceval.economics.bill.CostInputs` from the study, the catalog and what a
run measured, tagging each value with its provenance.

Precedence: a declared value is never replaced by a measured one. Compile seconds follow
:data:`~acceval.economics.compile_time.COMPILE_RULE` (declared > compile log > measured
start-up), and the candidates not chosen stand beside the chosen one in the bill's inputs.
Energy is what a probe measured, else a TDP x time estimate labelled ``estimated``. A declared
``usd_per_hour`` beats owned capex, which beats a catalog price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from acceval.economics.bill import CostInputs
from acceval.economics.catalog import Catalog
from acceval.economics.compile_time import (
    CompileTime,
    declared_compile_s,
    resolve_compile_time,
    startup_compile_s,
)
from acceval.economics.energy import (
    BoundaryComponents,
    EnergyProvenance,
    device_energy_from_power,
    energy_at_boundary,
)
from acceval.economics.formulas import owned_usd_per_hour
from acceval.economics.provenance import (
    MISSING,
    Origin,
    SourcedValue,
    assumed,
    from_catalog,
    measured,
)
from acceval.economics.spec import Platform, Price, StudyCosts, TargetCosts
from acceval.errors import StudyError
from acceval.probes.spec import Boundary, Energy
from acceval.units import number


class DeclaredCompile(Protocol):
    """A target's portability section as the bill reads it (its declared compile time)."""

    @property
    def compile_s(self) -> float | None: ...


class DeclaredTransfer(Protocol):
    """A target's availability section as the bill reads it (cross-region transfer)."""

    @property
    def transfer_gb_per_request(self) -> float | None: ...
    @property
    def transfer_usd_per_gb(self) -> float | None: ...
    @property
    def source(self) -> str | None: ...


class BilledTarget(Protocol):
    """What the bill reads from a study target (``acceval.study.Target`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def price(self) -> Price | None: ...
    @property
    def costs(self) -> TargetCosts: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def portability(self) -> DeclaredCompile | None: ...
    @property
    def availability(self) -> DeclaredTransfer | None: ...


class BilledStudy(Protocol):
    """What the bill reads from a study."""

    @property
    def costs(self) -> StudyCosts: ...


@dataclass(frozen=True, slots=True)
class Measured:
    """What a run measured for one target at one load point (warm-up excluded)."""

    duration_s: float
    requests: int
    correct: int
    output_tokens: int | None = None
    compile_s: float | None = None         # the local server's start-up, if one ran
    energy_j: float | None = None          # at energy_level (see estimate_energy)
    energy_level: Boundary | None = None
    energy_origin: str = "measured"        # of the starting figure: measured / estimated


@dataclass(frozen=True, slots=True)
class Rate:
    usd_per_chip_hour: SourcedValue
    pricing: str
    includes_energy: bool
    power_kw: SourcedValue


def resolve_rate(target: str, price: Price, catalog: Catalog | None,
                 hardware: str | None = None) -> Rate:
    """The per-chip hourly rate and how it is paid, with provenance."""
    entry = None
    if price.catalog is not None:
        if catalog is None:
            raise StudyError(f"targets.{target}.price.catalog: no catalog was loaded")
        entry = catalog.price(price.catalog)
        if price.pricing is not None and price.pricing != entry.pricing:
            raise StudyError(
                f"targets.{target}.price: pricing {price.pricing} contradicts catalog "
                f"'{entry.id}' ({entry.pricing}); drop one"
            )
    pricing = price.pricing or (entry.pricing if entry else "on_demand")
    power = assumed(price.power_kw) if price.power_kw is not None else MISSING
    chip = catalog.chip(hardware or (entry.hardware if entry else None)) if catalog else None
    if power.value is None and pricing == "owned" and chip and chip.allin_power:
        f = chip.allin_power
        power = from_catalog(f.value, f.source, f.date)
    src = price.source or "study file"
    if price.usd_per_hour is not None:
        return Rate(assumed(price.usd_per_hour, src), pricing, pricing != "owned", power)
    if price.capex_usd is not None:
        hourly = owned_usd_per_hour(price.capex_usd, price.lifetime_years, price.interest_rate,
                                    price.hosting_usd_per_month)
        note = (f"capex {price.capex_usd} x CRF({price.interest_rate}, "
                f"{price.lifetime_years}) / 8760 + hosting / 730 ({src})")
        return Rate(SourcedValue(value=hourly, origin="derived", source=note), "owned", False,
                    power)
    assert entry is not None
    label = entry.source + (f" [{entry.grade}]" if entry.grade != "V" else "")
    return Rate(from_catalog(entry.chip_rate_usd_per_hour, label, entry.date), pricing,
                entry.includes_energy, power)


def _declared_or(tc: TargetCosts, name: str, default_source: str) -> str:
    """``study file`` when the study sets a value other than the default. Judged by value,
    not by whether the key was written, so that a re-analysis of the stored study (which
    holds every field) labels it the same as the run did."""
    default = type(tc).model_fields[name].default
    return "study file" if getattr(tc, name) != default else default_source


def build_cost_inputs(
    target: str,
    *,
    chips: int,
    price: Price,
    measured_values: Measured,
    costs: TargetCosts | None = None,
    study_costs: StudyCosts | None = None,
    catalog: Catalog | None = None,
    hardware: str | None = None,
    load_label: str = "",
    compile_time: CompileTime | None = None,
    transfer_gb_per_request: SourcedValue = MISSING,
    transfer_usd_per_gb: SourcedValue = MISSING,
) -> CostInputs:
    """CostInputs for one target at one load point.

    ``compile_time`` is the resolved compile time shared with the migration ledger
    (:func:`acceval.portability.ledger.compile_time_for`); without it, the declared
    ``costs.compile_s`` and the measured ``measured_values.compile_s`` are resolved here by
    the same rule (no compile log). ``transfer_*`` are the cross-region transfer inputs of
    the target's ``availability`` section (:func:`transfer_inputs`).
    """
    tc = costs or TargetCosts()
    sc = study_costs or StudyCosts()
    m = measured_values
    rate = resolve_rate(target, price, catalog, hardware)

    def opt(v: float | None) -> SourcedValue:
        return MISSING if v is None else assumed(v)

    if compile_time is None:
        declared, notes = declared_compile_s(target, tc.compile_s, None)
        compile_time = resolve_compile_time(declared=declared,
                                            measured=startup_compile_s(m.compile_s), notes=notes)
    energy = MISSING
    if m.energy_j is not None:
        origin: Origin = (
            "estimated" if m.energy_origin == "estimated"
            else "measured" if m.energy_origin == "measured" and m.energy_level == "device"
            else "derived")
        energy = SourcedValue(value=m.energy_j, origin=origin,
                              source=f"{m.energy_origin} at the {m.energy_level} "
                         "boundary")
    return CostInputs(
        target=target, load_label=load_label, chips=chips, pricing=rate.pricing,
        includes_energy=rate.includes_energy, usd_per_chip_hour=rate.usd_per_chip_hour,
        duration_s=measured(m.duration_s), requests=measured(m.requests),
        correct=measured(m.correct),
        output_tokens=MISSING if m.output_tokens is None else measured(m.output_tokens),
        utilization=assumed(tc.utilization, _declared_or(tc, "utilization", "default: fully used")),
        compile_s=compile_time.chosen, compile_s_from_log=compile_time.from_log,
        compile_s_measured=compile_time.measured,
        starts_per_month=assumed(tc.starts_per_month,
                                 _declared_or(tc, "starts_per_month", "default: one start a day")),
        storage_usd_per_month=opt(tc.storage_usd_per_month),
        observability_usd_per_month=opt(tc.observability_usd_per_month),
        egress_gb_per_request=opt(tc.egress_gb_per_request),
        egress_usd_per_gb=opt(sc.egress_usd_per_gb),
        transfer_gb_per_request=transfer_gb_per_request, transfer_usd_per_gb=transfer_usd_per_gb,
        engineering_hours=opt(tc.engineering_hours),
        engineer_usd_per_hour=opt(sc.engineer_usd_per_hour),
        horizon_months=assumed(sc.horizon_months),
        expected_requests_per_month=opt(sc.expected_requests_per_month),
        electricity_usd_per_kwh=opt(sc.electricity_usd_per_kwh),
        power_kw=rate.power_kw, energy_j=energy, energy_level=m.energy_level,
    )


def components_of(spec: Energy) -> BoundaryComponents:
    return BoundaryComponents(spec.node_overhead_w, spec.psu_efficiency, spec.network_w,
                              spec.pue)


def device_tdp(spec: Energy, catalog: Catalog | None = None,
               hardware: str | None = None) -> tuple[float, str] | None:
    """The power per chip that stands in when no probe reads energy, and where it comes
    from: ``energy.device_tdp_w``, else the catalog TDP of ``hardware`` (with its source and
    date). None when neither gives one (Trainium and TPU publish no TDP)."""
    if spec.device_tdp_w is not None:
        return spec.device_tdp_w, "energy.device_tdp_w (study file)"
    chip = catalog.chip(hardware) if catalog else None
    if chip is None or chip.tdp is None:
        return None
    tdp = chip.tdp
    dated = f", {tdp.date}" if tdp.date else ""
    return tdp.value, f"catalog TDP of {hardware} ({tdp.source}{dated})"


def can_estimate_energy(spec: Energy, catalog: Catalog | None = None,
                        hardware: str | None = None) -> bool:
    """Whether a window of this target gets an energy figure: a probe, a declared TDP or the
    catalog TDP (the default ``probe: none`` still estimates from the catalog TDP)."""
    return spec.probe != "none" or device_tdp(spec, catalog, hardware) is not None


def estimate_energy(
    spec: Energy, *, device_j: float | None, duration_s: float, chips: int = 1,
    catalog: Catalog | None = None, hardware: str | None = None,
) -> EnergyProvenance:
    """Energy of a window at ``spec.boundary``.

    ``device_j`` is what the probe read at the device (L0), or None. Without a reading,
    ``device_tdp_w`` (else the catalog TDP) x chips x time stands in, labelled ``estimated``
    (TDP is an upper bound on board power) with the TDP's source in the component's detail.
    The cpu probe's figure is labelled estimated too (CPU time x watts per core).
    """
    origin: Literal["measured", "estimated", "declared"] = (
        "estimated" if spec.probe == "cpu" else "measured")
    name, detail = "probe", f"{spec.probe} probe reading"
    if spec.exporter_url:
        detail += f" from {spec.exporter_url} (the exporter on the accelerator's host)"
    if device_j is None:
        tdp = device_tdp(spec, catalog, hardware)
        if tdp is not None:
            watts, source = tdp
            device_j, origin = device_energy_from_power(watts, chips, duration_s), "estimated"
            name = "tdp"
            detail = (f"{watts:g} W x {chips} chip(s) x {number(duration_s)} s, an upper bound: "
                      f"{source}")
    return energy_at_boundary(device_j, "device", spec.boundary, components_of(spec),
                              duration_s=duration_s, measured_origin=origin,
                              measured_name=name, measured_detail=detail)


def compile_time_declared(target: BilledTarget, startup_s: float | None = None) -> CompileTime:
    """The compile time of a study target from what needs no file: its declarations
    (``costs.compile_s``, ``portability.compile_s``) and the measured start-up. With a compile
    log, use :func:`acceval.portability.ledger.compile_time_for`, which reads it."""
    port = target.portability.compile_s if target.portability is not None else None
    declared, notes = declared_compile_s(target.name, target.costs.compile_s, port)
    return resolve_compile_time(declared=declared, measured=startup_compile_s(startup_s),
                                notes=notes)


def transfer_inputs(target: BilledTarget) -> tuple[SourcedValue, SourcedValue]:
    """The cross-region transfer volume per request and price per GB that the target's
    ``availability`` section declares (MISSING where it does not)."""
    av = target.availability
    if av is None:
        return MISSING, MISSING
    where = f"study file: targets.{target.name}.availability"
    if av.source:
        where += f" ({av.source})"

    def one(value: float | None) -> SourcedValue:
        return MISSING if value is None else assumed(value, where)
    return one(av.transfer_gb_per_request), one(av.transfer_usd_per_gb)


def cost_inputs_for(target: BilledTarget, study: BilledStudy, catalog: Catalog | None,
                    measured_values: Measured, load_label: str = "",
                    compile_time: CompileTime | None = None) -> CostInputs | None:
    """CostInputs for a study target, or None when the target declares no price.

    Pass ``compile_time`` from :func:`acceval.portability.ledger.compile_time_for` so that the
    bill and the ledger use the same compile time (a compile log included); without it the
    target's declarations and ``measured_values.compile_s`` are resolved by the same rule.
    """
    if target.price is None:
        return None
    if compile_time is None:
        compile_time = compile_time_declared(target, measured_values.compile_s)
    gb, usd_gb = transfer_inputs(target)
    return build_cost_inputs(
        target.name, chips=target.platform.chips, price=target.price,
        measured_values=measured_values, costs=target.costs, study_costs=study.costs,
        catalog=catalog, hardware=target.platform.hardware, load_label=load_label,
        compile_time=compile_time, transfer_gb_per_request=gb, transfer_usd_per_gb=usd_gb,
    )
