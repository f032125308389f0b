"""What the renderers show about money, energy and portability, read from the typed result.

It selects and names; it computes nothing the result lacks. The operating point of a target
and the ranking are the verdict's (:mod:`acceval.verdict`); a bill is
``TargetResult.economics``'s. Anything absent is ``None`` and is rendered "not measured".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from acceval.economics.apply import PointCost as StoredCost
from acceval.economics.sensitivity import FlipResult, TornadoBarResult
from acceval.report._fmt import fact
from acceval.results.section import PointResult
from acceval.run_result import RunResult, TargetResult
from acceval.units import number, plain


@dataclass(frozen=True, slots=True)
class Item:
    name: str
    usd: float | None
    note: str


@dataclass(frozen=True, slots=True)
class Assumption:
    target: str          # "" for study-wide
    name: str
    value: Any
    origin: str          # measured / catalog / assumption / derived / study file
    source: str | None
    date: str | None

    @property
    def shown(self) -> str:
        """The value as a reader reads it: a measured or derived number to three significant
        digits, a declared one as typed."""
        if self.value is None:
            return "not declared"
        if isinstance(self.value, float) and self.origin in _COMPUTED:
            return number(self.value)
        if isinstance(self.value, int | float) and not isinstance(self.value, bool):
            return plain(self.value)
        return fact(self.value)


_COMPUTED = frozenset({"measured", "derived", "estimated"})


@dataclass(frozen=True, slots=True)
class PointCost:
    """The bill of one target at one load point, as the report needs it."""

    label: str
    cost_per_correct_usd: float | None
    cost_per_attempt_usd: float | None
    cost_per_mtok_usd: float | None
    items: tuple[Item, ...] = ()
    ci_usd: tuple[float, float] | None = None
    ci_from: str | None = None      # "economics" or "accuracy interval"


@dataclass(frozen=True, slots=True)
class TargetEcon:
    """Money and energy of one target. ``at_slo`` is its cheapest load point among those that
    meet the study's SLO (every point when the study sets no bound); ``cheapest`` ignores the
    SLO."""

    points: dict[str, PointCost] = field(default_factory=dict)
    at_slo: PointCost | None = None
    cheapest: PointCost | None = None
    estimated: tuple[str, ...] = ()  # inputs that are not measured (catalog/assumption)
    joules_per_correct: float | None = None
    energy_level: str | None = None
    energy_complete: bool | None = None
    energy_origin: str | None = None
    utilization_under_demand: float | None = None
    portability_level: str | None = None
    exit_readiness: str | None = None

    @property
    def cost_per_correct_usd(self) -> float | None:
        return self.at_slo.cost_per_correct_usd if self.at_slo else None

    @property
    def cost_per_correct_ci_usd(self) -> tuple[float, float] | None:
        return self.at_slo.ci_usd if self.at_slo else None

    @property
    def cost_per_mtok_usd(self) -> float | None:
        return self.at_slo.cost_per_mtok_usd if self.at_slo else None

    @property
    def items(self) -> tuple[Item, ...]:
        return self.at_slo.items if self.at_slo else ()


def _estimated(pc: StoredCost) -> tuple[str, ...]:
    return tuple(f"{name} ({v.origin})" for name, v in sorted(pc.bill.inputs.items())
                 if v.value is not None and v.origin != "measured")


def _point_cost(pc: StoredCost) -> PointCost:
    b = pc.bill
    lo, hi = pc.cost_per_correct_ci_usd or (None, None)
    ci = (lo, hi) if lo is not None and hi is not None else None
    items = tuple(Item(i.name, i.usd, i.note) for i in b.items)
    return PointCost(b.load_label, b.cost_per_correct_usd, b.cost_per_attempt_usd,
                     b.cost_per_mtok_output_usd, items, ci,
                     "accuracy interval" if ci is not None else None)


def target_econ(t: TargetResult, result: RunResult | None = None) -> TargetEcon:
    """``at_slo`` is the bill at the verdict's operating point (None: the target has none)."""
    costs = [_point_cost(pc) for pc in t.economics.points] if t.economics else []
    by_label = {c.label: c for c in costs}
    standing = result.verdict.standing(t.name) if result is not None else None
    op = standing.operating_point if standing is not None else None
    known = [c for c in costs if c.cost_per_correct_usd is not None]
    energy = t.energy
    origins = [c.origin for c in energy.provenance.components] if energy is not None else []
    return TargetEcon(
        points=by_label,
        at_slo=by_label.get(op) if op is not None else None,
        cheapest=min(known, key=lambda c: c.cost_per_correct_usd or 0.0) if known else None,
        estimated=tuple(sorted({x for pc in (t.economics.points if t.economics else [])
                                for x in _estimated(pc)})),
        joules_per_correct=energy.joules_per_correct if energy is not None else None,
        energy_level=energy.level if energy is not None else None,
        energy_complete=energy.provenance.complete if energy is not None else None,
        energy_origin=("measured" if origins and all(o == "measured" for o in origins)
                       else (", ".join(sorted(set(origins))) or None)),
        utilization_under_demand=(t.economics.utilization_under_demand
                                  if t.economics is not None else None),
        portability_level=t.portability.level if t.portability is not None else None,
        exit_readiness=t.exit.readiness if t.exit is not None else None,
    )


