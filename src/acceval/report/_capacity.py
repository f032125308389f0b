"""A read-only view of what a RunResult says about capacity under the study's demand.

``analyze`` stores each target's capacity as :class:`~acceval.capacity.apply.CapacityResult`
on ``TargetResult.capacity`` (docs/capacity.md, "How the pipeline calls it"), its bill at the
declared utilization on ``TargetResult.economics.at_declared_utilization``, and the one ranking
on ``RunResult.verdict``; the demand itself is ``RunResult.demand``. This module turns
them into the rows the HTML and Markdown renderers print; it ranks nothing. Anything absent is
rendered "not measured".
"""

from __future__ import annotations

from dataclasses import dataclass

from acceval.capacity.apply import CapacityResult, DemandResult
from acceval.capacity.curve import MaxRateResult
from acceval.capacity.simulate import FleetSimSummary
from acceval.loadgen.spec import family
from acceval.report._fmt import NOT_MEASURED, num, pct
from acceval.results.section import PointResult
from acceval.run_result import RunResult, TargetResult
from acceval.units import ONE, PERIODS, MoneyScale, money_per, money_rate, pick_scale, times
from acceval.verdict import Standing, basis_words

DAY = PERIODS[1]  # a fleet is planned over days: its cost reads per day

#: How ``max_rate_under_slo`` found the rate, in words (docs/capacity.md, method table).
METHOD_WORDS = {
    "interpolated": "interpolated where the SLO ratio crosses 1",
    "midpoint": "middle of the bracket (no ratio to follow)",
    "never-failed": "lower bound: every trusted load point met the SLO",
    "never-passed": "none: the lowest load point already fails the SLO",
    "no-slo": "highest measured throughput (the study sets no SLO bound)",
    "no-data": "no load point with a rate",
}


def untrusted_reason(p: PointResult) -> str:
    """``not trusted (why)`` for a point whose load generator fell behind its schedule."""
    why = "; ".join(p.summary.degraded_reasons) or "the load generator fell behind"
    return f"not trusted ({why})"


@dataclass(frozen=True, slots=True)
class TargetCap:
    """Capacity of one target under the demand, as stored, with the figures read per day."""

    target: str
    capacity: CapacityResult
    cost_at_declared_utilization_usd: float | None = None
    untrusted: tuple[tuple[str, str], ...] = ()  # (load label, "not trusted (why)")

    @property
    def max_rate(self) -> MaxRateResult:
        return self.capacity.max_rate_under_slo

    @property
    def rate_rps(self) -> float | None:
        """The highest rate one replica serves within the SLO."""
        return self.capacity.max_rate_under_slo.rate_rps

    @property
    def replicas(self) -> tuple[int, ...] | None:
        """Replicas provisioned per hour of the planning horizon."""
        plan = self.capacity.plan
        return None if plan is None else tuple(plan.replicas)

    @property
    def capacity_rps(self) -> tuple[float, ...] | None:
        """Provisioned SLO-bounded capacity per hour: replicas x rate under the SLO."""
        rate = self.rate_rps
        if self.replicas is None or rate is None:
            return None
        return tuple(n * rate for n in self.replicas)

    @property
    def hours(self) -> int | None:
        return None if self.capacity.plan is None else self.capacity.plan.hours

    @property
    def idle_chip_hours_per_day(self) -> float | None:
        plan = self.capacity.plan
        if plan is None or plan.hours <= 0:
            return None
        return plan.idle_chip_hours * 24.0 / plan.hours

    @property
    def fleet_usd_per_hour(self) -> float | None:
        plan, cost = self.capacity.plan, self.capacity.cost
        if plan is None or cost is None or plan.hours <= 0:
            return None
        return cost.fleet_usd / plan.hours

    @property
    def spare_usd_per_hour(self) -> float | None:
        w = self.capacity.what_if
        if w is None or w.extra_cost_usd is None or w.with_spares.seconds <= 0:
            return None
        return w.extra_cost_usd * 3600.0 / w.with_spares.seconds


def target_cap(t: TargetResult) -> TargetCap | None:
    """What ``t`` says about capacity; None when ``analyze`` stored none."""
    if t.capacity is None:
        return None
    declared = t.economics.at_declared_utilization if t.economics is not None else None
    return TargetCap(
        target=t.name, capacity=t.capacity,
        cost_at_declared_utilization_usd=(None if declared is None
                                          else declared.cost_per_correct_usd),
        untrusted=tuple((p.label, untrusted_reason(p)) for p in t.points if not p.trusted))


