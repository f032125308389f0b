"""A typed, read-only view of what a RunResult says about capacity under the study's demand.

The economics stage stores ``TargetCapacity.to_dict()`` under ``TargetResult.economics
["capacity"]`` (docs/capacity.md, "How the pipeline calls it"), the bill at the declared
utilization under ``economics["at_declared_utilization"]`` and the ranking it gives under
``RunResult.economics["ranking_at_declared_utilization"]``; the demand itself is
``RunResult.study["demand"]``. This module is the one place the renderers read them, as
``_econ.py`` is for money. Anything absent is ``None`` and is rendered "not measured".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from acceval.capacity.profile import load_profile
from acceval.capacity.spec import Demand
from acceval.errors import AccevalError
from acceval.report._fmt import NOT_MEASURED, num, pct, usd
from acceval.results.result import RunResult, TargetResult

#: How ``max_rate_under_slo`` found the rate, in words (docs/capacity.md, method table).
METHOD_WORDS = {
    "interpolated": "interpolated where the SLO ratio crosses 1",
    "midpoint": "middle of the bracket (no ratio to follow)",
    "never-failed": "lower bound: every load point met the SLO",
    "never-passed": "none: the lowest load point already fails the SLO",
    "no-slo": "highest measured throughput (the study sets no SLO bound)",
    "no-data": "no load point with a rate",
}


def _f(v: Any) -> float | None:
    """A finite-or-infinite number, or None for missing/NaN/non-numeric."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return None if math.isnan(v) else float(v)


def _i(v: Any) -> int | None:
    f = _f(v)
    return None if f is None or not math.isfinite(f) else int(f)


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _floats(v: Any) -> tuple[float, ...] | None:
    if not isinstance(v, list | tuple) or not v:
        return None
    out = [_f(x) for x in v]
    return None if any(x is None for x in out) else tuple(x for x in out if x is not None)


def _div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not b > 0 or not math.isfinite(b):
        return None
    return a / b


@dataclass(frozen=True, slots=True)
class FleetRun:
    """One simulated day of the fleet (N, or N + spares)."""

    slo_attainment: float | None
    late: float | None
    lost: float | None
    lost_fraction: float | None
    failures: int | None
    arrivals: int | None
    cost_usd: float | None


def _fleet_run(d: dict[str, Any]) -> FleetRun | None:
    if not d:
        return None
    return FleetRun(_f(d.get("slo_attainment")), _f(d.get("late")), _f(d.get("lost")),
                    _f(d.get("lost_fraction")), _i(d.get("failures")), _i(d.get("arrivals")),
                    _f(d.get("cost_usd")))


@dataclass(frozen=True, slots=True)
class TargetCap:
    """Capacity of one target under the demand. ``None`` everywhere it was not measured."""

    target: str
    rate_rps: float | None = None          # max rate one replica serves within the SLO
    low_rps: float | None = None           # bracket: last passing load point
    high_rps: float | None = None          # bracket: first failing one (None: none failed)
    method: str | None = None
    method_note: str | None = None
    saturation_rps: float | None = None
    chips_per_replica: int | None = None
    hours: int | None = None
    replicas: tuple[float, ...] | None = None   # provisioned per hour
    peak_replicas: int | None = None
    min_replicas: int | None = None
    utilization: float | None = None
    declared_utilization: float | None = None
    idle_chip_hours: float | None = None
    fleet_usd: float | None = None
    cost_under_demand_usd: float | None = None
    cost_at_slo_rate_usd: float | None = None
    cost_at_saturation_usd: float | None = None
    cost_at_declared_utilization_usd: float | None = None
    availability: str | None = None
    blockers: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    spares: int | None = None              # what-if: replicas added to N
    without: FleetRun | None = None
    with_spares: FleetRun | None = None
    spare_cost_usd: float | None = None
    usd_per_request_saved: float | None = None

    @property
    def days(self) -> float | None:
        return None if not self.hours else self.hours / 24.0

    @property
    def idle_chip_hours_per_day(self) -> float | None:
        return _div(self.idle_chip_hours, self.days)

    @property
    def fleet_usd_per_day(self) -> float | None:
        return _div(self.fleet_usd, self.days)

    @property
    def spare_cost_usd_per_day(self) -> float | None:
        return _div(self.spare_cost_usd, self.days)

    @property
    def demand_vs_saturation(self) -> float | None:
        """Cost per correct task under the demand / at saturation (how much idle capacity
        the demand's shape adds)."""
        return _div(self.cost_under_demand_usd, self.cost_at_saturation_usd)

    @property
    def capacity_rps(self) -> tuple[float, ...] | None:
        """Provisioned SLO-bounded capacity per hour: replicas x rate under the SLO."""
        if self.replicas is None or self.rate_rps is None:
            return None
        return tuple(n * self.rate_rps for n in self.replicas)


