"""The economics of a measured target: a bill (and energy) for every load point, at the
utilization the capacity plan derives from the demand, or the declared one.

Pure over the target's analysed points and the probe samples, so ``acceval report
--recompute`` reproduces it. Which point is the operating point, and who wins, is the
verdict's to say (:mod:`acceval.verdict`); this module only prices.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from acceval.economics.bill import BillResult, CostInputs, FrontierResult, compute_bill
from acceval.economics.catalog import Catalog
from acceval.economics.compile_time import CompileTime
from acceval.economics.energy import EnergyResult, energy_outputs
from acceval.economics.inputs import (
    BilledStudy,
    BilledTarget,
    Measured,
    can_estimate_energy,
    cost_inputs_for,
    estimate_energy,
)
from acceval.economics.provenance import SourcedValue
from acceval.economics.sensitivity import SensitivityResult
from acceval.probes import energy_between
from acceval.probes.spec import Energy
from acceval.results.section import PointResult, Section


class PointCost(Section):
    """One load point's bill and the interval its accuracy interval gives the cost."""

    label: str
    bill: BillResult
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None = None


class DeclaredUtilizationCost(Section):
    """The same points billed at the declared utilization (every replica busy)."""

    operating_point: str
    cost_per_correct_usd: float
    cost_per_attempt_usd: float | None
    cost_per_mtok_output_usd: float | None


class TargetEconomics(Section):
    """Every load point's bill; the operating point itself is the verdict's to name."""

    points: list[PointCost]
    at_declared_utilization: DeclaredUtilizationCost | None = None
    utilization_under_demand: float | None = None

    def point(self, label: str) -> PointCost | None:
        return next((p for p in self.points if p.label == label), None)


class RunEconomics(Section):
    frontier: FrontierResult
    sensitivity: SensitivityResult




class MeasuredTarget(Protocol):
    """What pricing reads of a measured target (``TargetResult`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def points(self) -> Sequence[PointResult]: ...


class PricedTarget(BilledTarget, Protocol):
    """What pricing reads of a study target: the bill's inputs and its energy section."""

    @property
    def energy(self) -> Energy: ...


class PricedStudy(BilledStudy, Protocol):
    """What pricing reads of a study (``acceval.study.Study`` is one)."""

    @property
    def targets(self) -> Sequence[PricedTarget]: ...


@dataclass(slots=True)
class Priced:
    """A target's prices, with the cost inputs kept in memory for the sensitivity analysis."""

    economics: TargetEconomics
    inputs: dict[str, CostInputs] = field(default_factory=dict)   # by point label
    energy: dict[str, EnergyResult] = field(default_factory=dict)  # by point label


def _point_energy(spec: PricedTarget, p: PointResult, samples: list[Any], catalog: Catalog | None,
                  correct: int) -> EnergyResult | None:
    if not can_estimate_energy(spec.energy, catalog, spec.platform.hardware):
        return None
    duration = p.summary.duration_s
    if not duration:
        return None
    device_j = energy_between(samples, p.started_ns, p.ended_ns) if samples else None
    est = estimate_energy(spec.energy, device_j=device_j, duration_s=duration,
                          chips=spec.platform.chips, catalog=catalog,
                          hardware=spec.platform.hardware)
    return energy_outputs(est, correct=correct, output_tokens=p.summary.output_tokens_total,
                          duration_s=duration, electricity_usd_per_kwh=None,
                          load_label=p.label)


def _correct(p: PointResult) -> int:
    acc = p.summary.accuracy
    return acc.correct if acc is not None else 0


def cost_interval(bill: BillResult,
                  p: PointResult) -> tuple[float | None, float | None] | None:
    """Cost per correct task over the point's accuracy interval: [attempt / high, attempt / low].

    The spend per attempt is measured; the uncertainty is in how many attempts are correct.
    """
    acc = p.summary.accuracy
    if acc is None or acc.ci_low is None or acc.ci_high is None:
        return None
    return (_div(bill.cost_per_attempt_usd, acc.ci_high),
            _div(bill.cost_per_attempt_usd, acc.ci_low))


def price_target(study: PricedStudy, t: MeasuredTarget, samples: list[Any], catalog: Catalog | None,
                 *, utilization: SourcedValue | None = None,
                 compile_time: CompileTime | None = None) -> Priced | None:
    """Bills for every measured point of ``t`` (None: the target declares no price).

    ``utilization`` (derived from the demand by capacity) replaces the declared one in the
    bills; the bills at the declared utilization are kept beside them.
    """
    spec = next(s for s in study.targets if s.name == t.name)
    points: list[PointCost] = []
    inputs: dict[str, CostInputs] = {}
    energies: dict[str, EnergyResult] = {}
    saturated: list[tuple[PointResult, BillResult]] = []
    for p in t.points:
        if not p.summary.duration_s:
            continue
        energy = _point_energy(spec, p, samples, catalog, _correct(p))
        measured = Measured(
            duration_s=p.summary.duration_s, requests=p.summary.requests,
            correct=_correct(p), output_tokens=p.summary.output_tokens_total,
            energy_j=energy.joules if energy else None,
            energy_level=energy.level if energy else None,
            energy_origin=(energy.origin or "measured") if energy else "measured",
        )
        ci = cost_inputs_for(spec, study, catalog, measured, load_label=p.label,
                             compile_time=compile_time)
        if ci is None:
            return None
        saturated.append((p, compute_bill(ci)))
        if utilization is not None:
            ci = dataclasses.replace(ci, utilization=utilization)
        bill = compute_bill(ci)
        inputs[p.label] = ci
        points.append(PointCost(label=p.label, bill=bill,
                                cost_per_correct_ci_usd=cost_interval(bill, p)))
        if energy is not None:
            energies[p.label] = energy
    if not points:
        return None
    at_declared = None
    if utilization is not None:
        trusted = [x for x in saturated if x[0].trusted and x[0].summary.meets_slo] or saturated
        sat_p, sat_bill = min(trusted, key=lambda x: x[1].cost_per_correct_usd)
        at_declared = DeclaredUtilizationCost(
            operating_point=sat_p.label, cost_per_correct_usd=sat_bill.cost_per_correct_usd,
            cost_per_attempt_usd=sat_bill.cost_per_attempt_usd,
            cost_per_mtok_output_usd=sat_bill.cost_per_mtok_output_usd)
    econ = TargetEconomics(points=points, at_declared_utilization=at_declared,
                           utilization_under_demand=None if utilization is None
                           else utilization.value)
    return Priced(econ, inputs, energies)


def _div(a: float | None, b: float) -> float | None:
    if a is None:
        return None
    return a / b if b > 0 else math.inf


__all__ = ["Priced", "cost_interval", "price_target"]
