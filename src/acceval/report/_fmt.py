"""Number formatting shared by the text renderers: missing is "not measured", never 0."""

from __future__ import annotations

import math
from typing import Any

from acceval.loadgen.spec import family
from acceval.metrics.spec import SLO
from acceval.results.section import PointResult
from acceval.run_result import RunResult
from acceval.units import money

NOT_MEASURED = "not measured"


def num(v: float | None, digits: int = 1, unit: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NOT_MEASURED
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    if v and abs(v) < 0.5 * 10 ** -digits:
        # Too small for the fixed decimals: keep two significant digits instead of "0.0".
        return f"{v:.2g}{unit}"
    return f"{v:,.{digits}f}{unit}"


def sig(v: float | None, digits: int = 3, unit: str = "") -> str:
    """Significant digits, for quantities that span orders of magnitude (joules, dollars)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NOT_MEASURED
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.{digits}g}{unit}"


def pct(v: float | None, digits: int = 1) -> str:
    return NOT_MEASURED if v is None else f"{100 * v:.{digits}f}%"


def usd(v: float | None) -> str:
    """Dollars, never in scientific notation (see :mod:`acceval.units`)."""
    return money(v)


def trusted(p: PointResult) -> str:
    """A point's standing for tables: meets the SLO or not, or why it is not trusted."""
    if not p.trusted:
        return "not trusted: " + ("; ".join(p.summary.degraded_reasons) or "client fell behind")
    if p.summary.meets_slo is None and p.summary.slo_unmeasured:
        return "not assessed: " + ", ".join(p.summary.slo_unmeasured) + " not measured"
    return yesno(p.summary.meets_slo)


def yesno(v: bool | None) -> str:
    return NOT_MEASURED if v is None else ("yes" if v else "NO")


def gate(v: bool | None) -> str:
    return "no level set" if v is None else ("pass" if v else "FAIL")


def selfcheck_table(result: RunResult) -> tuple[list[str], list[list[str]]]:
    """The load generator's self-check per point: schedule lag (open loop), the client
    event loop's lag (both loops), rates, and why a point is not trusted."""
    rows = []
    for t in result.targets:
        for p in t.points:
            s = p.summary
            closed = family(p.kind).loop == "closed"
            rows.append([t.name, p.label, num(s.schedule_lag_ms.p50, 3),
                         num(s.schedule_lag_ms.p99, 3), num(s.loop_lag_ms.p99, 3),
                         num(s.loop_lag_ms.max, 3),
                         "— (closed loop)" if closed else num(s.requested_rate_rps, 2),
                         num(s.achieved_rate_rps, 2), "yes" if p.trusted else "NO",
                         "; ".join(s.degraded_reasons) or "—", p.stopped_by])
    head = ["target", "load", "schedule lag p50 ms", "schedule lag p99 ms",
            "loop lag p99 ms", "loop lag max ms", "requested req/s", "achieved send/s",
            "trusted", "why not", "stopped by"]
    return head, rows


def slo_text(slo: SLO) -> str:
    """``ttft_ms ≤ 50, e2e_ms ≤ 100 at p95; errors ≤ 1.0%`` (the bounds the study set)."""
    bounds = ", ".join(f"{k} ≤ {v:g}" for k, v in (("ttft_ms", slo.ttft_ms),
                                                   ("tpot_ms", slo.tpot_ms),
                                                   ("e2e_ms", slo.e2e_ms)) if v is not None)
    return (f"{bounds or 'no latency bound'} at p{slo.percentile:g}; "
            f"errors ≤ {pct(slo.max_error_rate)}")


def not_assessed(a: Any, requests: int) -> str | None:
    """What the accuracy cell says when requests were answered but none was checked (the
    synthetic, conversation, trace and text sources have no checker): not assessed, never
    correct. None when accuracy was assessed or nothing was sent."""
    if requests <= 0 or (a is not None and (a.n or not a.unscored)):
        return None
    return "not assessed (the tasks have no checker)"