def target_cap(t: TargetResult) -> TargetCap | None:
    """What ``t`` says about capacity; None when the economics stage stored none."""
    e = t.economics or {}
    cap = e.get("capacity")
    if not isinstance(cap, dict):
        return None
    mr, plan, cost = _d(cap.get("max_rate_under_slo")), _d(cap.get("plan")), _d(cap.get("cost"))
    av, wi = _d(cap.get("availability")), _d(cap.get("what_if"))
    util = _f(cap.get("utilization_under_demand"))
    if util is None:
        util = _f(_first(e.get("utilization_under_demand"), plan.get("utilization")))
    return TargetCap(
        target=t.name,
        rate_rps=_f(mr.get("rate_rps")), low_rps=_f(mr.get("low_rps")),
        high_rps=_f(mr.get("high_rps")),
        method=None if mr.get("method") is None else str(mr["method"]),
        method_note=None if mr.get("note") is None else str(mr["note"]),
        saturation_rps=_f(cap.get("saturation_rps")),
        chips_per_replica=_i(plan.get("chips_per_replica")), hours=_i(plan.get("hours")),
        replicas=_floats(plan.get("replicas")), peak_replicas=_i(plan.get("peak_replicas")),
        min_replicas=_i(plan.get("min_replicas")), utilization=util,
        declared_utilization=_f(cap.get("declared_utilization")),
        idle_chip_hours=_f(plan.get("idle_chip_hours")),
        fleet_usd=_f(cost.get("fleet_usd")),
        cost_under_demand_usd=_f(cost.get("cost_per_correct_usd")),
        cost_at_slo_rate_usd=_f(cost.get("cost_per_correct_at_slo_rate_usd")),
        cost_at_saturation_usd=_f(cost.get("cost_per_correct_at_saturation_usd")),
        cost_at_declared_utilization_usd=_f(
            _d(e.get("at_declared_utilization")).get("cost_per_correct_usd")),
        availability=None if av.get("status") is None else str(av["status"]),
        blockers=_strs(av.get("blockers")), warnings=_strs(av.get("warnings")),
        notes=_strs(av.get("notes")),
        spares=_i(wi.get("spares")), without=_fleet_run(_d(wi.get("without"))),
        with_spares=_fleet_run(_d(wi.get("with_spares"))),
        spare_cost_usd=_f(wi.get("extra_cost_usd")),
        usd_per_request_saved=_f(wi.get("usd_per_request_saved")),
    )


def _first(*vals: Any) -> Any:
    return next((v for v in vals if v is not None), None)


def _strs(v: Any) -> tuple[str, ...]:
    return tuple(str(x) for x in v) if isinstance(v, list | tuple) else ()


@dataclass(frozen=True, slots=True)
class CapacityView:
    """The demand and every target's capacity under it."""

    profile: str | None
    peak_rps: float | None
    days: int | None
    headroom: float | None
    spares: int | None
    scaling: str | None
    hourly_mean_rps: tuple[float, ...] | None   # demand per hour over the planning horizon
    hourly_peak_rps: tuple[float, ...] | None   # the hour's highest rate (bursts)
    demand_note: str | None                     # why the hourly demand is missing
    targets: dict[str, TargetCap | None]        # study order; None: no capacity stored
    ranking_at_declared_utilization: tuple[str, ...] = ()
    failing_gate: frozenset[str] = frozenset()  # targets below the quality level

    @property
    def expected_requests_per_day(self) -> float | None:
        if not self.hourly_mean_rps:
            return None
        return sum(self.hourly_mean_rps) * 3600.0 / (len(self.hourly_mean_rps) / 24.0)


_Hourly = tuple[tuple[float, ...] | None, tuple[float, ...] | None, str | None]