@dataclass(frozen=True, slots=True)
class CapacityView:
    """The demand and every target's capacity under it."""

    demand: DemandResult | None
    demand_note: str | None                     # why the demand or its hours are missing
    targets: dict[str, TargetCap | None]        # study order; None: no capacity stored
    standings: tuple[Standing, ...] = ()        # the verdict's, as it ranked them

    @property
    def hourly_mean_rps(self) -> tuple[float, ...] | None:  # demand per hour, the horizon
        d = self.demand
        return None if d is None or d.hourly_mean_rps is None else tuple(d.hourly_mean_rps)

    @property
    def hourly_peak_rps(self) -> tuple[float, ...] | None:  # the hour's highest rate
        d = self.demand
        return None if d is None or d.hourly_peak_rps is None else tuple(d.hourly_peak_rps)

    @property
    def profile(self) -> str | None:
        return None if self.demand is None else self.demand.profile

    @property
    def peak_rps(self) -> float | None:
        return None if self.demand is None else self.demand.peak_rps

    @property
    def days(self) -> int | None:
        return None if self.demand is None else self.demand.days

    @property
    def expected_requests_per_day(self) -> float | None:
        return None if self.demand is None else self.demand.expected_requests_per_day


def run_capacity(result: RunResult) -> CapacityView | None:
    """The capacity view of ``result``; None when the study declares no demand and no target
    carries capacity figures."""
    caps = {t.name: target_cap(t) for t in result.targets}
    demand = result.demand
    if demand is None and not any(caps.values()):
        return None
    note = ("the study declares no demand" if demand is None
            else demand.note if demand.hourly_mean_rps is None else None)
    return CapacityView(demand=demand, demand_note=note, targets=caps,
                        standings=tuple(result.verdict.standings))


def method_words(method: str | None) -> str | None:
    return None if method is None else METHOD_WORDS.get(method, method)


# --- rows shared by the HTML and Markdown renderers (plain text; each renderer escapes) ----

Table = tuple[list[str], list[list[str]]]


def bracket(m: MaxRateResult) -> str:
    """The load points around the max rate: last passing – first failing."""
    lo, hi = m.low_rps, m.high_rps
    if lo is not None and lo <= 0:
        lo = None  # never-passed stores 0: no point passed
    if lo is not None and hi is not None:
        return f"{num(lo, 1)} – {num(hi, 1)}"
    if lo is not None:
        return f"≥ {num(lo, 1)} (no trusted point failed)"
    if hi is not None:
        return f"< {num(hi, 1)} (no point passed)"
    return NOT_MEASURED


def rate_text(m: MaxRateResult) -> str:
    """The max rate, worded ``at least`` when no point failed (it is only a lower bound)."""
    text = num(m.rate_rps)
    return f"at least {text}" if m.method == "never-failed" and m.rate_rps is not None \
        else text


def family_text(m: MaxRateResult) -> str:
    """``poisson (open loop)``: the one load family the rate came from."""
    if m.family is None:
        return ("none (no trusted point)" if m.method == "no-data"
                else "every point (no family judged)")
    return f"{m.family} ({m.loop} loop)" if m.loop else m.family


def _nm_row(name: str, width: int) -> list[str]:
    return [name] + [NOT_MEASURED] * (width - 1)


def intro(v: CapacityView) -> str:
    d = v.demand
    if d is None:
        return f"Demand: {NOT_MEASURED} ({v.demand_note or 'no demand declared'})."
    spares = "spare" if d.spares == 1 else "spares"
    per_day = v.expected_requests_per_day
    day = (f"; {num(per_day, 0)} requests a day" if per_day is not None
           else f"; hourly demand {NOT_MEASURED} ({v.demand_note})")
    return (f"Demand: {d.profile}, busiest hour {num(d.peak_rps, 1)} req/s, "
            f"{d.days} {'day' if d.days == 1 else 'days'}, headroom "
            f"{pct(d.headroom, 0)}, {d.spares} {spares}, {d.scaling} scaling{day}. Each "
            "target's fleet is sized hour by hour at the highest rate one replica serves "
            "within the SLO, from its trusted load points of one load family only "
            "(open-loop arrivals first; docs/capacity.md).")


