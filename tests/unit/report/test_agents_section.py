"""The agents section of the report, rendered from a result the real ``analyze`` built out of
hand-made episodes: its numbers are there, the scripted policy is labelled, and a model's
text that carries a script is shown escaped, never as markup."""

from __future__ import annotations

from acceval.analysis import analyze
from acceval.report.html import render_html
from acceval.report.markdown import render_markdown
from acceval.results.records import records_to_table
from acceval.results.runlog import RunLog, TargetLog
from acceval.run_result import RunResult
from acceval.study import Study
from helpers import agent_fixture, run_fixture


def _result() -> RunResult:
    data = run_fixture.study().model_dump(mode="json")
    study = Study.model_validate({**data, "agents": agent_fixture.AGENTS})
    log = RunLog(run_id="r", created_utc="2026-01-01T00:00:00+00:00",
                 targets=[TargetLog(name=t.name) for t in study.targets])
    return analyze(study, log, records_to_table([]), agent_records=agent_fixture.records())


def test_html_agents_section_shows_the_rates_and_escapes_transcripts() -> None:
    page = render_html(_result())
    start = page.index('<section id="agents">')
    section = page[start:page.index("</section>", start)]
    assert "good (scripted policy)" in section and "bad (scripted policy)" in section
    assert "50% [15%–85%] (2/4)" in section          # bad's correct workflows
    assert "100% [21%–100%] (1/1)" in section        # bad's unconfirmed irreversible
    assert "expired session" in section and "<svg" in section
    assert agent_fixture.PAYLOAD not in page
    assert "&lt;script&gt;window.__acceval_pwned = 9;&lt;/script&gt;" in section
    assert "without confirmation" in section


def test_markdown_and_verdict_carry_the_cost_per_correct_workflow() -> None:
    result = _result()
    text = render_markdown(result)
    assert "## Agent workflows, end to end" in text
    assert agent_fixture.PAYLOAD not in text
    lines = [line for line in result.verdict.sentences if line.startswith("Agent workflows")]
    assert len(lines) == 2
    assert "good (scripted policy): $0.50 per 1K correct workflows" in lines[0]
    assert "(4/4 workflows correct)" in lines[0]
    # the inference ranking is untouched: the agents never appear in it
    assert {s.target for s in result.verdict.standings} == {"fast", "cheap"}


def test_a_workflow_cost_and_its_interval_share_one_scale() -> None:
    import re

    for line in _result().verdict.sentences:
        if not line.startswith("Agent workflows,") or "[" not in line:
            continue
        # "$X per 1K correct workflows [$a–$b]": the interval is in the figure's unit, so
        # the figure lies inside it.
        m = re.search(r"\$([\d.,]+) per (1[KMB]? ?)?correct workflows? \[\$([\d.,]+)–\$([\d.,]+)\]",
                      line)
        assert m, line
        value, low, high = (float(m.group(i).replace(",", "")) for i in (1, 3, 4))
        assert low <= value <= high, line


def test_shares_and_token_counts_read_as_the_rest_of_the_report() -> None:
    from acceval.agents.result import StatsResult, StepSuccessResult
    from acceval.report._agents import detail_rows, summary_rows

    result = _result()
    a = result.agents
    assert a is not None
    t = a.targets[0]
    t.per_step_success = StepSuccessResult(value=1.0, ci_low=0.938, ci_high=1.0)
    t.tokens_per_task = StatsResult(n=3, mean=9000.0, p50=3428.0, p90=14494.0, max=23564.0)
    summary = summary_rows(a)[1]
    assert summary[2] == "100% [93.8%–100%]"      # three significant digits, not "100.0%"
    detail = detail_rows(a)[1]
    assert detail[7] == "3,428 / 14,494 / 23,564"  # thousands grouped, as elsewhere