def _hourly(demand: dict[str, Any], result: RunResult) -> _Hourly:
    """Hourly mean and peak demand: from the profile itself, else from a stored plan (a
    relative csv: path may not resolve from the run folder)."""
    try:
        mean, peak = load_profile(Demand.model_validate(demand)).hourly()
        return tuple(float(x) for x in mean), tuple(float(x) for x in peak), None
    except (AccevalError, ValidationError, OSError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for t in result.targets:
        plan = _d(_d((t.economics or {}).get("capacity")).get("plan"))
        mean_t, peak_t = _floats(plan.get("hourly_mean_rps")), _floats(plan.get("hourly_peak_rps"))
        if mean_t is not None:
            return mean_t, peak_t, None
    return None, None, f"the demand profile could not be loaded ({why})"


def run_capacity(result: RunResult) -> CapacityView | None:
    """The capacity view of ``result``; None when the study declares no demand and no target
    carries capacity figures."""
    caps = {t.name: target_cap(t) for t in result.targets}
    demand = result.study.get("demand")
    if not isinstance(demand, dict) and not any(caps.values()):
        return None
    demand = _d(demand)
    mean, peak, note = (_hourly(demand, result) if demand
                        else (None, None, "the study declares no demand"))
    ranking = (result.economics or {}).get("ranking_at_declared_utilization")
    return CapacityView(
        profile=None if demand.get("profile") is None else str(demand["profile"]),
        peak_rps=_f(demand.get("peak_rps")), days=_i(demand.get("days")),
        headroom=_f(demand.get("headroom")), spares=_i(demand.get("spares")),
        scaling=None if demand.get("scaling") is None else str(demand["scaling"]),
        hourly_mean_rps=mean, hourly_peak_rps=peak, demand_note=note, targets=caps,
        ranking_at_declared_utilization=_strs(ranking),
        failing_gate=frozenset(t.name for t in result.targets if t.gate.passed is False))


def method_words(method: str | None) -> str | None:
    return None if method is None else METHOD_WORDS.get(method, method)


# --- rows shared by the HTML and Markdown renderers (plain text; each renderer escapes) ----

Table = tuple[list[str], list[list[str]]]


def bracket(c: TargetCap) -> str:
    """The load points around the max rate: last passing – first failing."""
    lo, hi = c.low_rps, c.high_rps
    if lo is not None and lo <= 0:
        lo = None  # never-passed stores 0: no point passed
    if lo is not None and hi is not None:
        return f"{num(lo, 1)} – {num(hi, 1)}"
    if lo is not None:
        return f"≥ {num(lo, 1)} (no point failed)"
    if hi is not None:
        return f"< {num(hi, 1)} (no point passed)"
    return NOT_MEASURED


def _nm_row(name: str, width: int) -> list[str]:
    return [name] + [NOT_MEASURED] * (width - 1)


def intro(v: CapacityView) -> str:
    if v.profile is None:
        return f"Demand: {NOT_MEASURED} ({v.demand_note or 'no demand declared'})."
    spares = "spare" if v.spares == 1 else "spares"
    per_day = v.expected_requests_per_day
    day = (f"; {num(per_day, 0)} requests a day" if per_day is not None
           else f"; hourly demand {NOT_MEASURED} ({v.demand_note})")
    return (f"Demand: {v.profile}, busiest hour {num(v.peak_rps, 1)} req/s, "
            f"{v.days if v.days is not None else NOT_MEASURED} "
            f"{'day' if v.days == 1 else 'days'}, headroom "
            f"{pct(v.headroom, 0)}, {v.spares if v.spares is not None else NOT_MEASURED} "
            f"{spares}, {v.scaling or NOT_MEASURED} scaling{day}. Each target's fleet is sized "
            "hour by hour at the highest rate one replica serves within the SLO "
            "(docs/capacity.md).")


def fleet_table(v: CapacityView) -> Table:
    head = ["target", "max rate under SLO req/s per replica", "bracket req/s", "how found",
            "replicas min – peak", "average utilization (declared)", "idle chip-hours per day",
            "availability"]
    rows = []
    for name, c in v.targets.items():
        if c is None:
            rows.append(_nm_row(name, len(head)))
            continue
        reps = (NOT_MEASURED if c.peak_replicas is None
                else f"{c.min_replicas if c.min_replicas is not None else '?'} – "
                     f"{c.peak_replicas}")
        util = pct(c.utilization)
        if c.utilization is not None and c.declared_utilization is not None:
            util += f" ({pct(c.declared_utilization, 0)})"
        avail = c.availability or NOT_MEASURED
        if c.blockers:
            avail += f": {len(c.blockers)} blocker(s)"
        elif c.warnings:
            avail += f": {len(c.warnings)} warning(s)"
        rows.append([name, num(c.rate_rps, 1), bracket(c), method_words(c.method) or NOT_MEASURED,
                     reps, util, num(c.idle_chip_hours_per_day, 1), avail])
    return head, rows


def cost_table(v: CapacityView) -> Table:
    head = ["target", "fleet cost per day", "cost per correct task under demand",
            "at the SLO rate (every replica busy)", "at saturation",
            "under demand ÷ at saturation", "bill at the declared utilization"]
    rows = []
    for name, c in v.targets.items():
        if c is None:
            rows.append(_nm_row(name, len(head)))
            continue
        ratio = c.demand_vs_saturation
        rows.append([name, usd(c.fleet_usd_per_day), usd(c.cost_under_demand_usd),
                     usd(c.cost_at_slo_rate_usd), usd(c.cost_at_saturation_usd),
                     NOT_MEASURED if ratio is None else f"{num(ratio, 1)}×",
                     usd(c.cost_at_declared_utilization_usd)])
    return head, rows


def _pair(a: str, b: str) -> str:
    return a if a == b == NOT_MEASURED else f"{a} → {b}"


def _count(r: FleetRun | None, key: str) -> str:
    if r is None:
        return NOT_MEASURED
    n: float | None = getattr(r, key)
    if n is None:
        return NOT_MEASURED
    frac = _div(n, None if r.arrivals is None else float(r.arrivals))
    return f"{num(n, 0)} ({pct(frac, 3)})" if frac is not None and n > 0 else num(n, 0)


def whatif_table(v: CapacityView) -> Table:
    head = ["target", "failures", "SLO attainment N → N+1", "late requests N → N+1",
            "lost requests N → N+1", "N+1 cost per day", "cost per request saved"]
    rows = []
    for name, c in v.targets.items():
        if c is None or c.without is None:
            rows.append(_nm_row(name, len(head)))
            continue
        w, s = c.without, c.with_spares
        att = _pair(pct(w.slo_attainment, 3), pct(s.slo_attainment if s else None, 3))
        saved = usd(c.usd_per_request_saved)
        if c.usd_per_request_saved is None and c.spare_cost_usd is not None:
            saved = "nothing saved"
        rows.append([name, NOT_MEASURED if w.failures is None else str(w.failures), att,
                     _pair(_count(w, "late"), _count(s, "late")),
                     _pair(_count(w, "lost"), _count(s, "lost")),
                     usd(c.spare_cost_usd_per_day), saved])
    return head, rows


def notes(v: CapacityView) -> list[str]:
    """How each rate was found, and every availability finding, one line each."""
    out = []
    # The same finding for several targets (typically "not declared") is said once.
    findings: dict[tuple[str, str], list[str]] = {}
    for name, c in v.targets.items():
        if c is None:
            out.append(f"{name}: capacity {NOT_MEASURED} (no priced load point, or the target "
                       "failed).")
            continue
        if c.method_note:
            out.append(f"{name}: {c.method_note}.")
        for kind, items in (("blocker", c.blockers), ("warning", c.warnings),
                            ("note", c.notes)):
            for m in items:
                findings.setdefault((kind, m), []).append(name)
    out += [f"Availability {kind} ({', '.join(names)}): {m}"
            for (kind, m), names in findings.items()]
    return out


def ranking_line(v: CapacityView) -> str | None:
    if not v.ranking_at_declared_utilization:
        return None
    parts = []
    for name in v.ranking_at_declared_utilization:
        c = v.targets.get(name)
        gate = ", fails the quality gate" if name in v.failing_gate else ""
        parts.append(f"{name} ({usd(c.cost_at_declared_utilization_usd if c else None)}{gate})")
    return ("Ranked at the declared utilization instead of the demand (every replica busy), "
            "cheapest correct task first: " + ", ".join(parts) + ".")


__all__ = ["METHOD_WORDS", "CapacityView", "FleetRun", "TargetCap", "bracket", "cost_table",
           "fleet_table", "intro", "method_words", "notes", "ranking_line", "run_capacity",
           "target_cap", "whatif_table"]


# --- batching: throughput gained against waiting added ----------------------------------------

BATCHING_HEAD = ["target", "in flight", "req/s", "gain over the level below", "TTFT p50 ms",
                 "wait added ms", "E2E p50 ms", "meets SLO", ""]


def batching_rows(result: RunResult) -> list[list[str]]:
    """One row per concurrency level and target, from the measured load points (the server's
    dynamic batching is what turns more requests in flight into throughput or into waiting)."""
    from acceval.capacity import batching_knee, batching_tradeoff
    from acceval.report._fmt import yesno

    rows: list[list[str]] = []
    for t in result.targets:
        steps = batching_tradeoff(t.points)
        if len(steps) < 2:
            continue
        knee = batching_knee(steps)
        for s in steps:
            rows.append([
                t.name, num(s.concurrency, 1), num(s.throughput_rps, 1),
                pct(s.gain) if s.gain is not None else "—", num(s.ttft_p50_ms, 2),
                num(s.wait_added_ms, 2), num(s.e2e_p50_ms, 2), yesno(s.meets_slo),
                _knee_note(s is knee, s is steps[-1]),
            ])
    return rows


def _knee_note(is_knee: bool, is_last: bool) -> str:
    if not is_knee:
        return ""
    if is_last:
        return "still gaining at the highest level measured: the knee lies beyond it"
    return "knee: beyond this level more in flight buys mostly waiting"