def fleet_table(v: CapacityView) -> Table:
    head = ["target", "max rate under SLO req/s per replica", "bracket req/s", "how found",
            "from load family", "replicas min – peak", "average utilization (declared)",
            "idle chip-hours per day", "availability"]
    rows = []
    for name, c in v.targets.items():
        if c is None:
            rows.append(_nm_row(name, len(head)))
            continue
        cap, plan = c.capacity, c.capacity.plan
        reps = NOT_MEASURED if plan is None else f"{plan.min_replicas} – {plan.peak_replicas}"
        util = pct(cap.utilization_under_demand)
        if cap.utilization_under_demand is not None:
            util += f" ({pct(cap.declared_utilization, 0)})"
        av = cap.availability
        avail = av.status
        if av.blockers:
            avail += f": {len(av.blockers)} blocker(s)"
        elif av.warnings:
            avail += f": {len(av.warnings)} warning(s)"
        rows.append([name, rate_text(c.max_rate), bracket(c.max_rate),
                     method_words(c.max_rate.method) or NOT_MEASURED,
                     family_text(c.max_rate), reps, util,
                     num(c.idle_chip_hours_per_day, 1), avail])
    return head, rows


def _cost_scale(v: CapacityView) -> MoneyScale:
    """One unit ("per 1M correct tasks") for the whole cost table: that of its cheapest cost."""
    costs = []
    for c in v.targets.values():
        if c is None:
            continue
        if c.capacity.cost is not None:
            k = c.capacity.cost
            costs += [k.cost_per_correct_usd, k.cost_per_correct_at_slo_rate_usd,
                      k.cost_per_correct_at_saturation_usd]
        costs.append(c.cost_at_declared_utilization_usd)
    finite = [x for x in costs if x is not None and 0 < x < float("inf")]
    return pick_scale([min(finite)]) if finite else ONE


def _bound(s: Standing | None) -> str:
    """``at most `` when the verdict's cost rests on a capacity that is only a lower bound."""
    return "at most " if s is not None and s.capacity_at_least_rps is not None else ""


def cost_table(v: CapacityView) -> Table:
    # The fleet columns price replica-hours only, at the target's overall accuracy; the
    # verdict's column is the whole bill (compile, storage, energy...) at its operating point.
    head = ["target", "fleet cost", "fleet compute only, per correct task under demand",
            "at the SLO rate (every replica busy)", "at saturation",
            "under demand ÷ at the SLO rate", "whole bill at the declared utilization",
            "the verdict's cost per correct task (whole bill at the utilization under "
            "demand)"]
    verdict = {s.target: s.cost_per_correct_usd for s in v.standings}
    bounded = {s.target: _bound(s) for s in v.standings}
    scale = _cost_scale(v)

    def per(usd: float | None) -> str:
        return money_per(usd, "correct task", scale=scale)

    rows = []
    for name, c in v.targets.items():
        if c is None:
            rows.append(_nm_row(name, len(head)))
            continue
        k = c.capacity.cost
        if k is None:
            rows.append([name] + [NOT_MEASURED] * 5 + [per(c.cost_at_declared_utilization_usd),
                                                       per(verdict.get(name))])
            continue
        rows.append([name, money_rate(c.fleet_usd_per_hour, period=DAY),
                     per(k.cost_per_correct_usd),
                     per(k.cost_per_correct_at_slo_rate_usd),
                     per(k.cost_per_correct_at_saturation_usd), times(k.ratio),
                     per(c.cost_at_declared_utilization_usd),
                     bounded.get(name, "") + per(verdict.get(name))])
    return head, rows


def _pair(a: str, b: str) -> str:
    return a if a == b == NOT_MEASURED else f"{a} → {b}"


def _count(n: float, frac: float | None) -> str:
    return f"{num(n, 0)} ({pct(frac, 3)})" if frac is not None and n > 0 else num(n, 0)


def whatif_table(v: CapacityView) -> Table:
    head = ["target", "failures", "SLO attainment N → N+1", "late requests N → N+1",
            "lost requests N → N+1", "N+1 extra cost", "cost per request saved"]
    rows = []
    for name, c in v.targets.items():
        w = c.capacity.what_if if c is not None else None
        if c is None or w is None:
            rows.append(_nm_row(name, len(head)))
            continue
        a: FleetSimSummary = w.without
        b: FleetSimSummary = w.with_spares
        saved = money_per(w.usd_per_request_saved, "request")
        if w.usd_per_request_saved is None and w.extra_cost_usd is not None:
            saved = "nothing saved"
        rows.append([name, str(a.failures),
                     _pair(pct(a.slo_attainment, 3), pct(b.slo_attainment, 3)),
                     _pair(_count(a.late, a.late_fraction), _count(b.late, b.late_fraction)),
                     _pair(_count(a.lost, a.lost_fraction), _count(b.lost, b.lost_fraction)),
                     money_rate(c.spare_usd_per_hour, period=DAY), saved])
    return head, rows


