"""Load sweep: a search for the highest Poisson rate one target serves within the SLO.

After the fixed load points, the search reads the measured curve
(:func:`acceval.capacity.max_rate_under_slo`) and picks the next rate to measure:

- a bracket exists (a passing rate below the first failing one): its midpoint (bisection;
  each step halves the bracket);
- every point passed: twice the highest rate (capped by ``max_rate_rps``);
- the lowest point already failed: half the lowest rate;
- the bracket is narrower than ``rel_tol`` of its low end, or the next rate was already
  measured: stop (converged).

Trusted points only: a point whose self-check failed (the client, not the target, set its
numbers) neither brackets nor grows the search. Its rate may be measured once more (a stall
can be transient); a second untrusted measurement there stops the search (``untrusted``),
since the load generator cannot measure that rate on this host.

Each step is a real load point (stored in records like any other); the search stops after
``max_steps`` points or when the next point would end past ``max_s``. The final estimate is
``max_rate_under_slo`` over every point measured (fixed and searched), so it interpolates in
the SLO ratio inside the last bracket. Peers: vLLM ``bench sweep serve_sla`` interpolates
between points, Vidur-Search binary-searches QPS under SLOs (docs/capacity.md sources).
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from acceval.capacity.curve import (
    CurvePoint,
    MaxRateResult,
    trusted_only,
)
from acceval.capacity.family import capacity_rate, chosen_family
from acceval.results.runlog import SweepStep
from acceval.results.section import Section


class SweepResult(Section):
    runs: int
    steps: list[SweepStep]
    stopped_by: str
    elapsed_s: float
    bracket_rps: tuple[float | None, float | None]
    max_rate: MaxRateResult



Move = Literal["bisect", "grow", "shrink"]
Stop = Literal["converged", "max_steps", "max_s", "no-slo", "no-data", "at-max-rate",
               "untrusted"]

# Untrusted measurements near one rate after which the search stops trying it.
MAX_UNTRUSTED_TRIES = 2


@dataclass(frozen=True, slots=True)
class Decision:
    """The next rate to measure (None: stop, and ``why``)."""

    rate_rps: float | None
    why: Move | Stop


def next_rate(curve: Sequence[CurvePoint], *, rel_tol: float = 0.05,
              max_rate_rps: float | None = None) -> Decision:
    """Where the search goes next, from the curve measured so far (pure). Untrusted points
    are ignored, except that a rate already measured untrusted ``MAX_UNTRUSTED_TRIES`` times
    is not tried again."""
    mr = capacity_rate(curve)
    # The search moves within the family capacity reads (open-loop first, where it adds its
    # own Poisson points): a closed-loop pass says nothing about a rate of arrivals.
    kind = chosen_family(curve)
    own = [c for c in curve if kind is None or c.kind == kind]
    rates = [c.rate_rps for c in trusted_only(own)]
    untrusted = [c.rate_rps for c in curve if not c.trusted]

    def near(rate: float, r: float) -> bool:
        return abs(rate - r) <= rel_tol * r

    def fresh(rate: float, why: Move) -> Decision:
        # A rate within rel_tol of one already measured adds nothing the curve lacks.
        if any(near(rate, r) for r in rates):
            return Decision(None, "converged")
        if sum(near(rate, r) for r in untrusted) >= MAX_UNTRUSTED_TRIES:
            return Decision(None, "untrusted")
        return Decision(rate, why)

    if mr.method == "no-data" and untrusted:
        # Nothing trusted to start from: the sweep cannot start, and says why.
        return Decision(None, "untrusted")
    if mr.method in ("no-slo", "no-data"):
        return Decision(None, mr.method)
    if mr.method == "never-failed":
        top = max(rates)
        nxt = 2.0 * top if max_rate_rps is None else min(2.0 * top, max_rate_rps)
        if nxt <= top * (1.0 + rel_tol):
            return Decision(None, "at-max-rate")
        return fresh(nxt, "grow")
    if mr.method == "never-passed":
        return fresh(min(rates) / 2.0, "shrink")
    assert mr.low_rps is not None and mr.high_rps is not None
    low, high = mr.low_rps, mr.high_rps
    if low > 0 and (high - low) / low <= rel_tol:
        return Decision(None, "converged")
    return fresh((low + high) / 2.0, "bisect")


@dataclass(slots=True)
class SweepOutcome:
    """What the search did: one entry per measured step, why it stopped, and the estimate
    over every point (fixed and searched)."""

    steps: list[SweepStep] = field(default_factory=list)
    stopped_by: Stop = "max_steps"
    elapsed_s: float = 0.0
    max_rate: MaxRateResult | None = None

    @property
    def runs(self) -> int:
        return len(self.steps)



async def search(measure: Callable[[float], Awaitable[CurvePoint | None]],
                 initial: Sequence[CurvePoint], *, max_steps: int, point_s: float,
                 max_s: float, rel_tol: float = 0.05, max_rate_rps: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> SweepOutcome:
    """Run the search. ``measure(rate)`` runs one real load point at ``rate`` and returns its
    curve point (None when it produced no rate, e.g. every request failed to send)."""
    curve = list(initial)
    out = SweepOutcome()
    start = clock()
    last = 0.0
    for _ in range(max_steps):
        d = next_rate(curve, rel_tol=rel_tol, max_rate_rps=max_rate_rps)
        if d.rate_rps is None:
            out.stopped_by = d.why  # type: ignore[assignment]  # a Stop when rate is None
            break
        elapsed = clock() - start
        # The last step's real length (sending plus draining) predicts the next one's.
        if elapsed + max(point_s, last) > max_s:
            out.stopped_by = "max_s"
            break
        t = clock()
        cp = await measure(d.rate_rps)
        last = clock() - t
        out.steps.append(SweepStep(
            rate_rps=d.rate_rps, why=d.why, seconds=last,
            meets_slo=None if cp is None else cp.meets_slo,
            slo_ratio=None if cp is None else _finite(cp.slo_ratio),
            trusted=None if cp is None else cp.trusted,
            untrusted_reason=None if cp is None else cp.untrusted_reason))
        if cp is not None:
            curve.append(cp)
    else:
        d = next_rate(curve, rel_tol=rel_tol, max_rate_rps=max_rate_rps)
        out.stopped_by = "max_steps" if d.rate_rps is not None else d.why  # type: ignore[assignment]
    out.elapsed_s = clock() - start
    out.max_rate = capacity_rate(curve)
    return out


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


__all__ = ["MAX_UNTRUSTED_TRIES", "Decision", "SweepOutcome", "next_rate", "search"]
