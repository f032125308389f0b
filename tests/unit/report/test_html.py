"""The HTML report: reading order, escaping, "not measured" for absent data, self-containment."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

from acceval.report import render
from acceval.report.html import json_for_script, render_html
from acceval.results.store import read_records
from acceval.run_result import RunResult
from helpers import run_fixture


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("runs") / "fixture-run"
    run_fixture.build(d)
    return d


@pytest.fixture(scope="module")
def page(run_dir: Path) -> str:
    return render_html(RunResult.load(run_dir), records=read_records(run_dir))


def _section(page: str, sid: str) -> str:
    start = page.index(f'<section id="{sid}">')
    return page[start:page.index("</section>", start)]


def test_sections_come_in_reading_order(page: str) -> None:
    order = [page.index(f'<section id="{s}">') for s in
             ("verdict", "decision", "charts", "samples", "provenance")]
    assert order == sorted(order)


def test_only_the_page_own_scripts_exist_and_nothing_is_fetched(page: str) -> None:
    assert len(re.findall(r"<script\b", page)) == 3  # chart data, plotly.js, bootstrap
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert "<link" not in page
    csp = html.unescape(re.search(r'Content-Security-Policy" content="([^"]*)"', page)[1])
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp


@pytest.mark.parametrize("payload", run_fixture.PAYLOADS)
def test_model_output_is_escaped(page: str, payload: str) -> None:
    assert payload not in page
    samples = _section(page, "samples")
    assert payload.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&quot;") in samples


def test_user_strings_are_escaped_everywhere(page: str) -> None:
    assert "Fixture &lt;script&gt;window.__acceval_pwned = 4;&lt;/script&gt;" in page
    assert "a warning with &lt;b&gt;markup&lt;/b&gt;" in page
    assert "fixture &lt;quote&gt;" in page  # price source, in the assumptions


def test_json_for_script_cannot_close_the_script() -> None:
    value = {"t": "</script><!-- ]]> & \u2028"}
    text = json_for_script(value)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value


def test_verdict_ranks_at_the_slo_and_says_what_it_excludes(page: str) -> None:
    v = _section(page, "verdict")
    assert "Cheapest correct task: fast at $" in v
    # cheap fails the gate and the SLO: said plainly, not hidden.
    assert "does not qualify: fails the quality level" in v
    assert "Only one target qualifies, so no assumption can change the winner" in v
    assert "The cost interval covers accuracy; taken as exact: prices" in v
    assert "usd_per_chip_hour (assumption)" in v  # estimated, not measured


def test_decision_table_has_no_blank_cells(page: str) -> None:
    d = _section(page, "decision")
    assert "<td></td>" not in d
    assert d.count("not measured") >= 6  # utilization, portability, exit for both targets
    assert "4.0 J at wall" in d or "J at wall" in d


def test_charts_are_embedded(page: str) -> None:
    data = page[page.index('id="acceval-charts">') + 20:]
    specs = json.loads(data[:data.index("</script>")])
    ids = {s["id"] for s in specs}
    assert ids == {"chart-latency", "chart-pareto", "chart-cost", "chart-tornado",
                   "chart-accuracy", "chart-timeline", "chart-cdf"}
    for sid in ids:
        assert f'id="{sid}"' in page


def test_the_cdf_chart_draws_each_points_exact_quantiles(run_dir: Path) -> None:
    from acceval.metrics import derive
    from acceval.report._charts import latency_cdf

    result = RunResult.load(run_dir)
    records = read_records(run_dir)
    chart = latency_cdf(result, records)
    assert chart.figure is not None
    t = result.targets[0]
    p = t.points[0]
    name = f"{t.name} · {p.label}"
    ttft = next(tr for tr in chart.figure["data"] if tr["name"] == name and tr["xaxis"] == "x")
    d = derive(records, itl=False)
    sel = (d.ok & d.measured & (records["target"].to_numpy(zero_copy_only=False) == t.name)
           & (records["load_index"].to_numpy(zero_copy_only=False) == p.index))
    values = d.ttft_ms[sel]
    # The curve crosses 0.5 and 0.99 at the point's own p50 and p99.
    probs = np.asarray(ttft["y"])
    xs = np.asarray(ttft["x"])
    assert xs[np.argmin(abs(probs - 0.5))] == pytest.approx(np.percentile(values, 50))
    assert xs[np.argmin(abs(probs - 0.99))] == pytest.approx(np.percentile(values, 99))
    assert xs[np.argmin(abs(probs - 0.99))] == pytest.approx(p.summary.ttft_ms.p99)
    assert ttft["visible"] is True
    assert all(tr["visible"] == "legendonly" for tr in chart.figure["data"]
               if tr["name"] != name and tr["legendgroup"].startswith(t.name + " "))
    assert latency_cdf(result, None).figure is None


def test_without_economics_says_not_measured(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "r", economics=False)
    page = render_html(result, records=read_records(tmp_path / "r"))
    assert "No cost per correct task" in _section(page, "verdict")
    assert 'data-chart="chart-cost"' in page and 'data-chart="chart-tornado"' in page
    assert "Sensitivity of the ranking: <span class=\"nm\">not measured</span>" in page
    assert "$" not in _section(page, "decision")


def test_without_records_the_timeline_and_samples_say_not_measured(run_dir: Path) -> None:
    page = render_html(RunResult.load(run_dir), records=None)
    assert 'data-chart="chart-timeline"' in page
    assert "no records.parquet for this run" in _section(page, "samples")


def test_render_html_format_reads_the_records(run_dir: Path) -> None:
    page = render(RunResult.load(run_dir), "html", run_dir=run_dir)
    assert '"chart-timeline"' in page and "task000" in page


def test_a_failed_target_is_reported_not_dropped(run_dir: Path) -> None:
    result = RunResult.load(run_dir)
    result.targets[1].failure = "connect: refused <b>x</b>"
    result.targets[1].points = []
    page = render_html(result, records=None)
    assert "connect: refused &lt;b&gt;x&lt;/b&gt;" in _section(page, "verdict")
