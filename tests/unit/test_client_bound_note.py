"""A point whose client event loop fell behind is not trusted, and the run says what to do:
more client processes (``--clients``), or more of them when Ray already ran several."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from acceval.metrics import Distribution
from acceval.results.runlog import LoadGeneratorLog, RunLog
from acceval.run_result import RunResult
from helpers import run_fixture


def _stall(target: str, generators: int = 0) -> Callable[[RunLog], None]:
    def edit(log: RunLog) -> None:
        tl = log.target(target)
        assert tl is not None
        tl.points[1].loop_lag_ms = Distribution.of([0.2] * 99 + [250.0])
        tl.load_generators = [LoadGeneratorLog(host="h", pid=100 + k, anchor_wall_ns=0,
                                               anchor_perf_ns=0) for k in range(generators)]
    return edit


def _notes(result: RunResult) -> list[str]:
    return [w for w in result.warnings if "could not keep up" in w]


def test_a_stalled_client_names_the_point_and_suggests_client_processes(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "r", edit_log=_stall("cheap"))
    cheap = next(t for t in result.targets if t.name == "cheap")
    assert [p.trusted for p in cheap.points] == [True, False]
    [note] = _notes(result)
    assert note.startswith("cheap: the client could not keep up at 'concurrency=4' "
                           "(client event loop stalled 250 ms > 100 ms)")
    assert f"each with a core of its own (this machine has {os.cpu_count()})" in note
    assert "`acceval run --clients 2`" in note


def test_with_several_generators_it_asks_for_more_of_them(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "r", edit_log=_stall("fast", generators=2))
    [note] = _notes(result)
    assert note.startswith("fast: ")
    assert "it ran 2 load generators already: add more" in note
    assert "--clients 2" not in note


def test_a_quiet_client_adds_no_note(tmp_path: Path) -> None:
    assert _notes(run_fixture.build(tmp_path / "r")) == []
