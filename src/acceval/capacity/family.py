"""Which load family capacity is read from: one at a time, open-loop arrivals first.

A closed-loop point (a fixed number in flight) and an open-loop point (arrivals at a rate,
Poisson or otherwise) are different experiments: a closed loop never lets a queue build past
its concurrency, so its throughput at a passing latency overstates what the same server
holds when requests arrive on their own, as demand does. Mixing the two on one rate axis
lets a closed-loop pass stand above an open-loop failure. So the max rate under the SLO is
computed within one family (:func:`acceval.capacity.curve.max_rate_under_slo`), chosen by:

1. the open-loop family with the most trusted, judged points (ties: the family's name);
2. else (no open-loop family has a trusted, judged point) the closed-loop family with the
   most such points;
3. else every point together, as before (nothing is judged anyway).

The result names its family and loop, and its note says what the other families would have
given and why they were not used. When the chosen family's lowest point is not trusted, the
note says the curve could not start there (a sweep started from it cannot either).
"""

from __future__ import annotations

from collections.abc import Sequence

from acceval.capacity.curve import CurvePoint, MaxRateResult, max_rate_under_slo
from acceval.loadgen.spec import FAMILIES
from acceval.units import number


def _with(mr: MaxRateResult, **update: object) -> MaxRateResult:
    return mr.model_copy(update=update)


def loop_of(kind: str) -> str | None:
    """``open`` or ``closed`` for a known load kind, None otherwise."""
    fam = FAMILIES.get(kind)
    return None if fam is None else str(fam.loop)


def _judged(points: Sequence[CurvePoint]) -> int:
    return sum(1 for c in points if c.trusted and c.meets_slo is not None)


def families(curve: Sequence[CurvePoint]) -> dict[str, list[CurvePoint]]:
    """The curve's points by load family, in rate order."""
    out: dict[str, list[CurvePoint]] = {}
    for c in sorted(curve, key=lambda c: c.rate_rps):
        out.setdefault(c.kind, []).append(c)
    return out


def chosen_family(curve: Sequence[CurvePoint]) -> str | None:
    """The family capacity is read from (rules 1–2), None when no family has a trusted,
    judged point."""
    fams = families(curve)
    for loop in ("open", "closed"):
        ranked = sorted(((-_judged(v), k) for k, v in fams.items()
                         if loop_of(k) == loop and _judged(v)))
        if ranked:
            return ranked[0][1]
    return None


def _said(kind: str) -> str:
    loop = loop_of(kind)
    return f"{kind or 'unnamed'} ({loop}-loop)" if loop else (kind or "unnamed")


def _rate_text(mr: MaxRateResult) -> str:
    if mr.rate_rps is None:
        return ("no rate (its lowest point already misses the SLO)"
                if mr.method == "never-passed" else "no rate")
    bound = "at least " if mr.method == "never-failed" else ""
    return f"{bound}{number(mr.rate_rps)} rps"


def capacity_rate(curve: Sequence[CurvePoint]) -> MaxRateResult:
    """The max rate under the SLO from one load family (the module's rules), naming it."""
    fams = families(curve)
    kind = chosen_family(curve)
    if kind is None or len(fams) == 1:
        mr = max_rate_under_slo(curve)
        only = next(iter(fams)) if len(fams) == 1 else None
        mr = _with(mr, family=only or None, loop=loop_of(only) if only else None)
        if only:
            mr = _with(mr, note=f"from the {_said(only)} points: {mr.note}")
        return _could_not_start(mr, fams.get(only or "", []))
    mr = max_rate_under_slo(fams[kind])
    others = []
    for k, pts in fams.items():
        if k == kind:
            continue
        if not _judged(pts):
            others.append(f"the {_said(k)} points have no trusted judged point")
            continue
        others.append(f"the {_said(k)} points alone would give "
                      f"{_rate_text(max_rate_under_slo(pts))}")
    why = ("open-loop arrivals are what demand looks like" if loop_of(kind) == "open"
           else "no open-loop point was trusted and judged")
    note = (f"from the {_said(kind)} points only ({why}; one load family at a time): "
            f"{mr.note}; not used: {'; '.join(others)}")
    return _could_not_start(_with(mr, note=note, family=kind, loop=loop_of(kind)),
                            fams[kind])


def _could_not_start(mr: MaxRateResult, points: Sequence[CurvePoint]) -> MaxRateResult:
    if not points or points[0].trusted:
        return mr
    first = points[0]
    return _with(mr, note=(f"{mr.note}; the curve could not start at its lowest point "
                             f"{first.label or number(first.rate_rps) + ' rps'}: not trusted "
                             f"({first.untrusted_reason or 'the load generator fell behind'})"))
