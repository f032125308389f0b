"""A ratio claim against a run: the measured ratio at every comparable point, and where the
claim falls in that distribution; or, where the run is not the claim's conditions, which axes
differ instead of a comparison (docs/planning.md, "Claims against a run")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from acceval.claims.ledger import ClaimConflict, ClaimRow
from acceval.claims.spec import MEASURES, Claim, ClaimCheck
from acceval.results.section import PointResult, Section


class RatioPoint(Section):
    """One comparable load point of a claim check: the measured ratio there."""

    label: str
    subject_value: float
    comparator_value: float
    ratio: float


class ClaimCheckResult(Section):
    """A ratio claim against the run: compared point by point, or refused with the reasons."""

    claim: str
    claimed: str  # "up to 4.4×"
    subject: str
    comparator: str
    measure: str
    status: Literal["compared", "refused", "no comparable points"]
    differs: list[str]  # axes on which the run is not the claim's conditions (the reasons)
    unchecked: list[str]  # axes the run cannot confirm or deny
    points: list[RatioPoint] = Field(default_factory=list)
    measured_low: float | None = None
    measured_high: float | None = None
    above: int = 0  # points whose measured ratio is below the claim
    sentence: str
    # No comparable point: each condition that failed (how many points it excluded) and the
    # run that would meet them.
    failed: list[str] = Field(default_factory=list)
    to_run: list[str] = Field(default_factory=list)


class ClaimsResult(Section):
    """The claim ledger of a study, its conflicts, and the claims checked against the run."""

    claims: list[ClaimRow]
    conflicts: list[ClaimConflict] = Field(default_factory=list)
    checks: list[ClaimCheckResult] = Field(default_factory=list)



#: A point's mean prompt or output length matches a claim's within this relative distance.
LENGTH_TOLERANCE = 0.25


@dataclass(frozen=True, slots=True)
class Side:
    """One target of the run as a claim check sees it."""

    name: str
    hardware: str | None
    model: str | None
    precision: str | None
    software: str | None
    points: list[PointResult]


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().lower() == b.strip().lower()


def _hardware(claim: Claim, subject: Side, comparator: Side) -> list[str]:
    out = []
    for role, want, side in (("subject", claim.subject_hardware, subject),
                             ("comparator", claim.comparator_hardware, comparator)):
        if want is not None and not _same(want, side.hardware):
            what = claim.subject if role == "subject" else claim.comparator
            out.append(f"{role} hardware: the claim's {role} is {what} ({want}); target "
                       f"{side.name} runs on {side.hardware or 'undeclared hardware'}")
    return out


def _axes(claim: Claim, subject: Side, comparator: Side,
          slo_text: str) -> tuple[list[str], list[str]]:
    """(axes that differ, axes the run cannot confirm)."""
    differs = _hardware(claim, subject, comparator)
    unchecked = []
    ax = claim.axes
    sides = (subject, comparator)
    if ax.model is not None:
        differs += [f"model: the claim's is {ax.model}; {s.name} serves "
                    f"{s.model or 'an undeclared model'}" for s in sides
                    if not _same(ax.model, s.model)]
    elif subject.model is None or comparator.model is None:
        unknown = [s.name for s in sides if s.model is None]
        differs.append(f"model: {' and '.join(unknown)} declare{'s' if len(unknown) == 1 else ''}"
                       " no model and the run did not list one: set serve.model or "
                       "endpoint.model so the two can be seen to serve the same model")
    elif not _same(subject.model, comparator.model):
        differs.append(f"model: {subject.name} serves {subject.model}, {comparator.name} "
                       f"serves {comparator.model}; a ratio across two models is not a "
                       "ratio of platforms")
    if ax.precision is not None:
        differs += [f"precision: the claim's is {ax.precision}; {s.name} runs "
                    f"{s.precision or 'an undeclared precision'}" for s in sides
                    if not _same(ax.precision, s.precision)]
    if ax.software is not None:
        differs += [f"software: the claim's is {ax.software}; {s.name} runs "
                    f"{s.software or 'undeclared software'}" for s in sides
                    if not (s.software and ax.software.lower() in s.software.lower())]
    if ax.batch_size is not None:
        unchecked.append(f"batch size {ax.batch_size}: the run records requests in flight, "
                         "not the server's batch")
    if ax.latency_target is not None:
        unchecked.append(f"latency target '{ax.latency_target}': the run judges its points "
                         f"against its own SLO ({slo_text})")
    if ax.quality is not None:
        unchecked.append(f"quality '{ax.quality}': the run's quality level is its own")
    return differs, unchecked


def _failures(claim: Claim, side: str, p: PointResult) -> list[tuple[str, str, str]]:
    """(condition that failed, its detail at this point, what to run instead) for one
    point; none: it is comparable."""
    ax = claim.axes
    s = p.summary
    out = []
    if ax.concurrency is not None and (p.requested_rate_rps is not None
                                       or int(p.level) != ax.concurrency):
        out.append((f"concurrency: the claim's is {ax.concurrency}", p.label,
                    f"a closed-loop point at concurrency {ax.concurrency} "
                    f"(load: [{{concurrency: [{ax.concurrency}]}}])"))
    for what, want, total, fix in (
            ("input", ax.input_tokens, s.prompt_tokens_total,
             "tasks whose prompts average {n} tokens"),
            ("output", ax.output_tokens, s.output_tokens_total,
             "tasks.max_tokens near {n} with answers that long")):
        if want is None:
            continue
        if total is None or not s.ok:
            out.append((f"{what} length: not measured on {side}", p.label,
                        "a point whose requests succeed and report their token counts"))
        elif abs(total / s.ok - want) > LENGTH_TOLERANCE * want:
            out.append((f"{what} length: the claim's is {want} tokens, more than "
                        f"{LENGTH_TOLERANCE:.0%} from the run's", f"{total / s.ok:.0f} at "
                        f"{p.label}", fix.format(n=want)))
    if not p.trusted:
        out.append((f"trusted: {side}'s points were not", p.summary.untrusted_reason
                    or "the self-check flagged them",
                    "the same points on a quiet machine (or with --clients 2 when the "
                    "client fell behind)"))
    return out


def _comparable(claim: Claim, p: PointResult) -> bool:
    return not _failures(claim, "", p)


def _no_points(claim: Claim, subject: Side, comparator: Side) -> tuple[list[str], list[str]]:
    """Which of the claim's conditions excluded the points, how many each, and what to run."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    fixes: list[str] = []
    theirs = {p.label: p for p in comparator.points}
    for p in subject.points:
        q = theirs.get(p.label)
        pairs = [(comparator.name, q), (subject.name, p)] if q is not None else []
        found = [] if q is not None else [
            ("same load point: measured on the subject only", p.label,
             "the same load on both targets")]
        for side, pt in pairs:
            found += _failures(claim, side, pt)
        for cond, detail, fix in found:
            counts[cond] = counts.get(cond, 0) + 1
            first.setdefault(cond, detail)
            fixes.append(fix)
    if not subject.points:
        counts[f"measured: {subject.name} has no load points"] = 1
        first[f"measured: {subject.name} has no load points"] = "nothing ran"
        fixes.append(f"load points on {subject.name}")
    failed = [f"{c} ({n} point{'s' if n != 1 else ''}; e.g. {first[c]})"
              for c, n in counts.items()]
    return failed, list(dict.fromkeys(fixes))


