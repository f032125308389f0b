"""The "Capacity under demand" section of the HTML and Markdown reports.

The run is the shared fixture re-analysed by the real ``analyze`` with a demand profile in its
study, so every figure is what ``TargetResult.capacity`` and ``RunResult.verdict`` hold: "fast"
gets a fleet plan, "cheap" fails the SLO at every load point so it has no plan, which exercises
the "not measured" path.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from acceval.analysis import analyze
from acceval.capacity.apply import CapacityResult, demand_section
from acceval.capacity.curve import MaxRateResult
from acceval.report import _capacity as cap
from acceval.report._charts import demand_vs_capacity
from acceval.report._fmt import NOT_MEASURED, num, pct
from acceval.report.html import render_html
from acceval.report.markdown import render_markdown
from acceval.results.store import read_records
from acceval.run_result import RunResult, TargetResult
from acceval.study import Study
from acceval.units import money, money_per, times
from acceval.verdict import basis_words
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


def _target(result: RunResult, name: str) -> TargetResult:
    return next(t for t in result.targets if t.name == name)


def _capacity(result: RunResult, name: str) -> CapacityResult:
    c = _target(result, name).capacity
    assert c is not None
    return c


def _section(page: str) -> str:
    return page.split('<section id="capacity">', 1)[1].split("</section>", 1)[0]


def _md_section(md: str) -> str:
    return md.split("## Capacity under demand", 1)[1].split("\n## ", 1)[0]


def _scientific(text: str) -> bool:
    return bool(re.search(r"\d[eE][-+]?\d", text))


def test_no_demand_gives_no_view_and_a_not_measured_section(base: RunResult) -> None:
    assert cap.run_capacity(base) is None
    chart = demand_vs_capacity(base, None)
    assert chart.figure is None and "no demand" in chart.note
    section = _section(render_html(base))
    assert "Capacity under demand" in section and NOT_MEASURED in section
    md = render_markdown(base)
    assert "## Capacity under demand\n\nNot measured: the study declares no demand" in md


def test_view_reads_the_stored_capacity(run: RunResult) -> None:
    view = cap.run_capacity(run)
    assert view is not None
    assert view.profile == "builtin:business-hours" and view.peak_rps == 150.0
    assert view.days == 1 and view.demand_note is None
    assert view.hourly_mean_rps is not None and len(view.hourly_mean_rps) == 24
    assert max(view.hourly_mean_rps) == pytest.approx(150.0)
    assert list(view.targets) == ["fast", "cheap"]
    assert view.standings == tuple(run.verdict.standings)
    fast, cheap = view.targets["fast"], view.targets["cheap"]
    assert fast is not None and cheap is not None
    # fast: what ``analyze`` stored, read as it is, with the per-day figures derived from it.
    stored = _capacity(run, "fast")
    plan, cost, what_if = stored.plan, stored.cost, stored.what_if
    assert plan is not None and cost is not None and what_if is not None
    assert fast.capacity == stored and fast.capacity.plan == plan
    assert fast.rate_rps == stored.max_rate_under_slo.rate_rps is not None
    assert fast.replicas == tuple(plan.replicas) and max(plan.replicas) == plan.peak_replicas > 1
    assert fast.hours == plan.hours == 24
    assert fast.capacity_rps == tuple(n * plan.per_replica_rps for n in plan.replicas)
    assert fast.idle_chip_hours_per_day == pytest.approx(plan.idle_chip_hours)  # 24 h horizon
    assert fast.fleet_usd_per_hour == pytest.approx(cost.fleet_usd / 24)
    assert fast.spare_usd_per_hour == pytest.approx(
        (what_if.extra_cost_usd or 0) * 3600 / what_if.with_spares.seconds)
    assert view.expected_requests_per_day == pytest.approx(plan.expected_requests)
    assert stored.utilization_under_demand == pytest.approx(plan.utilization)
    assert 0 < (stored.utilization_under_demand or 0) < 1
    assert what_if.without.failures > 0  # MTBF 2 h over a day
    econ = _target(run, "fast").economics
    assert econ is not None and econ.at_declared_utilization is not None
    assert fast.cost_at_declared_utilization_usd == (
        econ.at_declared_utilization.cost_per_correct_usd)
    # cheap never meets the SLO: a capacity record, but no rate, no plan, no cost, no what-if.
    assert cheap.capacity == _capacity(run, "cheap")
    assert cheap.max_rate.method == "never-passed"
    assert cheap.capacity.plan is None and cheap.capacity.cost is None
    assert cheap.capacity.what_if is None and cheap.capacity.utilization_under_demand is None
    assert (cheap.rate_rps, cheap.replicas, cheap.capacity_rps, cheap.hours,
            cheap.idle_chip_hours_per_day, cheap.fleet_usd_per_hour,
            cheap.spare_usd_per_hour) == (None,) * 7


def _money_usd(cell: str, per: str) -> float:
    """The dollars per single unit a cell like ``$37.99 per 1M correct tasks`` states."""
    m = re.fullmatch(r"(?:at most )?\$([\d,.]+) per (1k|1M|1B) " + per + "s", cell)
    assert m is not None, cell
    return float(m.group(1).replace(",", "")) / {"1k": 1e3, "1M": 1e6, "1B": 1e9}[m.group(2)]


def test_tables_render_numbers_and_not_measured_never_blank_or_zero(run: RunResult) -> None:
    view = cap.run_capacity(run)
    assert view is not None
    fast = view.targets["fast"]
    assert fast is not None
    stored, cheap = _capacity(run, "fast"), _capacity(run, "cheap")
    plan, cost, what_if = stored.plan, stored.cost, stored.what_if
    assert plan is not None and cost is not None and what_if is not None
    for build in (cap.fleet_table, cap.cost_table, cap.whatif_table):
        head, rows = build(view)
        assert [r[0] for r in rows] == ["fast", "cheap"]
        for r in rows:
            assert len(r) == len(head)
            assert all(c.strip() and c.strip() not in ("0", "0.0", "$0.00", "n/a") for c in r), r

    head, rows = cap.fleet_table(view)
    f = dict(zip(head, rows[0], strict=True))
    c = dict(zip(head, rows[1], strict=True))
    # fast passed at every load point: its rate is only a lower bound, and reads so.
    assert f["max rate under SLO req/s per replica"] == (
        f"at least {num(stored.max_rate_under_slo.rate_rps, 1)}")
    assert f["bracket req/s"] == cap.bracket(stored.max_rate_under_slo)
    assert f["bracket req/s"].startswith("≥ ")
    assert f["from load family"] == "concurrency (closed loop)"
    assert f["how found"] == cap.METHOD_WORDS[stored.max_rate_under_slo.method]
    assert f["replicas min – peak"] == f"{plan.min_replicas} – {plan.peak_replicas}"
    assert f["average utilization (declared)"] == (
        f"{pct(stored.utilization_under_demand)} ({pct(stored.declared_utilization, 0)})")
    assert f["idle chip-hours per day"] == num(plan.idle_chip_hours, 1)
    assert f["availability"].startswith(stored.availability.status)
    assert c["max rate under SLO req/s per replica"] == NOT_MEASURED
    assert c["bracket req/s"] == f"< {num(cheap.max_rate_under_slo.high_rps, 1)} (no point passed)"
    assert c["how found"].startswith("none")
    for col in ("replicas min – peak", "average utilization (declared)",
                "idle chip-hours per day"):
        assert c[col] == NOT_MEASURED

    head, rows = cap.cost_table(view)
    f = dict(zip(head, rows[0], strict=True))
    assert f["fleet cost"] == f"{money(cost.fleet_usd)} a day"  # one day's fleet
    for col, usd_value in (
            ("fleet compute only, per correct task under demand", cost.cost_per_correct_usd),
            ("the verdict's cost per correct task (whole bill at the utilization under demand)",
             run.verdict.standing("fast").cost_per_correct_usd),  # type: ignore[union-attr]
            ("at the SLO rate (every replica busy)", cost.cost_per_correct_at_slo_rate_usd),
            ("at saturation", cost.cost_per_correct_at_saturation_usd),
            ("whole bill at the declared utilization", fast.cost_at_declared_utilization_usd)):
        assert usd_value is not None
        assert _money_usd(f[col], "correct task") == pytest.approx(usd_value, rel=5e-3), col
    # one unit for the whole column set, so the figures compare by eye
    assert len({re.sub(r"^(at most )?\$[\d,.]+ ", "", v) for k, v in f.items()
                if k not in ("target", "fleet cost", "under demand ÷ at the SLO rate")}) == 1
    assert cost.ratio == pytest.approx(
        cost.cost_per_correct_usd / cost.cost_per_correct_at_slo_rate_usd)
    assert f["under demand ÷ at the SLO rate"] == times(cost.ratio)
    assert f["under demand ÷ at the SLO rate"].endswith("×")
    # cheap has no operating point, so no bill at the declared utilization either.
    cheap_econ = _target(run, "cheap").economics
    assert cheap_econ is None or cheap_econ.at_declared_utilization is None
    assert rows[1][1:] == [NOT_MEASURED] * (len(head) - 1)
    money_cells = [v for r in rows for v in r[1:]]

    head, rows = cap.whatif_table(view)
    f = dict(zip(head, rows[0], strict=True))
    a, b = what_if.without, what_if.with_spares
    assert f["failures"] == str(a.failures)
    assert f["SLO attainment N → N+1"] == f"{pct(a.slo_attainment, 3)} → {pct(b.slo_attainment, 3)}"
    assert f["late requests N → N+1"].startswith(num(a.late, 0) + " (")
    assert f["lost requests N → N+1"].split(" → ")[1].startswith(num(b.lost, 0))
    assert f["N+1 extra cost"] == f"{money(what_if.extra_cost_usd)} a day"  # one day simulated
    assert f["cost per request saved"] == money_per(what_if.usd_per_request_saved, "request")
    assert rows[1][1:] == [NOT_MEASURED] * (len(head) - 1)
    money_cells += [f["N+1 extra cost"], f["cost per request saved"]]
    # money is never in scientific notation
    assert not [m for m in money_cells if "e-0" in m or _scientific(m)]


@pytest.mark.parametrize(("low", "high", "expected"), [
    (10.0, 20.0, "10 – 20"), (10.0, None, "≥ 10 (no trusted point failed)"),
    (None, 5.0, "< 5 (no point passed)"), (0.0, 5.0, "< 5 (no point passed)"),
    (None, None, NOT_MEASURED)])
def test_bracket_text(low: float | None, high: float | None, expected: str) -> None:
    m = MaxRateResult(rate_rps=None, low_rps=low, high_rps=high, n_points=2,
                      method="interpolated", note="")
    assert cap.bracket(m) == expected


def test_ranking_line_follows_the_verdict(run: RunResult) -> None:
    view = cap.run_capacity(run)
    assert view is not None
    line = cap.ranking_line(view)
    assert line is not None
    ranked = sorted((s for s in run.verdict.standings if s.rank is not None),
                    key=lambda s: s.rank or 0)
    out = [s for s in run.verdict.standings if not s.qualified]
    assert [s.target for s in ranked] == ["fast"] and [s.target for s in out] == ["cheap"]
    # the ranked part lists the verdict's order with its cost, basis and operating point
    positions = [line.index(f"{s.rank}. {s.target} (") for s in ranked]
    assert positions == sorted(positions)
    fast = ranked[0]
    assert fast.cost_per_correct_usd is not None and fast.cost_basis is not None
    bound = "at most " if fast.capacity_at_least_rps is not None else ""
    assert (f"1. fast ({bound}{money_per(fast.cost_per_correct_usd, 'correct task')}, "
            f"{basis_words(fast)}, at {fast.operating_point})") in line
    assert not _scientific(line)
    # and says why each other target is not ranked, in the verdict's words
    cheap = out[0]
    assert cheap.reasons and any("quality" in r for r in cheap.reasons)
    assert f"Not ranked: cheap ({'; '.join(cheap.reasons)})." in line
    assert line.index("1. fast") < line.index("Not ranked: cheap")
    # nothing ranked: no line
    unranked = dataclasses.replace(view, standings=tuple(out))
    assert cap.ranking_line(unranked) is None


def test_chart_draws_demand_and_one_step_line_per_planned_target(run: RunResult) -> None:
    view = cap.run_capacity(run)
    chart = demand_vs_capacity(run, view)
    assert view is not None and chart.figure is not None
    assert chart.title == "Demand vs provisioned capacity over 24 h"
    demand, *steps = chart.figure["data"]
    assert demand["y"] == list(view.hourly_mean_rps or ())
    assert len(steps) == 1 and steps[0]["line"]["shape"] == "hv"
    fast = view.targets["fast"]
    assert fast is not None and fast.capacity_rps is not None and fast.replicas is not None
    assert steps[0]["y"] == [*fast.capacity_rps, fast.capacity_rps[-1]]
    assert steps[0]["customdata"] == [*fast.replicas, fast.replicas[-1]]
    assert "1 target(s) without a fleet plan" in chart.note


def test_html_section_holds_tables_and_the_chart_spec(run: RunResult) -> None:
    page = render_html(run)
    section = _section(page)
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
    section = _md_section(md)
    assert "| hour | demand req/s | fast replicas (req/s within SLO) |" in section
    plan = _capacity(run, "fast").plan
    assert plan is not None
    hourly = re.findall(r"^\| (\d+) \| ([\d.,]+) \| (\d+) \(", section, re.M)
    assert [int(h) for h, _, _ in hourly] == list(range(24))
    assert [int(n) for _, _, n in hourly] == plan.replicas
    view = cap.run_capacity(run)
    assert view is not None
    line = cap.ranking_line(view)
    assert line is not None and html.escape(line, quote=False) in section
    assert "1. fast (" in section and "Not ranked: cheap (fails the quality level" in section
    assert ("| cheap | not measured | &lt; 16.5 (no point passed) | none: the lowest load point "
            "already fails") in section


def test_strings_from_the_run_are_escaped(run: RunResult) -> None:
    t0 = _target(run, "fast")
    c = _capacity(run, "fast")
    bad_cap = c.model_copy(update={
        "availability": c.availability.model_copy(update={"blockers": [XSS]}),
        "max_rate_under_slo": c.max_rate_under_slo.model_copy(update={"note": XSS})})
    standings = [s.model_copy(update={"reasons": [XSS]}) if not s.qualified else s
                 for s in run.verdict.standings]
    bad = run.model_copy(update={
        "targets": [t.model_copy(update={"capacity": bad_cap}) if t is t0 else t
                    for t in run.targets],
        "verdict": run.verdict.model_copy(update={"standings": standings})})
    view = cap.run_capacity(bad)
    assert view is not None
    # the strings do reach the section: the blocker and note in the notes, the reason in the
    # ranking line
    assert sum(XSS in n for n in cap.notes(view)) == 2 and XSS in (cap.ranking_line(view) or "")
    section = _section(render_html(bad))
    assert XSS not in section and section.count("&lt;img src=x onerror=") >= 3
    md = _md_section(render_markdown(bad))
    assert XSS not in md and md.count("&lt;img src=x onerror=") >= 3


def test_unloadable_profile_falls_back_to_the_stored_plan(run: RunResult) -> None:
    # The analysis reads the profile; when a relative csv: path does not resolve from the
    # run folder, the hours come from a stored fleet plan, else the section says why.
    assert run.study.demand is not None
    demand = run.study.demand.model_copy(update={"profile": "csv:missing.csv", "peak_rps": None})
    plan = _capacity(run, "fast").plan
    assert plan is not None
    stored = demand_section(demand, None, [plan])
    view = cap.run_capacity(run.model_copy(update={"demand": stored}))
    assert view is not None and view.hourly_mean_rps is not None
    assert list(view.hourly_mean_rps) == plan.hourly_mean_rps
    assert list(view.hourly_peak_rps or ()) == plan.hourly_peak_rps
    assert view.demand_note is None
    no_plan = run.model_copy(update={"demand": demand_section(demand, None, []),
                                     "targets": [_target(run, "cheap")]})
    view = cap.run_capacity(no_plan)
    assert view is not None and view.hourly_mean_rps is None
    assert view.demand_note is not None and "could not be loaded" in view.demand_note
    chart = demand_vs_capacity(no_plan, view)
    assert chart.figure is None and "could not be loaded" in chart.note
    assert "hourly demand not measured" in cap.intro(view)
