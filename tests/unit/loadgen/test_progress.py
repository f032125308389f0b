"""The progress line: drawn on a terminal, silent otherwise, counts every record."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from acceval.loadgen.progress import Progress
from acceval.loadgen.runner import run
from acceval.results.records import Record


def _records() -> list[Record]:
    return [Record("t", 0, "p", i, "task", error_kind=k)
            for i, k in enumerate([None, "http", None])]


def _drive(prog: Progress) -> None:
    async def go() -> None:
        prog.start_point("poisson 5 rps", total=3)
        for rec in _records():
            prog.record(rec)
        await asyncio.sleep(0)
        prog.end_point()

    run(go())


def test_draws_label_counts_and_errors_on_a_terminal() -> None:
    buf = io.StringIO()
    prog = Progress(console=Console(file=buf, force_terminal=True, width=120))
    assert prog.active
    _drive(prog)
    out = buf.getvalue()
    assert "poisson 5 rps" in out and "3/3 done" in out and "1 errors" in out
    assert (prog.done, prog.errors) == (3, 1)
    prog.close()


def test_silent_when_not_a_terminal_or_disabled() -> None:
    for console, enabled in ((Console(file=io.StringIO(), force_terminal=False), True),
                             (Console(file=io.StringIO(), force_terminal=True), False)):
        prog = Progress(console=console, enabled=enabled)
        assert not prog.active
        _drive(prog)
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]
        assert (prog.done, prog.errors) == (3, 1)
