"""The per-turn part of the reports: multi-turn conversations' TTFT and E2E by turn index
(``PointSummary.turns``), for the points that sent conversations."""

from __future__ import annotations

from acceval.report._fmt import NOT_MEASURED, num
from acceval.run_result import RunResult

HEAD = ["target", "load", "turn", "requests", "ok", "prompt tokens (mean)",
        "TTFT ms p50 / p95", "E2E ms p50 / p95"]

INTRO = ("Turn 0 is a conversation's first user message; each later turn is sent with the "
         "history and the target's own earlier answers, so its prompt grows. TTFT and E2E are "
         "service times of the successful requests at that turn (docs/metrics.md).")


def _pair(a: float | None, b: float | None) -> str:
    if a is None and b is None:
        return NOT_MEASURED
    return f"{num(a)} / {num(b)}"


def rows(result: RunResult) -> list[list[str]]:
    out = []
    for t in result.targets:
        for p in t.points:
            for turn in p.summary.turns or []:
                out.append([t.name, p.label, str(turn.turn), str(turn.requests), str(turn.ok),
                            num(turn.prompt_tokens_mean),
                            _pair(turn.ttft_ms.p50, turn.ttft_ms.p95),
                            _pair(turn.e2e_ms.p50, turn.e2e_ms.p95)])
    return out
