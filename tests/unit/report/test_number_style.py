"""One number style in every format: the demo's stored run and fuzzed runs, rendered in each
format, read back for what a reader must never see (tests/helpers/number_style.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acceval.analysis import load_result
from acceval.report import render
from acceval.run_result import RunResult
from acceval.study import Study
from helpers import run_fixture
from helpers.number_style import json_strings, violations, visible_text

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo-run"
FORMATS = ("console", "md", "json", "html")


def _readable(result: RunResult, fmt: str, run_dir: Path) -> str:
    text = render(result, fmt, run_dir=run_dir)
    if fmt == "html":
        return visible_text(text)
    if fmt == "json":
        return json_strings(text)
    return text


@pytest.fixture(scope="module")
def demo() -> RunResult:
    # Re-analysed from the stored records, so the fixture follows the code as it changes.
    return load_result(DEMO, recompute=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_demo_reads_in_one_number_style(demo: RunResult, fmt: str) -> None:
    assert violations(_readable(demo, fmt, DEMO)) == []


def test_the_demo_quotes_money_in_the_verdict_scale_everywhere(demo: RunResult) -> None:
    # The verdict was written in one scale, and every format shows money per unit in it.
    label = {1: "", 1_000: "1K", 1_000_000: "1M", 1_000_000_000: "1B"}[
        demo.verdict.money_scale or 1]
    assert f"per {label} correct tasks" in demo.verdict.headline
    for fmt in ("console", "md", "html"):
        text = _readable(demo, fmt, DEMO)
        scales = set(re.findall(r"\$[\d,.]+\]? per (1[KMB]) (?:correct tasks|attempts)", text))
        assert scales == {label}, (fmt, scales)


def test_the_scanner_catches_each_violation() -> None:
    bad = ["5.32e-05 GB", "0.6047624506971429", "energy stops at the None boundary",
           "server=None, version={'version': '0.1.0'}", "$0.0000000821 per attempt",
           "$0.271 per 1M correct tasks and $42.10 per 1B correct tasks"]
    for text in bad:
        assert violations(text), text
    assert violations("0.00996 s, $49.80 per 1B correct tasks [$49.80–$50.76], 2,400 req/s, "
                      "98.1%, version 2.13.0") == []


def _priced(prices: tuple[float, float], ttft_ms: float) -> Study:
    data = run_fixture.study().model_dump(mode="json", exclude_none=True)
    for t, usd in zip(data["targets"], prices, strict=True):
        # A price as a user types it (three significant digits): a declared value is shown
        # as typed, so 3.1622776601683795 typed would be shown so.
        t["price"]["usd_per_hour"] = float(f"{usd:.3g}")
    data["slo"] = {"ttft_ms": ttft_ms, "tpot_ms": 30}
    return Study.model_validate(data)


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fast=st.floats(-4, 4), cheap=st.floats(-4, 4), slow=st.floats(0.3, 3.0),
       ttft=st.sampled_from([30.0, 200.0, 5000.0]), seed=st.integers(0, 5))
# Found by this test: $0.0001 an hour read "$0.0000572 per 1M output tokens".
@example(fast=-4.0, cheap=0.0, slow=1.0, ttft=200.0, seed=0)
def test_fuzzed_runs_read_in_one_number_style(tmp_path_factory: pytest.TempPathFactory,
                                              fast: float, cheap: float, slow: float,
                                              ttft: float, seed: int) -> None:
    run_dir = tmp_path_factory.mktemp("fuzz")
    result = run_fixture.build(run_dir, seed=seed, slow=slow,
                               with_study=_priced((10 ** fast, 10 ** cheap), ttft))
    for fmt in FORMATS:
        assert violations(_readable(result, fmt, run_dir)) == [], fmt
