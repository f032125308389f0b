"""The per-point table, defined once: each column's header, its cell and whether the narrow
console table shows it. HTML, Markdown and the console render this one definition (the
console its ``brief`` columns), so a column added here is in every format.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from acceval.metrics import Distribution
from acceval.report._econ import target_econ
from acceval.report._fmt import NOT_MEASURED, gate, not_assessed, num, pct, trusted, usd
from acceval.results.section import PointResult
from acceval.run_result import RunResult, TargetResult
from acceval.units import MoneyScale, pick_scale


@dataclass(frozen=True, slots=True)
class PointRow:
    """What one row shows: a target's load point and its cost in the table's money scale."""

    target: TargetResult
    point: PointResult
    cost: float | None  # cost per correct task at this point, times the scale's factor


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    cell: Callable[[PointRow], str]
    brief: bool = False  # also in the console's narrow table
    # The narrow table's own header and cell, where the full one is too wide for a terminal.
    narrow: tuple[str, Callable[[PointRow], str]] | None = None


def d3(d: Distribution) -> str:
    """p50 / p95 / p99 of a latency distribution."""
    if not d.count:
        return NOT_MEASURED
    return f"{num(d.p50)} / {num(d.p95)} / {num(d.p99)}"


def _accuracy(r: PointRow) -> str:
    s = r.point.summary
    acc = s.accuracy
    if acc is None or acc.accuracy is None:
        return not_assessed(acc, s.requests) or NOT_MEASURED
    return f"{pct(acc.accuracy)} [{pct(acc.ci_low)}–{pct(acc.ci_high)}]"


def columns(scale: MoneyScale) -> list[Column]:
    """Every column of the per-point table, in order."""
    money = f"cost per {scale.label or 'one'} correct task" + ("s" if scale.label else "")
    return [
        Column("target", lambda r: r.target.name, brief=True),
        Column("load", lambda r: r.point.label, brief=True),
        Column("requests", lambda r: str(r.point.summary.requests), brief=True),
        Column("errors", lambda r: pct(r.point.summary.error_rate), brief=True),
        Column("TTFT ms p50/p95/p99", lambda r: d3(r.point.summary.ttft_ms), brief=True,
               narrow=("TTFT p95 ms", lambda r: num(r.point.summary.ttft_ms.p95))),
        Column("response TTFT ms p50/p95/p99", lambda r: d3(r.point.summary.response_ttft_ms)),
        Column("TPOT ms p50/p95/p99", lambda r: d3(r.point.summary.tpot_ms), brief=True,
               narrow=("TPOT p95 ms", lambda r: num(r.point.summary.tpot_ms.p95))),
        Column("E2E ms p50/p95/p99", lambda r: d3(r.point.summary.e2e_ms)),
        Column("req/s", lambda r: num(r.point.summary.request_throughput_rps, 2), brief=True),
        Column("out tok/s", lambda r: num(r.point.summary.output_token_throughput_tps)),
        Column("goodput req/s", lambda r: num(r.point.summary.goodput_rps, 2), brief=True),
        Column("correct goodput req/s", lambda r: num(r.point.summary.correct_goodput_rps, 2)),
        Column("SLO judged on", lambda r: r.point.summary.latency_basis),
        Column("meets SLO", lambda r: trusted(r.point), brief=True),
        Column("accuracy [95% CI]", _accuracy, brief=True),
        Column(money, lambda r: usd(r.cost)),
        Column("quality gate", lambda r: gate(r.target.gate.passed), brief=True),
    ]


def _rows(result: RunResult) -> tuple[MoneyScale, list[PointRow]]:
    econ = {t.name: target_econ(t, result) for t in result.targets}
    costs = [pc.cost_per_correct_usd for c in econ.values() for pc in c.points.values()
             if pc.cost_per_correct_usd is not None and math.isfinite(pc.cost_per_correct_usd)]
    scale = pick_scale([min(costs) if costs else None])
    rows = []
    for t in result.targets:
        for p in t.points:
            pc = econ[t.name].points.get(p.label)
            cost = pc.cost_per_correct_usd if pc is not None else None
            rows.append(PointRow(t, p, None if cost is None else cost * scale.factor))
    return scale, rows


def point_table(result: RunResult, *, brief: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and rows; a target that could not be measured gets one row that says why."""
    scale, rows = _rows(result)
    cols = [(c.narrow or (c.header, c.cell)) if brief else (c.header, c.cell)
            for c in columns(scale) if c.brief or not brief]
    out = [[cell(r) for _, cell in cols] for r in rows]
    for t in result.targets:
        if t.failure:
            blank = [""] * (len(cols) - 3)
            out.append([t.name, "—", *blank, f"failed: {t.failure}"])
    return [header for header, _ in cols], out
