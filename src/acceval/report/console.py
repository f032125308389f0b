"""Console rendering: the verdict and one row per target and load point."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.table import Table

from acceval.report._fmt import gate, num, pct, yesno
from acceval.results.result import RunResult


def _table(result: RunResult) -> Table:
    tab = Table(title=f"{result.study_name} ({result.run_id})")
    for col in ("target", "load", "req", "err", "TTFT p95 ms", "TPOT p95 ms", "req/s",
                "goodput/s", "SLO", "accuracy", "gate"):
        tab.add_column(col)
    for t in result.targets:
        if t.failure:
            tab.add_row(t.name, "—", "", "", "", "", "", "", "", "", f"failed: {t.failure}")
        for p in t.points:
            s = p.summary
            acc = s.accuracy
            acc_s = "not measured" if acc is None or acc.accuracy is None else (
                f"{pct(acc.accuracy)} ±{pct((acc.ci_high or 0) - (acc.ci_low or 0), 1)}")
            tab.add_row(t.name, p.label, str(s.requests), pct(s.error_rate),
                        num(s.ttft_ms.p95), num(s.tpot_ms.p95),
                        num(s.request_throughput_rps), num(s.goodput_rps), yesno(s.meets_slo),
                        acc_s, gate(t.gate.passed))
    return tab


def render_console(result: RunResult) -> str:
    buf = io.StringIO()
    Console(file=buf, width=140, force_terminal=False).print(_table(result))
    return buf.getvalue()


def print_summary(result: RunResult, run_dir: Path) -> None:
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(_table(result))
    degraded = [f"{t.name}/{p.label}" for t in result.targets for p in t.points
                if p.summary.degraded]
    if degraded:
        console.print(f"[yellow]load generator fell behind at: {', '.join(degraded)}[/yellow]")
    console.print(f"run folder: {run_dir}")
