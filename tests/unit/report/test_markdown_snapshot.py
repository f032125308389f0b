"""Snapshot of the Markdown rendering for a fixed result, built through the real result path.

Refresh after an intended change with: ACCEVAL_UPDATE_SNAPSHOTS=1 pytest tests/unit/report
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from acceval.loadgen.runner import PointRun
from acceval.pipeline import build_result
from acceval.report import render
from acceval.results.store import read_records
from helpers import run_fixture

SNAPSHOT = Path(__file__).parent / "snapshots" / "fixture-report.md"


def _fixed_result(tmp_path: Path) -> str:
    stored = run_fixture.build(tmp_path / "run")
    table = read_records(tmp_path / "run")
    meta = {t.name: {"runs": [PointRun.from_result(p) for p in t.points],
                     "fingerprint": t.fingerprint, "local": None, "failure": None,
                     "endpoint": None} for t in stored.targets}
    created = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    result = build_result(run_fixture.study(), table, meta, run_id="fixture-run",
                          created=created, t0_ns=0, interrupted=False, base_dir=tmp_path)
    # What depends on the machine or the clock is pinned; every number comes from the records.
    result.finished_utc = "2025-01-02T03:05:00+00:00"
    result.environment = {"host": "fixture-host"}
    result.software = {"acceval": "0.1.0"}
    return render(result, "md")


def test_markdown_matches_snapshot(tmp_path: Path) -> None:
    text = _fixed_result(tmp_path)
    if os.environ.get("ACCEVAL_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_markdown_never_prints_zero_for_missing(tmp_path: Path) -> None:
    text = _fixed_result(tmp_path)
    assert "not measured" in text
    assert "| None |" not in text and "nan" not in text.lower().split()
