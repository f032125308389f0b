"""The batching trade-off section: built from the measured load points, in both renderings."""

from __future__ import annotations

from pathlib import Path

from acceval.report import render
from acceval.report._capacity import batching_rows
from helpers import run_fixture


def test_batching_rows_follow_the_points(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "run")
    rows = batching_rows(result)
    per_target = {t.name: len([p for p in t.points]) for t in result.targets}
    assert {r[0] for r in rows} == set(per_target)
    for name, n in per_target.items():
        mine = [r for r in rows if r[0] == name]
        assert len(mine) == n
        assert mine[0][3] == "—"          # the lowest level has nothing below it
        assert sum(1 for r in mine if r[8]) == 1   # exactly one knee note per target
    md = render(result, "md")
    assert "## Batching: throughput gained against waiting added" in md
    html = render(result, "html")
    assert 'id="batching"' in html
