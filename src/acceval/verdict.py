"""The one decision: which targets qualify, each one's operating point, and who wins.

This is the only module that ranks targets. Its rules, each tested:

1. A target **qualifies** when it was measured, passed the quality gate (or none was set),
   is not blocked for the study's demand, and has at least one *eligible* point.
2. An **eligible** point is trusted (the load generator kept its schedule), meets the SLO
   (with no latency bound set: its error-rate bound) and has at least
   ``quality.min_point_requests`` measured requests.
3. The **operating point** of a target is its eligible point with the lowest cost per correct
   task (under the demand when the study has one, else at the declared utilization); without
   prices, the eligible point with the highest throughput.
4. When no target qualifies, no format names a cheapest target. A study with no inference
   targets (only agents or training) has no inference ranking, and says so.
5. A **winner** is named only when its cost interval (from its accuracy interval) lies wholly
   below the runner-up's; otherwise the targets whose intervals overlap the cheapest's
   **tie**. The ratio quoted is runner-up cost / winner cost, at the operating points.

6. **Agent workflows** get their own lines: the cost per correct workflow of each agent
   target (:func:`workflow_lines`). They never enter the inference ranking above; the
   cheapest correct workflow is named only when its interval lies below every other's.

Every format prints :attr:`Verdict.headline` and :attr:`Verdict.lines` as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from acceval.agents.result import AgentsResult, AgentTargetResult
from acceval.capacity.availability import AvailabilityResult
from acceval.economics.apply import PointCost, TargetEconomics
from acceval.economics.sensitivity import SensitivityResult
from acceval.quality import Gate
from acceval.results.section import PointResult, Section
from acceval.training.result import (
    PlatformTrainingResult,
    TrainingStanding,
    TrainingVerdict,
)
from acceval.units import (
    ONE,
    money_per,
    money_per_with_interval,
    number,
    times,
    usd_interval,
)

VerdictStatus = Literal["winner", "tie", "none-qualify", "not-priced", "no-targets"]


class Standing(Section):
    """One target in the verdict: qualified or not (and why), at its operating point."""

    target: str
    qualified: bool
    reasons: list[str]  # why it does not qualify (empty when it does)
    operating_point: str | None  # the cheapest trusted point that meets the SLO
    operating_rate_rps: float | None
    cost_per_correct_usd: float | None
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None
    cost_basis: Literal["under demand", "declared utilization"] | None
    cost_per_mtok_output_usd: float | None = None
    rank: int | None  # 1 = cheapest among the qualified; None when not qualified


class Verdict(Section):
    """The one decision; every format phrases it, none re-derives it."""

    status: VerdictStatus
    winner: str | None
    tied: list[str]  # targets whose cost intervals overlap the cheapest's (status "tie")
    headline: str
    lines: list[str]  # supporting sentences, the same in every format
    standings: list[Standing]  # qualified by rank first, then the rest
    rules: list[str]  # the rules as applied (minimum requests, interval separation)
    ratio_to_runner_up: float | None = None

    def standing(self, target: str) -> Standing | None:
        return next((s for s in self.standings if s.target == target), None)




@dataclass(frozen=True, slots=True)
class Rules:
    min_point_requests: int = 20


def point_problems(p: PointResult, rules: Rules) -> list[str]:
    """Why a point cannot be an operating point (empty: it is eligible)."""
    out = []
    if not p.trusted:
        why = "; ".join(p.summary.degraded_reasons) or "the load generator fell behind"
        out.append(f"not trusted ({why})")
    s = p.summary
    if s.meets_slo is False:
        out.append("misses the SLO")
    elif s.slo_unmeasured:
        out.append("SLO not assessed: it bounds " + ", ".join(s.slo_unmeasured)
                   + ", which this point did not measure (answers not streamed, or sent in "
                   "one piece)")
    elif s.meets_slo is None and (s.error_rate is None or s.error_rate > s.slo.max_error_rate):
        # No latency bound was set: the error-rate bound still applies.
        out.append(f"error rate above {s.slo.max_error_rate:.1%}"
                   if s.error_rate is not None else "no request completed")
    if p.summary.requests < rules.min_point_requests:
        out.append(f"{p.summary.requests} measured requests (< {rules.min_point_requests})")
    return out


class RankedTarget(Protocol):
    """What the verdict reads of a measured target (``TargetResult`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def points(self) -> Sequence[PointResult]: ...
    @property
    def economics(self) -> TargetEconomics | None: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def gate(self) -> Gate: ...
    @property
    def availability(self) -> AvailabilityResult | None: ...


def cheapest(costs: Mapping[str, float]) -> str | None:
    """Who wins at these costs per correct task: the cheapest finite one (ties by name);
    None when no cost is finite. The sensitivity analysis asks this rule under each swing."""
    finite = sorted((c, name) for name, c in costs.items() if math.isfinite(c))
    return finite[0][1] if finite else None


def eligible_points(t: RankedTarget, rules: Rules) -> list[PointResult]:
    return [p for p in t.points if not point_problems(p, rules)]


def _cost(t: RankedTarget, label: str) -> PointCost | None:
    return t.economics.point(label) if t.economics is not None else None


def _cpc(pc: PointCost | None) -> float:
    return pc.bill.cost_per_correct_usd if pc is not None else math.inf


def operating_point(t: RankedTarget, rules: Rules) -> PointResult | None:
    """Rule 3: the cheapest eligible point (the fastest one when nothing is priced)."""
    pts = eligible_points(t, rules)
    if not pts:
        return None
    if t.economics is not None:
        return min(pts, key=lambda p: (_cpc(_cost(t, p.label)), p.index))
    return max(pts, key=lambda p: (p.summary.request_throughput_rps or 0.0, -p.index))


def _disqualified(t: RankedTarget, rules: Rules) -> list[str]:
    reasons = []
    if t.failure:
        reasons.append(f"could not be measured: {t.failure}")
    if t.gate.passed is False:
        reasons.append("fails the quality level (" + "; ".join(t.gate.reasons) + ")")
    avail = t.availability
    if avail is not None and avail.status == "blocked":
        where = avail.assessed_for or "this demand"
        reasons.append(f"blocked for {where}: " + "; ".join(avail.blockers))
    if not t.failure and not eligible_points(t, rules):
        if not t.points:
            reasons.append("no load point was measured")
        else:
            reasons.append(f"no trusted load point meets the SLO with at least "
                           f"{rules.min_point_requests} requests")
    return reasons


def standings(targets: Sequence[RankedTarget], rules: Rules) -> list[Standing]:
    """Rules 1–3 for every target, qualified ones ranked by cost (rank 1 cheapest)."""
    rows = []
    for t in targets:
        reasons = _disqualified(t, rules)
        op = operating_point(t, rules)
        pc = _cost(t, op.label) if op is not None else None
        cost = pc.bill.cost_per_correct_usd if pc is not None else None
        basis = None
        if pc is not None and t.economics is not None:
            basis = ("under demand" if t.economics.utilization_under_demand is not None
                     else "declared utilization")
        rows.append(Standing(
            target=t.name, qualified=not reasons, reasons=reasons,
            operating_point=op.label if op is not None else None,
            operating_rate_rps=op.summary.request_throughput_rps if op is not None else None,
            cost_per_correct_usd=cost,
            cost_per_correct_ci_usd=pc.cost_per_correct_ci_usd if pc is not None else None,
            cost_basis=basis, rank=None,
            cost_per_mtok_output_usd=pc.bill.cost_per_mtok_output_usd if pc else None))
    qualified = sorted((s for s in rows if s.qualified),
                       key=lambda s: (math.inf if s.cost_per_correct_usd is None
                                      else s.cost_per_correct_usd, s.target))
    for i, s in enumerate(qualified, 1):
        s.rank = i
    return qualified + [s for s in rows if not s.qualified]


def _separates(win: Standing, other: Standing) -> bool:
    """Rule 5: the winner's interval lies wholly below the other's."""
    wi, oi = win.cost_per_correct_ci_usd, other.cost_per_correct_ci_usd
    w_high = wi[1] if wi is not None and wi[1] is not None else win.cost_per_correct_usd
    o_low = oi[0] if oi is not None and oi[0] is not None else other.cost_per_correct_usd
    if w_high is None or o_low is None:
        return False
    return w_high < o_low


def _where(s: Standing) -> str:
    basis = f", {s.cost_basis}" if s.cost_basis else ""
    return f"({s.operating_point}{basis})"


def decide(targets: Sequence[RankedTarget], rules: Rules,
           sensitivity: SensitivityResult | None = None, *,
           rows: list[Standing] | None = None) -> Verdict:
    """The verdict over analysed targets (rules 1–5); ``rows`` are their :func:`standings`
    when the caller already has them."""
    rows = standings(targets, rules) if rows is None else rows
    qualified = [s for s in rows if s.qualified]
    priced = [s for s in qualified if s.cost_per_correct_usd is not None
              and math.isfinite(s.cost_per_correct_usd)]
    rule_lines = [
        f"An operating point is trusted, meets the SLO and has at least "
        f"{rules.min_point_requests} measured requests; it is the cheapest such point.",
        "A winner is named only when its cost interval lies below the runner-up's.",
        "The interval covers the accuracy's uncertainty only: the throughput of one run is "
        "taken as measured, so a close margin can move between runs; repeat the study to "
        "see that spread.",
    ]
    lines: list[str] = []
    for s in rows:
        if not s.qualified:
            lines.append(f"{s.target} does not qualify: {'; '.join(s.reasons)}.")
    winner: str | None = None
    tied: list[str] = []
    ratio: float | None = None
    if not rows:
        status = "no-targets"
        headline = ("No inference targets in this study, so there is no inference ranking "
                    "(agent workflows and training, if any, are compared on their own).")
    elif not qualified:
        status = "none-qualify"
        headline = ("No target qualifies, so none is named cheapest: "
                    + "; ".join(f"{s.target} {s.reasons[0]}" for s in rows) + ".")
    elif not priced:
        status = "not-priced"
        names = ", ".join(s.target for s in qualified)
        headline = (f"Qualified: {names}. No cost per correct task: the qualified targets "
                    "declare no price or answered nothing correctly.")
    else:
        best = priced[0]
        rest = priced[1:]
        if rest:
            ratio = _ratio(rest[0], best)
        if not rest:
            status = "winner"
            winner = best.target
            headline = (f"Cheapest correct task: {best.target} at "
                        f"{money_per(best.cost_per_correct_usd, 'correct task')} {_where(best)}"
                        f"; the only target that qualifies.")
        elif _separates(best, rest[0]):
            status = "winner"
            winner = best.target
            headline = (f"Cheapest correct task: {best.target} at "
                        f"{money_per(best.cost_per_correct_usd, 'correct task')} {_where(best)}"
                        f", {times(ratio)} cheaper than {rest[0].target}.")
        else:
            status = "tie"
            tied = [best.target] + [s.target for s in rest if not _separates(best, s)]
            headline = (f"Tie on the cheapest correct task: {', '.join(tied)} (cost intervals "
                        f"overlap; {best.target} is lowest at "
                        f"{money_per(best.cost_per_correct_usd, 'correct task')}, "
                        f"{times(ratio)} below {rest[0].target}).")
        for s in priced:
            lines.append(f"{s.target}: {money_per(s.cost_per_correct_usd, 'correct task')} "
                         f"{usd_interval(s.cost_per_correct_ci_usd)} {_where(s)}.")
        lines += _per_token_line(rows, best)
        lines += _sensitivity_lines(priced, sensitivity)
    return Verdict(status=status, winner=winner, tied=tied, headline=headline, lines=lines,
                   standings=rows, rules=rule_lines, ratio_to_runner_up=ratio)


def _per_token_line(rows: list[Standing], best: Standing) -> list[str]:
    """The article's warning: the cheapest per token is not always the cheapest per task."""
    per_tok = [s for s in rows if s.cost_per_mtok_output_usd is not None]
    if not per_tok:
        return []
    tok = min(per_tok, key=lambda s: s.cost_per_mtok_output_usd or math.inf)
    if tok.target == best.target:
        return []
    return [f"The cheapest per token ({tok.target}, "
            f"{money_per(tok.cost_per_mtok_output_usd, '1M output tokens', scale=ONE)}) is "
            f"not the cheapest per correct task ({best.target})."]


def _ratio(other: Standing, best: Standing) -> float | None:
    a, b = other.cost_per_correct_usd, best.cost_per_correct_usd
    if a is None or b is None or b <= 0 or not math.isfinite(a):
        return None
    return a / b


def _sensitivity_lines(priced: list[Standing], sens: SensitivityResult | None) -> list[str]:
    if sens is None:
        return []
    if len(priced) == 1:
        return ["Only one target qualifies, so no assumption can change the winner; the "
                "sensitivity ranges move its cost only."]
    if sens.flips:
        names = sorted({f"{f.input} ({f.scope}, {f.side})" for f in sens.flips})
        return ["The ranking FLIPS within the sensitivity ranges when these move: "
                + ", ".join(names) + "."]
    return ["The ranking holds across every declared sensitivity range."]


def workflow_lines(agents: AgentsResult | None) -> list[str]:
    """Rule 6: cost per correct workflow per agent target, in the study's order."""
    if agents is None:
        return []
    if agents.skipped:
        return [f"Agent workflows: {agents.skipped}."]
    lines, priced = [], []
    for t in agents.targets:
        who = f"{t.name} ({t.source})" if t.scripted else t.name
        done = t.completion
        share = (f"{done.k}/{done.n} workflows correct" if done.n else "no workflow run")
        if t.cost is None:
            lines.append(f"Agent workflows, {who}: {share}; no price declared, so no cost per "
                         "correct workflow.")
            continue
        cost = money_per_with_interval(t.cost.cost_per_correct_usd,
                                       t.cost.cost_per_correct_ci_usd, "correct workflow")
        lines.append(f"Agent workflows, {who}: {cost} ({share}).")
        if math.isfinite(t.cost.cost_per_correct_usd):
            priced.append(t)
    priced.sort(key=lambda t: (t.cost.cost_per_correct_usd if t.cost else math.inf, t.name))
    if len(priced) >= 2:
        best, rest = priced[0], priced[1:]
        hi = _ci_end(best, 1)
        if hi is not None and all((lo := _ci_end(o, 0)) is not None and hi < lo for o in rest):
            lines.append(f"Cheapest correct workflow: {best.name} (its interval lies below the "
                         "others'); agent workflows do not enter the inference ranking.")
        else:
            lines.append("No agent target is named cheapest per correct workflow: the "
                         "intervals overlap.")
    return lines


def _ci_end(t: AgentTargetResult, end: int) -> float | None:
    ci = t.cost.cost_per_correct_ci_usd if t.cost is not None else None
    return ci[end] if ci is not None else None


# --- training: cost per run to target ---------------------------------------------------------

def _training_reasons(p: PlatformTrainingResult) -> list[str]:
    """Rule 1 for a training platform: measured, a valid time to target, and not diverged."""
    out = []
    if p.failure:
        out.append(f"could not be measured: {p.failure}")
    ttt = p.time_to_target
    if not p.failure and (ttt is None or not ttt.valid):
        out.append("no valid time to target (" + (ttt.reason if ttt else "no runs") + ")")
    diverged = [r.index for r in p.runs if r.stability.diverged and not r.reached]
    if diverged:
        out.append(f"run(s) {', '.join(map(str, diverged))} diverged")
    return out


def _training_separates(win: TrainingStanding, other: TrainingStanding) -> bool:
    """Rule 5: the winner's interval (its converged runs' spread) lies wholly below the
    other's."""
    w = win.interval_usd[1] if win.interval_usd else win.cost_per_run_usd
    o = other.interval_usd[0] if other.interval_usd else other.cost_per_run_usd
    return w is not None and o is not None and w < o


def decide_training(platforms: Sequence[PlatformTrainingResult]) -> TrainingVerdict:
    """Cost per training run to target, with the inference rules: a platform qualifies when
    it has a valid MLPerf-style time to target; the cheapest is named a winner only when its
    cost interval (at its fastest and slowest converged runs) lies below the
    runner-up's, else the overlapping ones tie; nothing qualifies, nothing is named."""
    rows = []
    for p in platforms:
        reasons = _training_reasons(p)
        cost = p.cost.cost_per_run_usd if p.cost is not None else None
        rows.append(TrainingStanding(
            platform=p.name, qualified=not reasons, reasons=reasons, cost_per_run_usd=cost,
            interval_usd=p.cost.interval_usd if p.cost is not None else None,
            time_to_target_s=p.time_to_target.value_s if p.time_to_target else None))
    qualified = sorted((s for s in rows if s.qualified),
                       key=lambda s: (math.inf if s.cost_per_run_usd is None
                                      else s.cost_per_run_usd, s.platform))
    for i, s in enumerate(qualified, 1):
        s.rank = i
    rows = qualified + [s for s in rows if not s.qualified]
    lines = [f"Training {s.platform} does not qualify: {'; '.join(s.reasons)}."
             for s in rows if not s.qualified]
    priced = [s for s in qualified if s.cost_per_run_usd is not None]
    winner, tied, ratio = None, [], None
    if not qualified:
        status = "none-qualify"
        headline = ("Training: no platform qualifies, so none is named cheapest: "
                    + "; ".join(f"{s.platform} {s.reasons[0]}" for s in rows) + ".")
    elif not priced:
        status = "not-priced"
        headline = (f"Training: qualified {', '.join(s.platform for s in qualified)}; no cost "
                    "per run to target (no price declared).")
    else:
        best, rest = priced[0], priced[1:]
        per = money_per(best.cost_per_run_usd, "training run")
        if rest:
            ratio = _training_ratio(rest[0], best)
        if not rest:
            status, winner = "winner", best.platform
            headline = (f"Cheapest training run to target: {best.platform} at {per}; the only "
                        "platform that qualifies.")
        elif _training_separates(best, rest[0]):
            status, winner = "winner", best.platform
            headline = (f"Cheapest training run to target: {best.platform} at {per}, "
                        f"{times(ratio)} cheaper than {rest[0].platform}.")
        else:
            status = "tie"
            tied = [best.platform] + [s.platform for s in rest
                                      if not _training_separates(best, s)]
            headline = (f"Tie on the cheapest training run to target: {', '.join(tied)} "
                        f"(the run-to-run spreads overlap; {best.platform} is lowest at {per}, "
                        f"{times(ratio)} below {rest[0].platform}).")
        for s in priced:
            said = money_per_with_interval(s.cost_per_run_usd, s.interval_usd, "training run")
            lines.append(f"Training {s.platform}: {said} to target (time to "
                         f"target {number(s.time_to_target_s)} s, MLPerf scoring; the "
                         "interval spans its fastest and slowest converged run).")
    return TrainingVerdict(status=status, winner=winner, tied=tied, headline=headline,
                           lines=lines, standings=rows, ratio_to_runner_up=ratio)


def _training_ratio(other: TrainingStanding, best: TrainingStanding) -> float | None:
    a, b = other.cost_per_run_usd, best.cost_per_run_usd
    if a is None or b is None or b <= 0:
        return None
    return a / b


__all__ = ["Rules", "decide", "decide_training", "eligible_points", "operating_point",
           "point_problems", "standings", "workflow_lines"]
