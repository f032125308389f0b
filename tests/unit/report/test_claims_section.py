"""The claims and plan sections in every format, from results the real ``analyze`` made of
synthetic records (tests/helpers/verdict_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

from acceval.report import render
from acceval.report.console import render_console
from acceval.run_result import RunResult
from helpers import run_fixture
from helpers import verdict_runs as vr

MODEL = {"name": "7b", "parameters": 6.74e9, "layers": 32, "hidden": 4096, "heads": 32,
         "vocab": 32000}
CLAIM = {"id": "deck", "subject": "Trn3", "subject_hardware": "trn3", "comparator": "H200",
         "comparator_hardware": "h200", "value": 3, "unit": "x", "kind": "up to",
         "metric": "requests per second", "source": {"document": "deck <b>", "quote": "3x"}}


def _result(tmp_path: Path) -> RunResult:
    points = (vr.Point(rate_rps=10.0), vr.Point(rate_rps=20.0))

    def spec(name: str, hw: str) -> vr.Spec:
        return vr.Spec(name, points=points, extra=(
            ("platform", {"hardware": hw, "chips": 1, "precision": "bf16"}),))

    return vr.build(tmp_path / "run", [spec("trn", "trn3"), spec("gpu", "h200")],
                    claims={"items": [CLAIM], "check": [
                        {"claim": "deck", "subject": "trn", "comparator": "gpu",
                         "measure": "requests_per_s"},
                        {"claim": "trn3-us-performance", "subject": "trn",
                         "comparator": "gpu"}]},
                    plan={"model": MODEL, "contexts": [{"input_tokens": 1024,
                                                         "output_tokens": 1024}]})


def test_markdown_shows_the_ledger_the_checks_and_the_plan(tmp_path: Path) -> None:
    md = render(_result(tmp_path), "md")
    claims = md.split("## Vendor claims against this run")[1].split("## Plan")[0]
    assert "claimed up to 3×; measured " in claims
    assert "over 2 points; the claim is above every measured point" in claims
    assert ("not compared with trn/gpu: comparator hardware: the claim's comparator is Trn2 "
            "UltraServer (trn2); target gpu runs on h200") in claims
    assert "Sources that disagree" in claims and "duplicarán" in claims
    row = next(line for line in claims.splitlines() if line.startswith("| trn3-us-performance |"))
    assert ("model, precision, batch_size, input_tokens, output_tokens, concurrency, "
            "latency_target, software, quality") in row
    assert "deck &lt;b&gt;" in claims  # user text is escaped
    plan = md.split("## Plan: what each chip could do (planned)")[1]
    assert "planned decode tok/s per chip" in plan and "measured efficiency" in plan
    assert "5,191 (memory-bound" in plan  # 7B bf16 on one H200 (docs/planning.md)
    assert "5,323 (memory-bound" in plan  # on one Trainium3
    assert "| peak FLOP/s | 989 TFLOP/s | catalog |" in plan


def test_html_has_the_two_sections_and_escapes_user_text(tmp_path: Path) -> None:
    from acceval.report.html import render_html

    page = render_html(_result(tmp_path))
    assert '<section id="claims">' in page and '<section id="plan">' in page
    assert "deck &lt;b&gt;" in page and "deck <b>" not in page
    assert "Plan: what each chip could do (planned)" in page
    assert "measured efficiency (measured / planned)" in page


def test_console_prints_the_checks_and_the_plan_reach(tmp_path: Path) -> None:
    text = render_console(_result(tmp_path))
    assert "claim: claimed up to 3×" in text
    assert "plan trn: planned decode bound 5,323 tok/s per chip at batch 117" in text
    # Open-loop points follow their offered rate: no efficiency range is claimed from them.
    assert "measured efficiency" not in text.split("plan trn:")[1].split("\n")[0]


def test_open_loop_points_are_marked_beside_their_efficiency(tmp_path: Path) -> None:
    md = render(_result(tmp_path), "md")
    assert "(open loop: follows the offered rate)" in md
    assert "(mean in flight)" in md


def test_a_study_without_claims_or_plan_shows_neither(tmp_path: Path) -> None:
    md = render(run_fixture.build(tmp_path / "run"), "md")
    assert "Vendor claims" not in md and "## Plan" not in md


def test_claims_and_plan_survive_result_json_and_older_results_still_load(
        tmp_path: Path) -> None:
    result = _result(tmp_path)
    again = RunResult.load(tmp_path / "run")
    assert again.claims == result.claims
    assert again.target("trn").plan == result.target("trn").plan
    data = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    del data["claims"]
    for t in data["targets"]:
        del t["plan"]
    old = tmp_path / "old"
    old.mkdir()
    (old / "result.json").write_text(json.dumps(data), encoding="utf-8")
    loaded = RunResult.load(old)
    assert loaded.claims is None and loaded.target("trn").plan is None
