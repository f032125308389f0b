"""Every format has every section: HTML, Markdown and JSON of one result (the demo's stored
run) carry the same sections and the same facts; the console shows the verdict and each
target's cost per correct task."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from acceval.analysis import load_result
from acceval.report import render
from acceval.report._capacity import rate_text
from acceval.report._fmt import num
from acceval.run_result import RunResult
from acceval.units import money_column
from helpers.number_style import visible_text

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo-run"

# section: (HTML section id, Markdown heading, where JSON keeps it)
SECTIONS = {
    "demand replay": ("demand-and-faults", "## Demand replay", "targets[].replay"),
    "interruption": ("demand-and-faults", "## Interruption", "targets[].interruption"),
    "capacity": ("capacity", "## Capacity under demand", "targets[].capacity"),
    "claims": ("claims", "## Vendor claims against this run", "claims"),
    "plan": ("plan", "## Plan: what each chip could do (planned)", "targets[].plan"),
    "training": ("training", "## Training on equal terms", "training"),
    "agents": ("agents", "## Agent workflows, end to end", "agents"),
    "telemetry": ("telemetry", "## Server telemetry", "targets[].telemetry"),
    "portability": ("portability", "## Portability and exit", "targets[].portability"),
}


@pytest.fixture(scope="module")
def demo() -> RunResult:
    return load_result(DEMO, recompute=True)


@pytest.fixture(scope="module")
def rendered(demo: RunResult) -> dict[str, str]:
    return {fmt: render(demo, fmt, run_dir=DEMO) for fmt in ("console", "md", "json", "html")}


def _in_json(doc: dict, path: str) -> bool:  # type: ignore[type-arg]
    if path.startswith("targets[]."):
        key = path.split(".", 1)[1]
        return any(t.get(key) not in (None, [], {}) for t in doc["targets"])
    return doc.get(path) not in (None, [], {})


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_format_has_the_section(rendered: dict[str, str], section: str) -> None:
    html_id, md_heading, json_path = SECTIONS[section]
    assert f'<section id="{html_id}">' in rendered["html"], section
    assert re.search(rf"^{re.escape(md_heading)}$", rendered["md"], re.M), section
    assert _in_json(json.loads(rendered["json"]), json_path), section


def test_html_and_markdown_state_the_same_facts(demo: RunResult,
                                                rendered: dict[str, str]) -> None:
    html, md = visible_text(rendered["html"]), rendered["md"]
    facts = [demo.verdict.headline]
    for t in demo.targets:
        if t.capacity is not None:
            facts.append(rate_text(t.capacity.max_rate_under_slo))
        if t.interruption is not None:
            facts += [num(t.interruption.outage_s), num(t.interruption.time_to_first_success_s)]
        if t.replay is not None:
            facts.append(f"{t.replay.hours_meeting_slo}/{t.replay.hours_judged}")
    for fact in facts:
        assert fact in md, fact
        assert fact in html, fact
    assert demo.verdict.headline in json.loads(rendered["json"])["verdict"]["headline"]


def test_the_verdict_bullets_are_said_once_in_html(demo: RunResult,
                                                   rendered: dict[str, str]) -> None:
    html = visible_text(rendered["html"])
    # The training headline heads its own section too; every other line is said once.
    training = demo.training.verdict.headline if demo.training and demo.training.verdict \
        else None
    lines = [x for x in demo.verdict.sentences if x != training]
    assert lines
    for line in lines:
        assert html.count(line) <= 1, line


def test_the_console_shows_the_verdict_and_every_cost(demo: RunResult,
                                                      rendered: dict[str, str]) -> None:
    text = rendered["console"]
    assert f"Verdict: {demo.verdict.headline}" in text
    col = money_column([s.cost_per_correct_usd for s in demo.verdict.standings])
    assert col.header in text
    for s, cell in zip(demo.verdict.standings, col.cells, strict=True):
        assert re.search(rf"{re.escape(s.target)}\s.*{re.escape(cell)}", text), s.target


def test_a_what_if_says_so_in_its_headline() -> None:
    fresh = load_result(DEMO, overrides=["targets.tiny-int4.price.usd_per_hour=1.0"])
    assert fresh.verdict.headline.startswith(
        "What-if (targets.tiny-int4.price.usd_per_hour=1.0), not measured as such: ")
    for fmt in ("console", "md", "html"):
        assert fresh.verdict.headline in visible_text(render(fresh, fmt, run_dir=DEMO)) \
            if fmt == "html" else fresh.verdict.headline in render(fresh, fmt, run_dir=DEMO)


def test_the_verdict_quotes_the_capacity_sections_cost(demo: RunResult,
                                                       rendered: dict[str, str]) -> None:
    # The figure, its scale and its wording are the same in the verdict and in the HTML's
    # capacity section ("at most" where the capacity is only a lower bound).
    from acceval.report import render as again
    from acceval.units import money_per, report_scale, scale_of

    html = rendered["html"]
    section = visible_text(html[html.index('<section id="capacity">'):
                                html.index("</section>", html.index('<section id="capacity">'))])
    priced = [s for s in demo.verdict.standings if s.rank is not None]
    assert priced
    scale = scale_of(demo.verdict.money_scale)
    assert scale is not None
    with report_scale(scale):
        for s in priced:
            said = ("at most " if s.capacity_at_least_rps is not None else "") + money_per(
                s.cost_per_correct_usd)
            assert said in demo.verdict.headline or any(said in x for x in demo.verdict.sentences)
            assert said in section, said
    assert again(demo, "console")  # the console renders the same result
