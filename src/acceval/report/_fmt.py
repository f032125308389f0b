"""Number formatting shared by the text renderers: missing is "not measured", never 0."""

from __future__ import annotations

import math
from typing import Any

import yaml
from pydantic import BaseModel

from acceval.loadgen.spec import family
from acceval.metrics.spec import SLO
from acceval.results.runlog import EndpointLog
from acceval.results.section import PointResult
from acceval.run_result import RunResult
from acceval.units import money, number, plain

NOT_MEASURED = "not measured"


def num(v: float | None, digits: int = 1, unit: str = "") -> str:
    """A measured number to three significant digits (:func:`acceval.units.number`);
    ``digits`` is kept for callers and no longer widens it (one number style)."""
    text = number(v)
    return text if text == NOT_MEASURED else f"{text}{unit}"


def sig(v: float | None, digits: int = 3, unit: str = "") -> str:
    """Significant digits, for quantities that span orders of magnitude (joules, dollars)."""
    text = number(v, digits)
    return text if text == NOT_MEASURED else f"{text}{unit}"


def pct(v: float | None, digits: int = 1) -> str:
    """A share as a percentage to three significant digits (``98.1%``, ``0.5%``)."""
    return NOT_MEASURED if v is None or math.isnan(v) else f"{number(100 * v)}%"


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
    bounds = ", ".join(f"{k} ≤ {plain(v)}" for k, v in (("ttft_ms", slo.ttft_ms),
                                                   ("tpot_ms", slo.tpot_ms),
                                                   ("e2e_ms", slo.e2e_ms)) if v is not None)
    return (f"{bounds or 'no latency bound'} at p{plain(slo.percentile)}; "
            f"errors ≤ {pct(slo.max_error_rate)}")


def not_assessed(a: Any, requests: int) -> str | None:
    """What the accuracy cell says when requests were answered but none was checked (the
    synthetic, conversation, trace and text sources have no checker): not assessed, never
    correct. None when accuracy was assessed or nothing was sent."""
    if requests <= 0 or (a is not None and (a.n or not a.unscored)):
        return None
    return "not assessed (the tasks have no checker)"


def fact(v: Any) -> str:
    """One value of a fingerprint or a platform as a reader reads it: lists joined, nested
    mappings as ``key value``, numbers in the report's style, missing as "not reported"."""
    if v is None:
        return "not reported"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int | float):
        return number(v) if isinstance(v, float) else f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, dict):
        return ", ".join(f"{k} {fact(x)}" for k, x in sorted(v.items()) if x is not None) \
            or "none"
    if isinstance(v, list | tuple):
        return ", ".join(fact(x) for x in v) or "none"
    return str(v)


def client_of(endpoint: EndpointLog | None) -> str:
    """The provenance table's client cell: the transport, and the kernel's receive stamps
    when the endpoint asked for them."""
    if endpoint is None:
        return "—"
    if endpoint.receive_stamps == "kernel":
        return f"{endpoint.transport}, kernel receive stamps"
    return endpoint.transport


def facts_of(section: BaseModel) -> str:
    """:func:`facts` of a typed section's fields (a fingerprint, the seeds), read by name."""
    return facts({name: getattr(section, name) for name in type(section).model_fields})


def facts(d: dict[str, Any]) -> str:
    """``base_url: http://…; models: tiny-fp32; version: engine ortgenai, version 0.1.0``;
    keys whose value is missing or empty are left out."""
    return "; ".join(f"{k}: {fact(v)}" for k, v in sorted(d.items())
                     if v is not None and v != [] and v != {})


def as_typed(v: Any) -> Any:
    """A study dump with integral floats as integers (``100000000.0`` -> ``100000000``), the
    way the user typed them, for the study-as-run listing."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e18:
        return int(v)
    if isinstance(v, dict):
        return {k: as_typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_typed(x) for x in v]
    return v


def study_as_run(result: RunResult) -> str:
    """The study as it ran, as YAML, numbers the way the user typed them."""
    return yaml.safe_dump(as_typed(result.study.model_dump(mode="json")), sort_keys=False)


def when(iso: str | None) -> str:
    """A stored UTC timestamp to the second: ``2026-12-02 06:12:42 UTC``."""
    if not iso:
        return NOT_MEASURED
    from datetime import UTC, datetime

    try:
        t = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