def notes(v: CapacityView) -> list[str]:
    """How each rate was found, untrusted points left out, and every availability finding."""
    out = []
    # The same finding for several targets (typically "not declared") is said once.
    findings: dict[tuple[str, str], list[str]] = {}
    for name, c in v.targets.items():
        if c is None:
            out.append(f"{name}: capacity {NOT_MEASURED} (no priced load point, or the target "
                       "failed).")
            continue
        if c.max_rate.note:
            out.append(f"{name}: {c.max_rate.note}.")
        out += [f"{name}: load point {label} {why}: not used for the max rate."
                for label, why in c.untrusted]
        av = c.capacity.availability
        for kind, items in (("blocker", av.blockers), ("warning", av.warnings),
                            ("note", av.notes)):
            for m in items:
                findings.setdefault((kind, m), []).append(name)
    out += [f"Availability {kind} ({', '.join(names)}): {m}"
            for (kind, m), names in findings.items()]
    return out


def ranking_line(v: CapacityView) -> str | None:
    """The verdict's order and the basis of each cost (under the demand, or at the declared
    utilization), as the verdict ranked them."""
    ranked = sorted((s for s in v.standings if s.rank is not None), key=lambda s: s.rank or 0)
    if not ranked:
        return None
    parts = [f"{s.rank}. {s.target} ({_bound(s)}{money_per(s.cost_per_correct_usd)}, "
             f"{basis_words(s)}"
             f"{', at ' + s.operating_point if s.operating_point else ''})" for s in ranked]
    line = "The verdict's order, cheapest correct task first: " + "; ".join(parts) + "."
    out = [s for s in v.standings if not s.qualified]
    if out:
        line += " Not ranked: " + "; ".join(
            f"{s.target} ({'; '.join(s.reasons)})" for s in out) + "."
    return line


__all__ = ["METHOD_WORDS", "CapacityView", "TargetCap", "bracket", "cost_table",
           "fleet_table", "intro", "method_words", "notes", "ranking_line", "run_capacity",
           "target_cap", "untrusted_reason", "whatif_table"]


# --- batching: throughput gained against waiting added ----------------------------------------

BATCHING_HEAD = ["target", "in flight", "req/s", "gain over the level below", "TTFT p50 ms",
                 "wait added ms", "E2E p50 ms", "meets SLO", ""]
BATCHING_INTRO = ("Each step up in requests in flight: the throughput gained over the level "
                  "below it, and the wait added, the median TTFT over the target's lowest median "
                  "TTFT at any level (time a request spent queued or sharing the chip before its "
                  "first token): what the server's dynamic batching turned into throughput, and "
                  "what into queueing.")


def batching_rows(result: RunResult) -> list[list[str]]:
    """One row per concurrency level and target, from the trusted load points (the server's
    dynamic batching is what turns more requests in flight into throughput or into waiting);
    an untrusted point is listed as such, not used."""
    from acceval.capacity import batching_knee, batching_tradeoff
    from acceval.report._fmt import yesno

    rows: list[list[str]] = []
    for t in result.targets:
        steps = batching_tradeoff(p for p in t.points if p.trusted)
        untrusted = [p for p in t.points if not p.trusted]
        if len(steps) < 2 and not (steps and untrusted):
            continue
        knee = batching_knee(steps)
        for s in steps:
            rows.append([
                t.name, num(s.concurrency, 1), num(s.throughput_rps, 1),
                pct(s.gain) if s.gain is not None else "—", num(s.ttft_p50_ms, 2),
                num(s.wait_added_ms, 2), num(s.e2e_p50_ms, 2), yesno(s.meets_slo),
                _knee_note(s is knee, s is steps[-1]),
            ])
        for p in untrusted:
            level = p.level if family(p.kind).loop == "closed" else p.summary.mean_in_flight
            rows.append([t.name, num(level, 1), "—", "—", "—", "—", "—", "—",
                         f"{p.label}: {untrusted_reason(p)}"])
    return rows


def _knee_note(is_knee: bool, is_last: bool) -> str:
    if not is_knee:
        return ""
    if is_last:
        return "still gaining at the highest level measured: the knee lies beyond it"
    return "knee: beyond this level more in flight buys mostly waiting"
