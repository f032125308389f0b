"""Console rendering: the per-point table, the verdict, each target's cost per correct task.

`acceval run`, `acceval demo` and `acceval report` print the same text (:func:`render_console`);
the run commands add where the run folder is.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from acceval.report import _accelerator as am
from acceval.report import _server_latency as sl
from acceval.report._agents import console_lines as agent_lines
from acceval.report._claims import console_lines
from acceval.report._points import point_table
from acceval.report._training import console_lines as training_lines
from acceval.run_result import RunResult
from acceval.units import NOT_MEASURED, money_column, usd_interval


def _table(result: RunResult) -> Table | str:
    """The per-point table; a study without inference targets gets one line instead."""
    if not result.targets:
        return escape(f"{result.study_name} ({result.run_id}): no inference targets")
    tab = Table(title=f"{result.study_name} ({result.run_id})")
    head, rows = point_table(result, brief=True)
    for col in head:
        tab.add_column(col)
    for row in rows:
        tab.add_row(*(escape(cell) for cell in row))
    return tab


def _accelerators(result: RunResult) -> Table | None:
    """Per point, the target's devices as its exporter saw them (DCGM, neuron-monitor)."""
    if not am.has_any(result):
        return None
    tab = Table(title="Accelerators (exporter telemetry)")
    for col in am.HEAD:
        tab.add_column(col)
    for row in am.rows(result):
        tab.add_row(*(escape(c) for c in row))
    return tab


def _costs(result: RunResult) -> Table | None:
    """Each target's cost per correct task at its operating point, in the report's scale."""
    rows = result.verdict.standings
    if not rows:
        return None
    col = money_column([s.cost_per_correct_usd for s in rows])
    tab = Table(title="cost per correct task (the verdict's figures)")
    for c in ("rank", "target", "operating point", col.header, "interval", "basis", "why not"):
        tab.add_column(c)
    for s, cell in zip(rows, col.cells, strict=True):
        tab.add_row(str(s.rank) if s.rank else "—", escape(s.target),
                    escape(s.operating_point or "none"), cell,
                    usd_interval(s.cost_per_correct_ci_usd, scale=col.scale) or NOT_MEASURED,
                    escape(s.cost_basis or "—"), escape("; ".join(s.reasons) or "—"))
    return tab


def verdict_text(result: RunResult) -> list[str]:
    """The verdict as plain lines (the same sentences as every format), then the warnings."""
    v = result.verdict
    out = [f"Verdict: {v.headline}"]
    out += [f"  * {line}" for line in v.sentences]
    out += [f"warning: {w}" for w in result.warnings]
    return out


def _untrusted(result: RunResult) -> list[str]:
    names = [f"{t.name}/{p.label}" for t in result.targets for p in t.points if not p.trusted]
    return (["load generator fell behind (points not trusted): " + ", ".join(names)]
            if names else [])


def render_console(result: RunResult) -> str:
    """The table, the accelerators, each target's cost, the verdict, the warnings, the
    training and claim lines: what `run`, `demo` and `report` print alike."""
    buf = io.StringIO()
    console = Console(file=buf, width=160, force_terminal=False)
    console.print(_table(result))
    acc = _accelerators(result)
    if acc is not None:
        console.print(acc)
        for line in am.notes(result):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    costs = _costs(result)
    if costs is not None:
        console.print(costs)
    for line in [*_untrusted(result), *verdict_text(result), *training_lines(result),
                 *console_lines(result), *sl.console_lines(result), *agent_lines(result)]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return buf.getvalue()


def print_summary(result: RunResult, run_dir: Path) -> None:
    """What `run` and `demo` print: the console report, then where the run folder is."""
    from acceval.report import render

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(render(result, "console"), markup=False, highlight=False, soft_wrap=True,
                  end="")
    console.print(f"run folder: {run_dir.resolve()}", markup=False, highlight=False)
    if (run_dir / "report.html").exists():
        console.print(f"report: {run_dir / 'report.html'}", markup=False, highlight=False)
