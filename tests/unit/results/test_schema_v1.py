"""A run folder written by acceval 0.1.0 (result schema 1) still renders: its log is rebuilt
from the stored points and its records are re-analysed with this version's rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from acceval.analysis import load_result
from acceval.report import render

V1 = Path(__file__).resolve().parents[2] / "fixtures" / "v1-run"


def test_a_schema_1_result_is_re_analysed_and_renders(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(V1, run)
    stored = json.loads((run / "result.json").read_text())
    assert stored["schema_version"] == 1 and "verdict" not in stored
    result = load_result(run)
    assert result.schema_version == 2
    assert "acceval 0.1" in result.warnings[0]
    names = [t["name"] for t in stored["targets"]]
    assert [t.name for t in result.targets] == names
    for old, new in zip(stored["targets"], result.targets, strict=True):
        assert [p.label for p in new.points] == [p["label"] for p in old["points"]]
        assert new.accuracy is not None and new.accuracy.n == old["accuracy"]["n"]
    assert result.verdict.status in ("winner", "tie")
    assert {s.target for s in result.verdict.standings} == set(names)
    md = render(result, "md")
    assert result.verdict.headline in md
    assert "e-0" not in result.verdict.headline
    html = render(result, "html", run_dir=run)
    assert "Verdict" in html and "<script src=" not in html
