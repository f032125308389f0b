"""Per-turn metrics of multi-turn conversations: TTFT and E2E by turn index.

Turn k of every conversation at a point is grouped together (turn 0 is the first user
message), so the growth of latency with the history shows as the turns go on; the prompt
tokens per turn show the history growing. Only measured requests count, and latency only
over those that succeeded, as for the point's own distributions (docs/metrics.md).
"""

from __future__ import annotations

import numpy as np

from acceval.metrics._model import MetricModel
from acceval.metrics.derive import BoolArray, Derived
from acceval.metrics.distribution import Distribution


class TurnSummary(MetricModel):
    """One turn index of a point's conversations."""

    turn: int                          # 0: the first user message
    requests: int                      # measured requests at this turn
    ok: int
    ttft_ms: Distribution
    e2e_ms: Distribution
    prompt_tokens_mean: float | None   # what the server counted (usage); None: not said


def per_turn(d: Derived, measured: BoolArray | None = None) -> list[TurnSummary] | None:
    """The turns of ``d``'s measured conversation requests, in turn order; None when no
    request belongs to a conversation."""
    rows = d.measured if measured is None else measured
    has = rows & ~np.isnan(d.turn)
    if not has.any():
        return None
    out = []
    for k in np.unique(d.turn[has]).astype(np.int64).tolist():
        at = has & (d.turn == k)
        ok = at & d.ok
        said = d.prompt_tokens[ok]
        said = said[~np.isnan(said)]
        out.append(TurnSummary(
            turn=int(k), requests=int(at.sum()), ok=int(ok.sum()),
            ttft_ms=Distribution.of(d.ttft_ms[ok]), e2e_ms=Distribution.of(d.e2e_ms[ok]),
            prompt_tokens_mean=float(said.mean()) if said.size else None))
    return out
