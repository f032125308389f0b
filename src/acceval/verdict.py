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
5. A **winner** is named only when its cost interval (from its accuracy interval, widened by
   its operating point's throughput spread over repeats when the study repeats points) lies
   wholly below the runner-up's; otherwise the targets whose intervals overlap the cheapest's
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

from pydantic import Field

from acceval.agents.result import AgentsResult, AgentTargetResult
from acceval.capacity.apply import CapacityResult
from acceval.capacity.availability import AvailabilityResult
from acceval.economics.apply import PointCost, TargetEconomics
from acceval.economics.sensitivity import SensitivityResult
from acceval.quality import Gate
from acceval.results.section import PointResult, RepeatsResult, Section
from acceval.training.result import (
    PlatformTrainingResult,
    TrainingStanding,
    TrainingVerdict,
)
from acceval.units import (
    ONE,
    MoneyScale,
    choose_scale,
    money_per,
    money_per_mtok,
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
    # What the cost interval covers ("accuracy", "throughput over 3 runs") and which
    # inputs it takes as exact (prices, utilization, throughput of one run).
    interval_covers: list[str] = Field(default_factory=list)
    taken_as_exact: list[str] = Field(default_factory=list)
    # The max rate under the SLO when it is only a lower bound (no trusted point failed) and
    # the cost is under demand: the fleet, and so the cost, are then upper bounds.
    capacity_at_least_rps: float | None = None


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
    # The one scale (1, 1K, 1M or 1B units) every money-per-unit figure of this result is
    # shown at, chosen once from its magnitudes (acceval.units.report_scale).
    money_scale: int | None = None
    # Each pillar's own decision, beside the inference ranking (never merged into it).
    training: TrainingVerdict | None = None
    workflows: WorkflowVerdict | None = None

    @property
    def sentences(self) -> list[str]:
        """Every supporting sentence, the same in every format: the inference ranking's, then
        each pillar's decision (agent workflows, training to target)."""
        out = list(self.lines)
        if self.workflows is not None:
            out += self.workflows.lines
        if self.training is not None:
            out += [self.training.headline, *self.training.lines]
        return out

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
    @property
    def capacity(self) -> CapacityResult | None: ...
    def repeats_of(self, label: str) -> RepeatsResult | None: ...


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
        ci = pc.cost_per_correct_ci_usd if pc is not None else None
        spread = throughput_spread(t, op)
        covers = ["accuracy"] if ci is not None else []
        exact = ["prices", "utilization" if basis != "under demand" else
                 "the demand profile"]
        if spread is not None and ci is not None:
            ci, covers = _widen(ci, spread), [*covers, f"throughput over {spread.runs} runs"]
        elif pc is not None:
            exact.append("throughput (one run of each point)")
        rows.append(Standing(
            target=t.name, qualified=not reasons, reasons=reasons,
            operating_point=op.label if op is not None else None,
            operating_rate_rps=op.summary.request_throughput_rps if op is not None else None,
            cost_per_correct_usd=cost, cost_per_correct_ci_usd=ci,
            cost_basis=basis, rank=None,
            cost_per_mtok_output_usd=pc.bill.cost_per_mtok_output_usd if pc else None,
            interval_covers=covers, taken_as_exact=exact if pc is not None else [],
            capacity_at_least_rps=_lower_bound(t) if basis == "under demand" else None))
    qualified = sorted((s for s in rows if s.qualified),
                       key=lambda s: (math.inf if s.cost_per_correct_usd is None
                                      else s.cost_per_correct_usd, s.target))
    for i, s in enumerate(qualified, 1):
        s.rank = i
    return qualified + [s for s in rows if not s.qualified]


@dataclass(frozen=True, slots=True)
class Spread:
    """The throughput of the operating point over its repeats, against the run used."""

    runs: int
    used_rps: float
    low_rps: float
    high_rps: float


def throughput_spread(t: RankedTarget, op: PointResult | None) -> Spread | None:
    """The operating point's throughput interval over its repeats (None without repeats)."""
    if op is None or op.summary.request_throughput_rps is None:
        return None
    rep = t.repeats_of(op.label)
    if rep is None:
        return None
    iv = rep.request_throughput_rps
    if iv.low is None or iv.high is None or iv.low <= 0:
        return None
    return Spread(rep.runs, op.summary.request_throughput_rps, iv.low, iv.high)


def _widen(ci: tuple[float | None, float | None], s: Spread
           ) -> tuple[float | None, float | None]:
    """The accuracy interval widened by the throughput's: a cost per correct task scales
    as one over throughput (the bill is paid per hour), so the slowest repeat raises the
    high end and the fastest lowers the low end."""
    lo, hi = ci
    return (None if lo is None else lo * s.used_rps / s.high_rps,
            None if hi is None else hi * s.used_rps / s.low_rps)


def _lower_bound(t: RankedTarget) -> float | None:
    cap = t.capacity
    if cap is None or cap.max_rate_under_slo.method != "never-failed":
        return None
    return cap.max_rate_under_slo.rate_rps


def money_amounts(targets: Sequence[RankedTarget],
                  agents: AgentsResult | None = None) -> list[float | None]:
    """Every money-per-unit amount a report of these targets shows: each point's cost per
    attempt and per correct task (at the measured rate and under demand), the spare what-if's
    cost per request saved, and each agent's cost per correct workflow."""
    out: list[float | None] = []
    for t in targets:
        for pc in t.economics.points if t.economics is not None else []:
            out += [pc.bill.cost_per_correct_usd, pc.bill.cost_per_attempt_usd]
        cap = t.capacity
        if cap is not None and cap.cost is not None:
            out += [cap.cost.cost_per_correct_usd, cap.cost.cost_per_correct_at_slo_rate_usd,
                    cap.cost.cost_per_correct_at_saturation_usd]
        if cap is not None and cap.what_if is not None:
            out.append(cap.what_if.usd_per_request_saved)
    for a in agents.targets if agents is not None else []:
        if a.cost is not None:
            out.append(a.cost.cost_per_correct_usd)
    return out


def money_scale(targets: Sequence[RankedTarget],
                agents: AgentsResult | None = None) -> MoneyScale:
    """The one scale a report of these targets shows money per unit at."""
    return choose_scale(money_amounts(targets, agents))


def _separates(win: Standing, other: Standing) -> bool:
    """Rule 5: the winner's interval lies wholly below the other's."""
    wi, oi = win.cost_per_correct_ci_usd, other.cost_per_correct_ci_usd
    w_high = wi[1] if wi is not None and wi[1] is not None else win.cost_per_correct_usd
    o_low = oi[0] if oi is not None and oi[0] is not None else other.cost_per_correct_usd
    if w_high is None or o_low is None:
        return False
    return w_high < o_low


BASIS_WORDS = {"under demand": "whole bill at the utilization under demand",
               "declared utilization": "whole bill at the declared utilization"}


def basis_words(s: Standing) -> str:
    """How the verdict names its cost, the same words the capacity section uses."""
    return BASIS_WORDS.get(s.cost_basis or "", "whole bill")


def _where(s: Standing) -> str:
    return f"({s.operating_point}, {basis_words(s)})"


def _at(s: Standing) -> str:
    """``at $0.49 per correct task`` or ``at most $0.49 per correct task``."""
    said = _cost_said(s)
    return said if said.startswith("at most") else f"at {said}"


def _cost_said(s: Standing) -> str:
    """The cost, worded ``at most`` when it rests on a capacity that is only a lower bound."""
    text = money_per(s.cost_per_correct_usd, "correct task")
    return f"at most {text}" if s.capacity_at_least_rps is not None else text


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
            headline = (f"Cheapest correct task: {best.target} {_at(best)} {_where(best)}"
                        f"; the only target that qualifies.")
        elif _separates(best, rest[0]):
            status = "winner"
            winner = best.target
            headline = (f"Cheapest correct task: {best.target} {_at(best)} {_where(best)}"
                        f", {_ratio_said(ratio, best, rest[0])} than {rest[0].target}.")
        else:
            status = "tie"
            tied = [best.target] + [s.target for s in rest if not _separates(best, s)]
            headline = (f"Tie on the cheapest correct task: {', '.join(tied)} (cost intervals "
                        f"overlap; {best.target} is lowest with "
                        f"{_cost_said(best)}, "
                        f"{_ratio_said(ratio, best, rest[0], 'below')} {rest[0].target}).")
        if rest and sensitivity is not None and sensitivity.flips:
            headline += (" The ranking flips within the declared sensitivity ranges, so it "
                         "holds only at the inputs as declared (below).")
        for s in priced:
            lines.append(f"{s.target}: {_cost_said(s)} "
                         f"{usd_interval(s.cost_per_correct_ci_usd)} {_where(s)}.")
            if s.capacity_at_least_rps is not None:
                lines.append(
                    f"{s.target}'s capacity is at least {number(s.capacity_at_least_rps)} "
                    "req/s per replica (no trusted load point failed the SLO), so its fleet and "
                    "its cost under demand are upper bounds; add higher load points to measure "
                    "them.")
        lines += _per_token_line(rows, best)
        lines += _sensitivity_lines(priced, sensitivity)
        lines += _certainty_lines(rows)
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
            f"{money_per_mtok(tok.cost_per_mtok_output_usd)}) is "
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
    bounded = [s.target for s in priced if s.capacity_at_least_rps is not None]
    caveat = ("; the ranges do not cover capacity, and the capacity of "
              + ", ".join(bounded) + " is only a lower bound" if bounded else "")
    if sens.flips:
        names = sorted({f"{f.input} ({f.scope}, {f.side})" for f in sens.flips})
        return ["The ranking FLIPS within the sensitivity ranges when these move: "
                + ", ".join(names) + caveat + "."]
    if bounded:
        return ["The ranking holds across every declared sensitivity range" + caveat
                + ", so it is not established beyond those bounds."]
    return ["The ranking holds across every declared sensitivity range."]


def _ratio_said(ratio: float | None, best: Standing, other: Standing,
                word: str = "cheaper") -> str:
    """``2.9× cheaper``; a ratio between bounds (either side's capacity only a lower bound)
    is no measurement, and says so."""
    if best.capacity_at_least_rps is not None or other.capacity_at_least_rps is not None:
        return f"{times(ratio)} {word} (a ratio of bounds)"
    return f"{times(ratio)} {word}"


def _certainty_lines(rows: list[Standing]) -> list[str]:
    """What the cost intervals cover and which inputs they take as exact, said once."""
    priced = [s for s in rows if s.cost_per_correct_usd is not None]
    if not priced:
        return []
    covers = sorted({c for s in priced for c in s.interval_covers})
    exact = list(dict.fromkeys(x for s in priced for x in s.taken_as_exact))
    line = ("The cost interval covers " + (" and ".join(covers) if covers else "nothing")
            + "; taken as exact: " + ", ".join(exact) + ".")
    if any("throughput (one run" in x for x in exact):
        line += (" A close margin can move between runs: measure each point more than once "
                 "(load[].repeats) to put throughput's spread in the interval.")
    return [line]


class WorkflowVerdict(Section):
    """Rule 6: each agent target's cost per correct workflow, and the cheapest one when its
    interval lies below every other's. Workflows never enter the inference ranking."""

    cheapest: str | None = None
    lines: list[str] = Field(default_factory=list)


def decide_workflows(agents: AgentsResult | None) -> WorkflowVerdict | None:
    """Rule 6 as a typed part of the verdict (None: the study has no agents part)."""
    if agents is None:
        return None
    lines = workflow_lines(agents)
    cheapest = next((line.split(": ", 1)[1].split(" (", 1)[0] for line in lines
                     if line.startswith("Cheapest correct workflow: ")), None)
    return WorkflowVerdict(cheapest=cheapest, lines=lines)


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
        per = money_per(best.cost_per_run_usd, "training run", scale=ONE)
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
            said = money_per_with_interval(s.cost_per_run_usd, s.interval_usd, "training run",
                                           scale=ONE)
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


__all__ = ["BASIS_WORDS", "Rules", "Spread", "basis_words", "decide", "decide_training",
           "eligible_points", "money_amounts", "money_scale", "operating_point",
           "point_problems", "standings", "throughput_spread", "workflow_lines"]