def _position(claim: Claim, ratios: list[float]) -> tuple[int, str]:
    below = sum(1 for r in ratios if r < claim.value)
    if below == len(ratios):
        where = "the claim is above every measured point"
    elif below == 0:
        where = "every measured point reaches the claim"
    else:
        where = f"the claim is above {below} of the {len(ratios)} measured points"
    return below, where


def check_claim(claim: Claim, check: ClaimCheck, subject: Side, comparator: Side, *,
                slo_text: str) -> ClaimCheckResult:
    """Compare ``claim`` with the measured ratio subject/comparator at every comparable point,
    or refuse with the axes that differ."""
    claimed = f"{claim.kind} {claim.value:g}×"
    base = {"claim": claim.id, "claimed": claimed, "subject": subject.name,
            "comparator": comparator.name, "measure": check.measure}
    if claim.unit != "x":
        return ClaimCheckResult(**base, status="refused", differs=[
            f"the claim is {claim.value:g} {claim.unit}, not a ratio of two systems"],
            unchecked=[], sentence=f"{claim.id}: not compared: it is not a ratio claim.")
    differs, unchecked = _axes(claim, subject, comparator, slo_text)
    if differs:
        return ClaimCheckResult(
            **base, status="refused", differs=differs, unchecked=unchecked,
            sentence=(f"claimed {claimed} ({claim.metric}, {claim.subject} against "
                      f"{claim.comparator}); not compared with {subject.name}/"
                      f"{comparator.name}: " + "; ".join(differs)))
    field = MEASURES[check.measure]
    theirs = {p.label: p for p in comparator.points}
    points = []
    for p in subject.points:
        q = theirs.get(p.label)
        if q is None or not (_comparable(claim, p) and _comparable(claim, q)):
            continue
        a, b = getattr(p.summary, field), getattr(q.summary, field)
        if a is None or b is None or b <= 0:
            continue
        points.append(RatioPoint(label=p.label, subject_value=a, comparator_value=b,
                                 ratio=a / b))
    if not points:
        failed, to_run = _no_points(claim, subject, comparator)
        return ClaimCheckResult(
            **base, status="no comparable points", differs=[], unchecked=unchecked,
            failed=failed, to_run=to_run,
            sentence=(f"claimed {claimed}; no load point of {subject.name} and "
                      f"{comparator.name} meets the claim's conditions: "
                      + ("; ".join(failed) or "no point measured both values")
                      + (f". To compare, run: {'; '.join(to_run)}" if to_run else "")))
    ratios = [p.ratio for p in points]
    below, where = _position(claim, ratios)
    low, high = min(ratios), max(ratios)
    span = f"{low:.2f}×" if len(ratios) == 1 else f"{low:.2f}–{high:.2f}×"
    return ClaimCheckResult(
        **base, status="compared", differs=[], unchecked=unchecked, points=points,
        measured_low=low, measured_high=high, above=below,
        sentence=(f"claimed {claimed}; measured {span} ({check.measure.replace('_', ' ')}, "
                  f"{subject.name} over {comparator.name}) over {len(points)} point"
                  f"{'s' if len(points) != 1 else ''}; {where}"))


__all__ = ["LENGTH_TOLERANCE", "Side", "check_claim"]