@dataclass(frozen=True, slots=True)
class RunEcon:
    winner: str | None = None            # cheapest at the SLO among targets not failing the gate
    ranking: tuple[str, ...] = ()        # those targets, cheapest first (finite costs only)
    excluded: dict[str, str] = field(default_factory=dict)  # target -> why it is not ranked
    bars: tuple[TornadoBarResult, ...] = ()
    flips: tuple[FlipResult, ...] = ()
    sensitivity_present: bool = False
    verdict_lines: tuple[str, ...] = ()


def run_econ(result: RunResult, per_target: dict[str, TargetEcon] | None = None) -> RunEcon:
    """The verdict's ranking and the sensitivity, as the charts and tables use them."""
    v = result.verdict
    sens = result.economics.sensitivity if result.economics is not None else None
    bars = tuple(b for b in (sens.bars if sens is not None else [])
                 if all(math.isfinite(x) for x in (b.base_usd, b.low_usd, b.high_usd)))
    flips = tuple(sens.flips) if sens is not None else ()
    ranked = tuple(s.target for s in v.standings if s.rank is not None)
    excluded = {s.target: "; ".join(s.reasons) for s in v.standings if not s.qualified}
    return RunEcon(winner=v.winner, ranking=ranked,
                   excluded=excluded, bars=bars, flips=flips,
                   sensitivity_present=sens is not None,
                   verdict_lines=(v.headline, *v.sentences))


def assumptions(result: RunResult) -> list[Assumption]:
    """Every economic input with its provenance, then the study's own levels (SLO, quality)."""
    out: list[Assumption] = []
    for t in result.targets:
        if t.economics is None or not t.economics.points:
            continue
        for name, s in sorted(t.economics.points[0].bill.inputs.items()):
            if name not in _PER_POINT_MEASURED:
                out.append(Assumption(t.name, name, s.value, s.origin, s.source, s.date))
    study = result.study
    for section, levels in (("slo", study.slo), ("quality", study.quality)):
        for k, v in _declared(levels):
            out.append(Assumption("", f"{section}.{k}", v, "assumption", "study file", None))
    for k, v in _declared(study.costs):
        if not isinstance(v, BaseModel | dict):
            out.append(Assumption("", f"costs.{k}", v, "assumption", "study file", None))
    return out


def _declared(spec: BaseModel) -> list[tuple[str, Any]]:
    """A spec's fields that hold a value, in declaration order (as the study file lists
    them)."""
    return [(k, v) for k in type(spec).model_fields if (v := getattr(spec, k)) is not None]


# Measured per load point (shown in the tables), not assumptions of the whole target.
_PER_POINT_MEASURED = frozenset({"duration_s", "requests", "correct", "output_tokens"})


def operating_point(t: TargetResult, result: RunResult) -> PointResult | None:
    """The verdict's operating point of ``t`` (None when it has none)."""
    standing = result.verdict.standing(t.name)
    return t.point(standing.operating_point) if standing is not None else None
