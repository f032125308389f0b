"""The "Capacity under demand" section of the HTML and Markdown reports.

The run is the shared fixture with a demand profile added and its capacity computed by the real
``capacity_for`` (as the economics stage does): "fast" gets a fleet plan, "cheap" fails the SLO
at every load point so it has no plan, which exercises the "not measured" path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from acceval.analysis import analyze
from acceval.report import _capacity as cap
from acceval.report._charts import demand_vs_capacity
from acceval.report._fmt import NOT_MEASURED, pct, usd
from acceval.report.html import render_html
from acceval.report.markdown import render_markdown
from acceval.results.result import RunResult
from acceval.results.store import read_records
from acceval.study import Study
from helpers import run_fixture

DEMAND: dict[str, Any] = {"profile": "builtin:business-hours", "peak_rps": 150.0,
                          "what_if": {"mtbf_h": 2.0, "restart_s": 900.0, "seed": 5}}
XSS = '<img src=x onerror="window.__acceval_pwned = 9">'


def _with_demand(result: RunResult, demand: dict[str, Any] = DEMAND) -> RunResult:
    """The same run re-analysed (the real ``analyze``) with a demand profile in its study."""
    s = run_fixture.study()
    study = Study.model_validate({**s.model_dump(mode="json"), "demand": demand})
    run_dir = RUN_DIRS[result.run_id]
    return analyze(study, result.log, read_records(run_dir), None, base_dir=run_dir)


RUN_DIRS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    d = tmp_path_factory.mktemp("cap") / "run"
    result = run_fixture.build(d)
    RUN_DIRS[result.run_id] = d
    return result


@pytest.fixture(scope="module")
def run(base: RunResult) -> RunResult:
    return _with_demand(base)


def test_no_demand_gives_no_view_and_a_not_measured_section(base: RunResult) -> None:
    assert cap.run_capacity(base) is None
    chart = demand_vs_capacity(base, None)
    assert chart.figure is None and "no demand" in chart.note
    page = render_html(base)
    section = page.split('<section id="capacity">', 1)[1].split("</section>", 1)[0]
    assert "Capacity under demand" in section and NOT_MEASURED in section
    md = render_markdown(base)
    assert "## Capacity under demand\n\nNot measured: the study declares no demand" in md


def test_view_reads_the_stored_capacity(run: RunResult) -> None:
    view = cap.run_capacity(run)
    assert view is not None
    assert view.profile == "builtin:business-hours" and view.peak_rps == 150.0
    assert view.hourly_mean_rps is not None and len(view.hourly_mean_rps) == 24
    assert max(view.hourly_mean_rps) == pytest.approx(150.0)
    fast, cheap = view.targets["fast"], view.targets["cheap"]
    stored = (run.targets[0].economics or {})["capacity"]
    assert fast is not None and cheap is not None
    assert fast.rate_rps == stored["max_rate_under_slo"]["rate_rps"]
    assert fast.peak_replicas == stored["plan"]["peak_replicas"] > 1
    assert fast.utilization == stored["utilization_under_demand"]
    assert fast.idle_chip_hours_per_day == pytest.approx(stored["plan"]["idle_chip_hours"])
    assert fast.demand_vs_saturation == pytest.approx(
        stored["cost"]["cost_per_correct_usd"]
        / stored["cost"]["cost_per_correct_at_saturation_usd"])
    assert fast.capacity_rps == tuple(n * stored["max_rate_under_slo"]["rate_rps"]
                                      for n in stored["plan"]["replicas"])
    assert fast.without is not None and fast.without.failures is not None
    assert fast.without.failures > 0  # MTBF 2 h over a day
    # cheap never meets the SLO: no rate, no plan, no cost, no what-if.
    assert cheap.method == "never-passed"
    assert (cheap.rate_rps, cheap.replicas, cheap.utilization, cheap.without) == (
        None, None, None, None)


def test_tables_render_numbers_and_not_measured_never_blank_or_zero(run: RunResult) -> None:
    view = cap.run_capacity(run)
    assert view is not None
    fast = view.targets["fast"]
    assert fast is not None
    for build in (cap.fleet_table, cap.cost_table, cap.whatif_table):
        head, rows = build(view)
        assert [r[0] for r in rows] == ["fast", "cheap"]
        assert all(len(r) == len(head) and all(c.strip() for c in r) for r in rows)
    head, rows = cap.fleet_table(view)
    f = dict(zip(head, rows[0], strict=True))
    c = dict(zip(head, rows[1], strict=True))
    assert f["average utilization (declared)"].startswith(pct(fast.utilization))
    assert f["replicas min – peak"].endswith(str(fast.peak_replicas))
    assert f["bracket req/s"].startswith("≥ ")
    assert c["max rate under SLO req/s per replica"] == NOT_MEASURED
    assert c["average utilization (declared)"] == NOT_MEASURED
    assert c["idle chip-hours per day"] == NOT_MEASURED
    assert c["how found"].startswith("none")
    head, rows = cap.cost_table(view)
    f = dict(zip(head, rows[0], strict=True))
    assert f["cost per correct task under demand"] == usd(fast.cost_under_demand_usd)
    assert f["under demand ÷ at saturation"].endswith("×")
    assert rows[1][1:] == [NOT_MEASURED] * 5 + [usd(1.5e-5)]
    head, rows = cap.whatif_table(view)
    assert "→" in rows[0][2] and rows[1][1:] == [NOT_MEASURED] * (len(head) - 1)


@pytest.mark.parametrize(("low", "high", "expected"), [
    (10.0, 20.0, "10.0 – 20.0"), (10.0, None, "≥ 10.0 (no point failed)"),
    (None, 5.0, "< 5.0 (no point passed)"), (0.0, 5.0, "< 5.0 (no point passed)"),
    (None, None, NOT_MEASURED)])
def test_bracket_text(low: float | None, high: float | None, expected: str) -> None:
    assert cap.bracket(cap.TargetCap("t", low_rps=low, high_rps=high)) == expected


def test_chart_draws_demand_and_one_step_line_per_planned_target(run: RunResult) -> None:
    view = cap.run_capacity(run)
    chart = demand_vs_capacity(run, view)
    assert view is not None and chart.figure is not None
    assert chart.title == "Demand vs provisioned capacity over 24 h"
    demand, *steps = chart.figure["data"]
    assert demand["y"] == list(view.hourly_mean_rps or ())
    assert len(steps) == 1 and steps[0]["line"]["shape"] == "hv"
    fast = view.targets["fast"]
    assert fast is not None and fast.capacity_rps is not None
    assert steps[0]["y"] == [*fast.capacity_rps, fast.capacity_rps[-1]]
    assert "1 target(s) without a fleet plan" in chart.note


def test_html_section_holds_tables_and_the_chart_spec(run: RunResult) -> None:
    page = render_html(run)
    section = page.split('<section id="capacity">', 1)[1].split("</section>", 1)[0]
    assert 'id="chart-capacity"' in section
    for title in ("Fleet for the demand", "Cost per correct task under the demand",
                  "Fleet what-if"):
        assert title in section
    assert section.count('<span class="nm">not measured</span>') >= 10  # cheap's cells
    specs = json.loads(re.search(r'id="acceval-charts">(.*?)</script>', page, re.S)
                       .group(1))  # type: ignore[union-attr]
    assert "chart-capacity" in [s["id"] for s in specs]
    # after the charts, before the samples
    assert page.index('id="charts"') < page.index('id="capacity"') < page.index('id="samples"')


def test_markdown_section_sits_after_cost_with_an_hourly_table(run: RunResult) -> None:
    md = render_markdown(run)
    assert md.index("## Cost and energy") < md.index("## Capacity under demand") < md.index(
        "## Errors")
    section = md.split("## Capacity under demand", 1)[1].split("\n## ", 1)[0]
    assert "| hour | demand req/s | fast replicas (req/s within SLO) |" in section
    assert section.count("\n| 1") >= 10  # 24 hourly rows (hours 1, 10–19)
    assert "fast ($1.5e-05), cheap ($1.5e-05, fails the quality gate)." in section
    assert ("| cheap | not measured | &lt; 16.5 (no point passed) | none: the lowest load point "
            "already fails") in section


def test_strings_from_the_run_are_escaped(run: RunResult) -> None:
    t0 = run.targets[0]
    econ = json.loads(json.dumps(t0.economics))
    econ["capacity"]["availability"]["blockers"] = [XSS]
    econ["capacity"]["max_rate_under_slo"]["note"] = XSS
    bad = run.model_copy(update={"targets": [t0.model_copy(update={"economics": econ}),
                                             *run.targets[1:]]})
    page = render_html(bad)
    section = page.split('<section id="capacity">', 1)[1].split("</section>", 1)[0]
    assert XSS not in section and "&lt;img src=x onerror=" in section
    md = render_markdown(bad)
    assert XSS not in md and "&lt;img src=x onerror=" in md


def test_unloadable_profile_falls_back_to_the_stored_plan(run: RunResult) -> None:
    study = {**run.study, "demand": {**run.study["demand"], "profile": "csv:missing.csv",
                                     "peak_rps": None}}
    view = cap.run_capacity(run.model_copy(update={"study": study}))
    assert view is not None and view.hourly_mean_rps is not None
    fast = (run.targets[0].economics or {})["capacity"]["plan"]
    assert list(view.hourly_mean_rps) == fast["hourly_mean_rps"]
    no_plan = run.model_copy(update={"study": study, "targets": run.targets[1:]})
    view = cap.run_capacity(no_plan)
    assert view is not None and view.hourly_mean_rps is None
    assert view.demand_note is not None and "could not be loaded" in view.demand_note
    chart = demand_vs_capacity(no_plan, view)
    assert chart.figure is None and "could not be loaded" in chart.note
    assert "hourly demand not measured" in cap.intro(view)

