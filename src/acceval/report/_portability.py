"""The portability and exit tables, as rows of text, for the HTML and Markdown reports.

It reads ``TargetResult.portability`` and ``.exit`` and computes nothing: the levels, the
migration ledger, and for each target the exit test in full (cost items, reasons, exports,
functions lost, the managed-service answers). Cells are plain text; each renderer escapes.
"""

from __future__ import annotations

from typing import Any

from acceval.portability.exit import ExitResult
from acceval.report._fmt import NOT_MEASURED, usd
from acceval.results.section import Section
from acceval.run_result import RunResult
from acceval.units import number

Table = tuple[list[str], list[list[str]]]

INTRO = ("Three levels: source (the same client and study ran unchanged), artifact (the "
         "weights move and give the same answers in another runtime), performance (the cost "
         "and latency contract holds, measured).")


def short(v: Any) -> str:
    return f"{number(v)}" if isinstance(v, float) else str(v)


def has_portability(result: RunResult) -> bool:
    return any(t.portability or t.exit for t in result.targets)


def levels_table(result: RunResult) -> Table:
    rows = []
    for t in result.targets:
        cells = ([f"{lv.verdict}: {lv.summary}" for _, lv in t.portability.levels.items()]
                 if t.portability is not None else [NOT_MEASURED] * 3)
        cells.append(t.exit.readiness if t.exit is not None else NOT_MEASURED)
        cells.append(exit_total(t.exit) if t.exit is not None else NOT_MEASURED)
        rows.append([t.name, *cells])
    return ["target", "source", "artifact", "performance", "exit readiness", "exit cost"], rows


def ledger_table(result: RunResult) -> Table:
    rows = []
    for t in result.targets:
        if t.portability is None:
            continue
        for e in t.portability.ledger.entries:
            value: Any = e.value
            if isinstance(value, Section):  # a structured measurement: its fields
                value = value.model_dump()
            if e.item == "first_request" and isinstance(value, dict):
                value = warmup_text(value)
            elif isinstance(value, dict):
                value = ", ".join(f"{k}={short(v)}" for k, v in value.items())
            rows.append([t.name, e.item, short(value), e.unit or "",
                         f"{e.evidence.kind}: {e.evidence.detail}"])
    return ["target", "item", "value", "unit", "evidence"], rows


def warmup_text(v: dict[str, Any]) -> str:
    """The first request against the steady state, in words: a negative penalty means the
    first request was the faster one (no warm-up cost), and says so."""
    first, median = v.get("first_e2e_ms"), v.get("median_e2e_ms")
    penalty = v.get("penalty_ms")
    if not isinstance(first, int | float) or not isinstance(median, int | float) \
            or not isinstance(penalty, int | float):
        return "not measured"
    head = (f"first request E2E {number(first)} against a median of {number(median)}: ")
    if penalty > 0:
        return head + f"a warm-up penalty of {number(penalty)}"
    return head + (f"no warm-up penalty (the first request was {number(-penalty)} faster "
                   "than the median)")


def exit_total(ex: ExitResult) -> str:
    if ex.cost.total_usd is not None:
        return usd(ex.cost.total_usd)
    return f"at least {usd(ex.cost.known_usd)} (missing: {', '.join(ex.cost.missing)})"


def exit_lines(ex: ExitResult) -> list[str]:
    """The sentences of one target's exit test: its cost, effort, what would be lost."""
    lost = ", ".join(ex.lost_functions) or "none declared"
    out = [f"Exit cost: {exit_total(ex)}; migration effort {short(ex.migration_hours.value)} h "
           f"({ex.migration_hours.origin}). Functions lost on leaving: {lost}."]
    ms = ex.managed_service
    if ms is not None:
        d, f = ms.customization_depth, ms.freedom_to_leave
        out.append(f"Managed service {ms.service}: customization depth {d.level} ({d.rank} of "
                   f"{d.of}); freedom to leave {f.level} ({f.favorable} of {f.of} favorable).")
    return out


def exit_cost_table(ex: ExitResult) -> Table:
    return ["item", "cost", "formula"], [[i.name, usd(i.usd), i.formula] for i in ex.cost.items]


def exports_table(ex: ExitResult) -> Table:
    return (["asset", "exportable", "formats", "answer"],
            [[k, a.status, ", ".join(a.formats) or "—", a.answer or a.note or "—"]
             for k, a in ex.exports.items()])


def service_table(ex: ExitResult) -> Table | None:
    ms = ex.managed_service
    if ms is None:
        return None
    return (["question", "answer", "detail"],
            [[q.replace("_", " "), a.status, a.answer or a.note or "—"]
             for q, a in ms.questions.items()])
