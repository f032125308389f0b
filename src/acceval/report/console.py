"""Console rendering: the verdict and one row per target and load point."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from acceval.report import _accelerator as am
from acceval.report._claims import console_lines
from acceval.report._points import point_table
from acceval.report._training import console_lines as training_lines
from acceval.run_result import RunResult


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


def render_console(result: RunResult) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=140, force_terminal=False)
    console.print(_table(result))
    acc = _accelerators(result)
    if acc is not None:
        console.print(acc)
        for line in am.notes(result):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    extra = training_lines(result) + console_lines(result)
    return buf.getvalue() + "".join(f"{line}\n" for line in extra)


def verdict_text(result: RunResult) -> list[str]:
    """The verdict as plain lines (the same sentences as every format), then the warnings."""
    v = result.verdict
    out = [f"Verdict: {v.headline}"]
    out += [f"  * {line}" for line in v.lines]
    out += [f"warning: {w}" for w in result.warnings]
    return out


def print_summary(result: RunResult, run_dir: Path) -> None:
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(_table(result))
    acc = _accelerators(result)
    if acc is not None:
        console.print(acc)
    untrusted = [f"{t.name}/{p.label}" for t in result.targets for p in t.points
                 if not p.trusted]
    if untrusted:
        console.print("[yellow]load generator fell behind (points not trusted): "
                      f"{escape(', '.join(untrusted))}[/yellow]")
    for line in verdict_text(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in training_lines(result) + console_lines(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(f"run folder: {run_dir}", markup=False, highlight=False)
    if (run_dir / "report.html").exists():
        console.print(f"report: {run_dir / 'report.html'}", markup=False, highlight=False)
