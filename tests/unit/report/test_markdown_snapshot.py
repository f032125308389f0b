"""Snapshot of the Markdown rendering for a fixed result, built through the real result path.

Refresh after an intended change with: ACCEVAL_UPDATE_SNAPSHOTS=1 pytest tests/unit/report
"""

from __future__ import annotations

import os
from pathlib import Path

from acceval.report import render
from helpers import run_fixture

SNAPSHOT = Path(__file__).parent / "snapshots" / "fixture-report.md"


def _fixed_result(tmp_path: Path) -> str:
    # The fixture pins what depends on the machine; every number comes from the records.
    return render(run_fixture.build(tmp_path / "run", run_id="fixture-run"), "md")


def test_markdown_matches_snapshot(tmp_path: Path) -> None:
    text = _fixed_result(tmp_path)
    if os.environ.get("ACCEVAL_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_markdown_never_prints_zero_for_missing(tmp_path: Path) -> None:
    text = _fixed_result(tmp_path)
    assert "not measured" in text
    assert "| None |" not in text and "nan" not in text.lower().split()
