"""A typed, read-only view of what a RunResult says about money, energy and portability.

``TargetResult.economics``, ``TargetResult.energy`` and ``RunResult.economics`` are open
dicts filled by the economics stage; this module is the one place the renderers read them,
so a change of their shape is absorbed here. Anything absent is ``None`` and is rendered
"not measured". The keys read are listed in docs/report.md ("What the report reads").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from acceval.results.result import PointResult, RunResult, TargetResult


def _f(v: Any) -> float | None:
    """A number, or None for missing/non-numeric. ``inf`` stays (nothing was correct)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return None if math.isnan(v) else float(v)


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None


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


def _bills(e: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("points", "bills"):
        v = e.get(key)
        if isinstance(v, list) and v:
            return [p for p in v if isinstance(p, dict)]
    for key in ("best", "bill"):
        if isinstance(e.get(key), dict):
            return [dict(e[key])]
    return [e] if "cost_per_correct_usd" in e else []


def _accuracy_ci(t: TargetResult, label: str) -> tuple[float, float] | None:
    p = next((p for p in t.points if p.label == label), None)
    acc = p.summary.accuracy if p is not None else t.accuracy
    if acc is None or acc.ci_low is None or acc.ci_high is None:
        return None
    return acc.ci_low, acc.ci_high


def cost_interval(cost_per_attempt_usd: float | None,
                  ci: tuple[float, float] | None) -> tuple[float, float] | None:
    """Cost per correct task over the accuracy interval: attempt cost / [hi, lo] of the 95 %
    Wilson interval of the success rate (the price itself is taken as exact)."""
    if cost_per_attempt_usd is None or ci is None:
        return None
    lo, hi = ci
    return (cost_per_attempt_usd / hi if hi > 0 else math.inf,
            cost_per_attempt_usd / lo if lo > 0 else math.inf)


def _estimated(bill: dict[str, Any]) -> tuple[str, ...]:
    inputs = bill.get("inputs")
    if not isinstance(inputs, dict):
        return ()
    out = []
    for name, s in sorted(inputs.items()):
        if isinstance(s, dict) and s.get("value") is not None and s.get("origin") not in (
                "measured", None):
            out.append(f"{name} ({s.get('origin')})")
    return tuple(out)


def _point_cost(t: TargetResult, bill: dict[str, Any]) -> PointCost:
    label = str(bill.get("load_label", ""))
    per_attempt = _f(bill.get("cost_per_attempt_usd"))
    raw = bill.get("cost_per_correct_ci_usd")
    if isinstance(raw, list | tuple) and len(raw) == 2 and all(_f(x) is not None for x in raw):
        ci: tuple[float, float] | None = (float(raw[0]), float(raw[1]))
        ci_from: str | None = "economics"
    else:
        ci = cost_interval(per_attempt, _accuracy_ci(t, label))
        ci_from = "accuracy interval" if ci else None
    items = tuple(Item(str(i.get("name", "?")), _f(i.get("usd")), str(i.get("note") or ""))
                  for i in bill.get("items", []) if isinstance(i, dict))
    return PointCost(label, _f(bill.get("cost_per_correct_usd")), per_attempt,
                     _f(_first(bill, "cost_per_mtok_output_usd",
                               "cost_per_million_output_tokens_usd")), items, ci, ci_from)


def _cheapest(costs: list[PointCost]) -> PointCost | None:
    known = [c for c in costs if c.cost_per_correct_usd is not None]
    return min(known, key=lambda c: c.cost_per_correct_usd or 0.0) if known else None


def target_econ(t: TargetResult) -> TargetEcon:
    e = t.economics or {}
    bills = _bills(e)
    costs = [_point_cost(t, b) for b in bills]
    meets = {p.label for p in t.points if p.summary.meets_slo is not False}
    energy = _dict(t.energy) or _dict(e.get("energy"))
    prov = _dict(energy.get("provenance"))
    origins = [c.get("origin") for c in prov.get("components", []) if isinstance(c, dict)]
    port = t.portability or e.get("portability")
    exit_ = t.exit or e.get("exit")
    return TargetEcon(
        points={c.label: c for c in costs},
        at_slo=_cheapest([c for c in costs if c.label in meets]),
        cheapest=_cheapest(costs),
        estimated=tuple(sorted({x for b in bills for x in _estimated(b)})),
        joules_per_correct=_f(energy.get("joules_per_correct")),
        energy_level=energy.get("level"),
        energy_complete=prov.get("complete"),
        energy_origin=("measured" if origins and all(o == "measured" for o in origins)
                       else (", ".join(sorted({str(o) for o in origins})) or None)),
        utilization_under_demand=_f(_first(e, "utilization_under_demand", "demand_utilization")),
        portability_level=_label(port, "level"),
        exit_readiness=_label(exit_, "readiness"),
    )


def _label(v: Any, key: str) -> str | None:
    if isinstance(v, dict):
        v = v.get(key)
    return None if v is None else str(v)


@dataclass(frozen=True, slots=True)
class Bar:
    target: str
    input: str
    base_usd: float
    low_usd: float
    high_usd: float
    low_value: float | None
    high_value: float | None


@dataclass(frozen=True, slots=True)
class Flip:
    input: str
    scope: str
    side: str
    value: float | None
    winner: str | None
    base_winner: str | None


@dataclass(frozen=True, slots=True)
class RunEcon:
    winner: str | None = None            # cheapest at the SLO among targets not failing the gate
    ranking: tuple[str, ...] = ()        # those targets, cheapest first (finite costs only)
    unconstrained_winner: str | None = None  # the economics' own winner (SLO not applied)
    excluded: dict[str, str] = field(default_factory=dict)  # target -> why it is not ranked
    bars: tuple[Bar, ...] = ()
    flips: tuple[Flip, ...] = ()
    sensitivity_present: bool = False
    verdict_lines: tuple[str, ...] = ()


def _ranking(result: RunResult,
             per_target: dict[str, TargetEcon]) -> tuple[list[str], dict[str, str]]:
    ranked: list[tuple[float, str]] = []
    excluded: dict[str, str] = {}
    for t in result.targets:
        c = per_target[t.name]
        if c.cheapest is None:
            excluded[t.name] = "no bill (no price declared)" if not c.points else "no cost"
        elif t.gate.passed is False:
            excluded[t.name] = "fails the quality gate"
        elif c.at_slo is None:
            excluded[t.name] = "no load point meets the SLO"
        elif c.cost_per_correct_usd is None or not math.isfinite(c.cost_per_correct_usd):
            excluded[t.name] = "nothing answered correctly"
        else:
            ranked.append((c.cost_per_correct_usd, t.name))
    return [n for _, n in sorted(ranked)], excluded


def run_econ(result: RunResult, per_target: dict[str, TargetEcon]) -> RunEcon:
    e = result.economics or {}
    sens = _dict(e.get("sensitivity"))
    bars = []
    for b in sens.get("bars", []):
        if not isinstance(b, dict):
            continue
        vals = [_f(b.get(k)) for k in ("base_usd", "low_usd", "high_usd")]
        if all(v is not None and math.isfinite(v) for v in vals):
            base, low, high = (float(v) for v in vals if v is not None)
            bars.append(Bar(str(b.get("target")), str(b.get("input")), base, low, high,
                            _f(b.get("low_value")), _f(b.get("high_value"))))
    flips = tuple(Flip(str(f.get("input")), str(f.get("scope")), str(f.get("side")),
                       _f(f.get("value")), f.get("winner"), f.get("base_winner"))
                  for f in sens.get("flips", []) if isinstance(f, dict))
    fr = _dict(e.get("frontier"))
    ranking, excluded = _ranking(result, per_target)
    unconstrained = fr.get("winner") or sens.get("base_winner")
    if unconstrained is None:
        cheapest = [(c.cheapest.cost_per_correct_usd, n) for n, c in per_target.items()
                    if c.cheapest and c.cheapest.cost_per_correct_usd is not None
                    and math.isfinite(c.cheapest.cost_per_correct_usd)]
        unconstrained = min(cheapest)[1] if cheapest else None
    return RunEcon(winner=ranking[0] if ranking else None, ranking=tuple(ranking),
                   unconstrained_winner=unconstrained, excluded=excluded, bars=tuple(bars),
                   flips=flips, sensitivity_present=bool(sens),
                   verdict_lines=tuple(str(x) for x in e.get("verdict_lines", [])))


def assumptions(result: RunResult) -> list[Assumption]:
    """Every economic input with its provenance, then the study's own levels (SLO, quality)."""
    out: list[Assumption] = []
    for t in result.targets:
        bills = _bills(t.economics or {})
        inputs = bills[0].get("inputs") if bills else None
        if isinstance(inputs, dict):
            for name, s in sorted(inputs.items()):
                if isinstance(s, dict) and name not in _PER_POINT_MEASURED:
                    out.append(Assumption(t.name, name, s.get("value"), str(s.get("origin")),
                                          s.get("source"), s.get("date")))
    for section in ("slo", "quality"):
        for k, v in (result.study.get(section) or {}).items():
            if v is not None:
                out.append(Assumption("", f"{section}.{k}", v, "assumption", "study file", None))
    costs = result.study.get("costs") or {}
    for k, v in costs.items():
        if v is not None and not isinstance(v, dict):
            out.append(Assumption("", f"costs.{k}", v, "assumption", "study file", None))
    return out


# Measured per load point (shown in the tables), not assumptions of the whole target.
_PER_POINT_MEASURED = frozenset({"duration_s", "requests", "correct", "output_tokens"})


def operating_point(t: TargetResult, label: str | None = None) -> PointResult | None:
    """The load point named ``label``; without one, the highest-throughput point that meets
    the SLO (None when none does)."""
    if label is not None:
        return next((p for p in t.points if p.label == label), None)
    ok = [p for p in t.points if p.summary.meets_slo and p.summary.request_throughput_rps]
    return max(ok, key=lambda p: p.summary.request_throughput_rps or 0.0) if ok else None
