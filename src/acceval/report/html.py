"""The self-contained HTML report: the decision on one page.

Reading order: the verdict, the decision table, interactive charts, sample outputs, then
provenance. Everything is inline (styles, plotly.js, chart data), so the file opens offline and
fetches nothing; a Content-Security-Policy allows only the page's own scripts (by hash) and no
network at all. Every string from a model, a user or a server is HTML-escaped, and the chart
data is embedded as JSON with ``<``, ``>`` and ``&`` escaped, so an answer containing
``<script>`` is shown as text and never runs.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from importlib import resources
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from acceval._version import __version__
from acceval.errors import MissingExtra
from acceval.report import _accelerator as am
from acceval.report import _capacity as cap
from acceval.report import _claims as cl
from acceval.report import _peers as peers
from acceval.report import _portability as port
from acceval.report import _server_latency as sl
from acceval.report import _telemetry as tm
from acceval.report._agents import agents_html
from acceval.report._charts import Chart, all_charts, demand_vs_capacity
from acceval.report._econ import (
    RunEcon,
    TargetEcon,
    assumptions,
    operating_point,
    run_econ,
    target_econ,
)
from acceval.report._fmt import (
    NOT_MEASURED,
    client_of,
    fact,
    facts,
    facts_of,
    gate,
    not_assessed,
    num,
    pct,
    selfcheck_table,
    sig,
    slo_text,
    study_as_run,
    when,
)
from acceval.report._points import point_table
from acceval.report._training import training_html
from acceval.run_result import RunResult, TargetResult
from acceval.units import money_per, money_per_mtok, usd_interval
from acceval.verdict import basis_words

SAMPLES_PER_TARGET = 6
_SAMPLE_CHARS = 800


def esc(v: object) -> str:
    return html.escape(str(v), quote=True)


def json_for_script(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``</script>``, ``<!--`` or ``]]>`` can form, and the
    two line separators JavaScript once treated as newlines are escaped too."""
    text = json.dumps(value, allow_nan=False, separators=(",", ":"))
    for ch, rep in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, rep)
    return text


def _plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as exc:  # pragma: no cover - plotly ships with the report extra
        raise MissingExtra("report", "plotly") from exc
    return str(get_plotlyjs()).replace("</script", "<\\/script")


def _asset(name: str) -> str:
    return (resources.files("acceval") / "data" / "report" / name).read_text(encoding="utf-8")


def _nm(text: str = NOT_MEASURED) -> str:
    return f'<span class="nm">{esc(text)}</span>'


def _cell(text: str) -> str:
    """A table cell; "not measured" is styled so a reader never mistakes it for a value."""
    if text == NOT_MEASURED:
        return f"<td>{_nm()}</td>"
    return f"<td>{esc(text)}</td>"


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    h = "".join(f"<th>{esc(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(_cell(c) for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


def _acc(a: Any, requests: int = 0) -> str:
    if a is None or a.accuracy is None:
        return not_assessed(a, requests) or NOT_MEASURED
    unscored = f", {a.unscored} load-only not scored" if a.unscored else ""
    return f"{pct(a.accuracy)} [{pct(a.ci_low)}–{pct(a.ci_high)}] (n={a.n}{unscored})"


def _sent(t: TargetResult) -> int:
    return sum(p.summary.requests for p in t.points)


def _usd_ci(c: TargetEcon) -> str:
    if c.cost_per_correct_usd is None:
        return NOT_MEASURED
    cost = money_per(c.cost_per_correct_usd, "correct task")
    return f"{cost} {usd_interval(c.cost_per_correct_ci_usd)}".strip()


# --- 1. verdict ---------------------------------------------------------------------------------

def _target_line(result: RunResult, t: TargetResult, c: TargetEcon) -> str:
    st = result.verdict.standing(t.name)
    if t.failure:
        return f"<li><b>{esc(t.name)}</b>: {_nm()} — {esc(t.failure)}</li>"
    if st is not None and st.cost_per_correct_usd is not None and st.operating_point:
        # The verdict's own figure, named as the verdict and the capacity section name it.
        ci = usd_interval(st.cost_per_correct_ci_usd)
        bound = "at most " if st.capacity_at_least_rps is not None else ""
        cost = (f"<b>{esc(bound + money_per(st.cost_per_correct_usd))}</b>"
                f"{' ' + esc(ci) if ci else ''} at {esc(st.operating_point)} "
                f"({esc(basis_words(st))})")
    elif c.at_slo is not None:
        cost = f"<b>{esc(_usd_ci(c))}</b> at {esc(c.at_slo.label)}"
    else:
        cost = _nm("no operating point")
    g = t.gate.passed
    gate_html = (f'<span class="{"good" if g else "bad" if g is False else "nm"}">'
                 f"{esc(gate(g))}</span>")
    op = operating_point(t, result)
    load = (f"{num(op.summary.request_throughput_rps, 2)} req/s ({esc(op.label)})"
            if op else _nm("none"))
    out = (f"<li><b>{esc(t.name)}</b>: cost {cost}; quality gate {gate_html}, "
           f"accuracy {esc(_acc(t.accuracy, _sent(t)))}; operating point: {load}")
    if st is not None and not st.qualified:
        out += f' <span class="bad">— does not qualify: {esc("; ".join(st.reasons))}</span>'
    return out + ".</li>"


def _winner_html(result: RunResult) -> str:
    v = result.verdict
    # A study of agents or training alone has no inference ranking: a plain statement, not
    # a failure to show in red.
    cls = {"winner": "headline", "tie": "headline warn",
           "no-targets": "headline"}.get(v.status, "headline bad")
    return f'<p class="{cls}">{esc(v.headline)}</p>'


def _flips_html(run: RunEcon) -> str:
    if not run.sensitivity_present:
        return f"<p>Sensitivity of the ranking: {_nm()}.</p>"
    if not run.flips:
        # The verdict's own line says it holds (and what the ranges leave out).
        return ""
    items = "".join(
        f"<li>with <b>{esc(f.input)}</b> ({esc(f.scope)}) at its {esc(f.side)} end "
        f"({esc(num(f.value, 3))}): <b>{esc(f.winner or 'no target')}</b> wins instead of "
        f"{esc(f.base_winner or 'no target')}</li>" for f in run.flips)
    return (f'<p class="warn"><b>The ranking flips within the sensitivity ranges</b> '
            f"({len(run.flips)} swing(s); each target at its operating point):</p>"
            f"<ul>{items}</ul>")


def _estimated_html(result: RunResult, econ: dict[str, TargetEcon]) -> str:
    rows = []
    for t in result.targets:
        c = econ[t.name]
        notes = list(c.estimated)
        if c.energy_origin not in (None, "measured"):
            notes.append(f"energy ({c.energy_origin})")
        if c.energy_complete is False:
            # No level: the probe read nothing at all (a Neuron probe without the driver).
            notes.append(f"energy stops at the {c.energy_level} boundary" if c.energy_level
                         else "energy not measured")
        if notes:
            rows.append(f"<li><b>{esc(t.name)}</b>: {esc(', '.join(notes))}</li>")
    if not rows:
        return ""
    return ("<p>Numbers that rest on estimates, catalog figures or assumptions rather than "
            f"this run's measurements:</p><ul>{''.join(rows)}</ul>")


def _verdict(result: RunResult, econ: dict[str, TargetEcon], run: RunEcon) -> str:
    # The per-target lines below already say each target's cost and why it does not
    # qualify; the verdict's own lines for them are not repeated.
    said = tuple(f"{t.name}{end}" for t in result.targets for end in (": ", " does not qualify"))
    # The training section lists each platform's line under the training headline.
    trained = set(result.training.verdict.lines) if result.training is not None \
        and result.training.verdict is not None else set()
    extra = "".join(f"<li>{esc(v)}</li>" for v in result.verdict.sentences
                    if not v.startswith(said) and v not in trained)
    if not result.targets:
        return ('<section id="verdict"><h2>1. Verdict</h2>'
                f"{_winner_html(result)}{'<ul>' + extra + '</ul>' if extra else ''}</section>")
    lines = "".join(_target_line(result, t, econ[t.name]) for t in result.targets)
    rules = "".join(f"<li>{esc(r)}</li>" for r in result.verdict.rules)
    return (
        '<section id="verdict"><h2>1. Verdict</h2>'
        f"<p>At the study's SLO ({esc(slo_text(result.slo))}):</p>"
        f"{_winner_html(result)}<ul>{lines}</ul>"
        f"{'<ul>' + extra + '</ul>' if extra else ''}"
        f"{_flips_html(run)}{_estimated_html(result, econ)}"
        f"<details><summary>Rules of the verdict</summary><ul>{rules}</ul></details></section>"
    )


# --- 2. decision table --------------------------------------------------------------------------

def _energy(c: TargetEcon) -> str:
    if c.joules_per_correct is None:
        return NOT_MEASURED
    where = f" at {c.energy_level}" if c.energy_level else ""
    origin = f", {c.energy_origin}" if c.energy_origin and c.energy_origin != "measured" else ""
    return f"{sig(c.joules_per_correct)} J{where}{origin}"


def _decision(result: RunResult, econ: dict[str, TargetEcon]) -> str:
    rows = []
    for t in result.targets:
        c = econ[t.name]
        best = operating_point(t, result)
        rows.append([
            t.name, gate(t.gate.passed), _acc(t.accuracy, _sent(t)),
            (f"{num(best.summary.request_throughput_rps, 2)} req/s ({best.label})"
             if best else NOT_MEASURED),
            num(best.summary.correct_goodput_rps, 2) if best else NOT_MEASURED,
            _usd_ci(c), money_per_mtok(c.cost_per_mtok_usd), _energy(c),
            pct(c.utilization_under_demand), c.portability_level or NOT_MEASURED,
            c.exit_readiness or NOT_MEASURED,
        ])
    table = _table(["target", "quality gate", "accuracy [95% CI]", "operating point",
                    "correct goodput req/s", "cost per correct task", "cost per output tokens",
                    "J per correct task", "utilization under demand", "portability",
                    "exit readiness"], rows, "decision")
    loads = _table(*point_table(result), "loads")
    return ('<section id="decision"><h2>2. Decision table</h2>'
            f'<div class="scroll">{table}</div><h3>At each load point</h3>'
            f'<div class="scroll">{loads}</div></section>')


# --- 3. charts ----------------------------------------------------------------------------------

def _figure_html(ch: Chart) -> str:
    if ch.figure is None:
        return (f'<div class="chart-missing" data-chart="{esc(ch.id)}">'
                f"<h3>{esc(ch.title)}</h3><p>{_nm()}: {esc(ch.note)}</p></div>")
    # A fixed height keeps Plotly's responsive resize from shrinking the plot.
    height = int(ch.figure["layout"].get("height", 400))
    return (f'<figure><div class="chart" id="{esc(ch.id)}" style="height:{height}px"></div>'
            f"<figcaption>{esc(ch.note)}</figcaption></figure>")


def _charts_html(charts: list[Chart]) -> str:
    return ('<section id="charts"><h2>3. Charts</h2>' + "".join(map(_figure_html, charts))
            + "</section>")


# --- capacity under demand ----------------------------------------------------------------------

def _demand_html(result: RunResult) -> str:
    """Load sweep, demand replay and interruption: the same tables as the Markdown's."""
    from acceval.report import _demand

    blocks = _demand.blocks(result)
    if not blocks:
        return ""
    parts = []
    for b in blocks:
        tag = "h3"
        parts.append(f"<{tag}>{esc(b.heading)}</{tag}><p>{esc(b.intro)}</p>"
                     f'<div class="scroll">{_table(b.head, b.rows)}</div>')
    return ('<section id="demand-and-faults"><h2>Demand replay and interruption</h2>'
            + "".join(parts) + "</section>")


def _capacity_html(view: cap.CapacityView | None, chart: Chart) -> str:
    head = '<section id="capacity"><h2>Capacity under demand</h2>'
    if view is None:
        return (f"{head}<p>{_nm()}: the study declares no demand profile (add "
                "<code>demand:</code>, docs/capacity.md) so utilization is the declared "
                "assumption.</p></section>")
    tables = "".join(
        f'<h3>{esc(title)}</h3><div class="scroll">{_table(*build(view), cls)}</div>'
        for title, build, cls in (
            ("Fleet for the demand", cap.fleet_table, "capacity"),
            ("Cost per correct task under the demand", cap.cost_table, "capacity"),
            ("Fleet what-if over the horizon: failures, restarts, one spare (N+1)",
             cap.whatif_table, "capacity")))
    rank = cap.ranking_line(view)
    notes = "".join(f"<li>{esc(n)}</li>" for n in cap.notes(view))
    return (f"{head}<p>{esc(cap.intro(view))}</p>{_figure_html(chart)}{tables}"
            + (f"<p>{esc(rank)}</p>" if rank else "")
            + (f"<h3>How each rate was found; availability</h3><ul>{notes}</ul>" if notes
               else "") + "</section>")


def _telemetry_html(result: RunResult) -> str:
    if all(t.telemetry is None for t in result.targets):
        return ""
    body = _table(tm.HEAD, tm.rows(result), "capacity")
    figure = _figure_html(Chart("chart-telemetry", "Server telemetry", tm.chart(result),
                                "running: solid; waiting: dotted"))
    notes = "".join(f"<li>{esc(n)}</li>" for n in tm.notes(result))
    latency = sl.rows(result)
    side = (f"<h3>Server-side latency beside the client's</h3><p>{esc(sl.INTRO)}</p>"
            f"<div class=\"scroll\">{_table(sl.HEAD, latency, 'capacity')}</div>"
            if latency else "")
    return ('<section id="telemetry"><h2>Server telemetry</h2>'
            f"<p>{esc(tm.intro())}</p>{figure}<div class=\"scroll\">{body}</div>"
            f"<ul>{notes}</ul>{side}</section>")


def _accelerator_html(result: RunResult) -> str:
    if not am.has_any(result):
        return ""
    notes = "".join(f"<li>{esc(n)}</li>" for n in am.notes(result))
    return ('<section id="accelerators"><h2>Accelerators</h2>'
            f"<p>{esc(am.intro())}</p>"
            f'<div class="scroll">{_table(am.HEAD, am.rows(result), "capacity")}</div>'
            "<h3>Per device</h3>"
            f'<div class="scroll">{_table(am.DEVICE_HEAD, am.device_rows(result), "capacity")}'
            f"</div><ul>{notes}</ul></section>")


def _repeats_peers_html(result: RunResult) -> str:
    out = ""
    reps = peers.repeats_rows(result)
    if reps:
        out += ('<section id="repeats"><h2>Repeats</h2>'
                f"<p>{esc(peers.REPEATS_INTRO)}</p><div class=\"scroll\">"
                f"{_table(peers.REPEATS_HEAD, reps, 'capacity')}</div></section>")
    if result.log.imported is not None:
        rows = peers.peer_rows(result)
        body = _table(peers.PEER_HEAD, rows, "capacity") if rows else ""
        out += ('<section id="imported"><h2>Imported: peer-computed figures</h2>'
                f"<p>{esc(peers.peer_intro(result))}</p><div class=\"scroll\">{body}</div>"
                "</section>")
    return out
def _turns_html(result: RunResult) -> str:
    from acceval.report import _turns as turns

    rows = turns.rows(result)
    if not rows:
        return ""
    return ('<section id="turns"><h2>Multi-turn conversations: latency per turn</h2>'
            f"<p>{esc(turns.INTRO)}</p>"
            f'<div class="scroll">{_table(turns.HEAD, rows, "capacity")}</div></section>')


def _batching_html(result: RunResult) -> str:
    rows = cap.batching_rows(result)
    if not rows:
        return ""
    return ('<section id="batching"><h2>Batching: throughput gained against waiting added</h2>'
            f"<p>{esc(cap.BATCHING_INTRO)}</p>"
            f'<div class="scroll">{_table(cap.BATCHING_HEAD, rows, "capacity")}</div>'
            "</section>")


# --- claims and the plan -----------------------------------------------------------------------

def _claims_html(result: RunResult) -> str:
    claims = result.claims
    if claims is None:
        return ""
    parts = ['<section id="claims"><h2>Vendor claims against this run</h2>',
             f"<p>{esc(cl.CLAIMS_INTRO)}</p>"]
    checks = "".join(f"<li>{esc(line)}</li>" for line in cl.check_lines(claims))
    if checks:
        parts.append(f"<h3>Claims checked against the run</h3><ul>{checks}</ul>")
        table = cl.check_points_table(claims)
        if table is not None:
            parts.append(f'<div class="scroll">{_table(*table)}</div>')
    conflicts = "".join(f'<li class="warn">{esc(line)}</li>'
                        for line in cl.conflict_lines(claims))
    if conflicts:
        parts.append(f"<h3>Sources that disagree</h3><ul>{conflicts}</ul>")
    parts.append(f'<h3>The ledger</h3><div class="scroll">{_table(*cl.ledger_table(claims))}'
                 "</div>")
    quotes = "".join(f"<li>{esc(q)}</li>" for q in cl.quotes(claims))
    parts.append(f"<details><summary>The claims as published</summary><ul>{quotes}</ul>"
                 "</details></section>")
    return "".join(parts)


def _plan_html(result: RunResult) -> str:
    if not cl.has_plan(result):
        return ""
    parts = ['<section id="plan"><h2>Plan: what each chip could do (planned)</h2>',
             f"<p>{esc(cl.PLAN_INTRO)}</p>"]
    for t in result.targets:
        plan = t.plan
        if plan is None:
            continue
        parts.append(f"<h3>{esc(cl.plan_heading(plan))}</h3>"
                     f"<p>{esc(cl.figures_line(plan))}</p>")
        measured = cl.measured_table(plan)
        if measured is not None:
            parts.append("<p>Measured against planned, per load point:</p>"
                         f'<div class="scroll">{_table(*measured)}</div>')
        parts.append(f'<div class="scroll">{_table(*cl.contexts_table(plan))}</div>')
        for c in plan.contexts:
            parts.append(f"<p>Replica size at {c.input_tokens} / {c.output_tokens} tokens: "
                         f"{esc(c.scaling_note)}.</p>"
                         f'<details><summary>Planned decode bound by replica size</summary>'
                         f'<div class="scroll">{_table(*cl.scaling_table(c))}</div></details>')
        notes = "".join(f"<li>{esc(n)}</li>" for n in plan.notes)
        parts.append(f'<details><summary>Figures used and their sources</summary>'
                     f'<div class="scroll">{_table(*cl.inputs_table(plan))}</div>'
                     + (f"<ul>{notes}</ul>" if notes else "") + "</details>")
    parts.append("</section>")
    return "".join(parts)


# --- sample outputs -----------------------------------------------------------------------------

#: What a sample output shows of its record.
SAMPLE_COLUMNS = ["target", "load_label", "task_id", "warmup", "correct", "check_reason",
                  "extracted", "finish_reason", "error_kind", "error_detail", "output_text"]
#: What the sample outputs (:data:`SAMPLE_COLUMNS`) and the charts read of each record: the
#: charts need no text, so a run folder's texts are read one target at a time
#: (:func:`pick_samples`) and only the picked rows' are kept.
CHART_COLUMNS = ["target", "load_index", "warmup", "error_kind", "sent_ns", "first_token_ns",
                 "done_ns"]

Samples: TypeAlias = dict[str, list[dict[str, Any]]]


def pick_samples(records: pa.Table, target: str) -> list[dict[str, Any]]:
    """Wrong answers, then errors, then correct ones, then unchecked: a few of each, found
    with column masks so a run of a million records is not turned into Python rows."""
    mine = pc.and_(pc.equal(records["target"], target),
                   pc.invert(pc.fill_null(records["warmup"], False)))
    ok = pc.is_null(records["error_kind"])
    correct = records["correct"]
    kinds = [(pc.and_(pc.equal(pc.fill_null(correct, True), False), ok), 2),
             (pc.invert(ok), 2), (pc.fill_null(correct, False), 2),
             (pc.and_(pc.is_null(correct), ok), SAMPLES_PER_TARGET)]
    rows: list[int] = []
    for mask, n in kinds:
        idx = pc.indices_nonzero(pc.fill_null(pc.and_(mine, mask), False)).to_numpy()
        rows += idx[:n].tolist()
    return (records.select(SAMPLE_COLUMNS).take(rows[:SAMPLES_PER_TARGET]).to_pylist()
            if rows else [])


def _samples(result: RunResult, records: pa.Table | None, picked: Samples | None) -> str:
    head = '<section id="samples"><h2>Sample outputs</h2>'
    if picked is None and (records is None or records.num_rows == 0):
        return f"{head}<p>{_nm()}: no records.parquet for this run.</p></section>"
    parts = [head, "<p>A few measured requests per target: wrong answers and errors first, "
             "then correct ones. Output text is shown as text, truncated.</p>"]
    for t in result.targets:
        pick = (picked.get(t.name, []) if picked is not None
                else pick_samples(records, t.name) if records is not None else [])
        if not pick:
            parts.append(f"<h3>{esc(t.name)}</h3><p>{_nm()}: no request</p>")
            continue
        trs = []
        for r in pick:
            text = r["output_text"]
            shown = _nm("no output") if text is None else (
                f"<pre>{esc(text[:_SAMPLE_CHARS])}{'…' if len(text) > _SAMPLE_CHARS else ''}"
                "</pre>")
            verdict = ("error: " + str(r["error_kind"])) if r["error_kind"] else (
                "correct" if r["correct"] else "wrong" if r["correct"] is False else "unchecked")
            why = r["check_reason"] or r["error_detail"] or ""
            trs.append(f"<tr><td>{esc(r['load_label'])}</td><td>{esc(r['task_id'])}</td>"
                       f'<td class="{"good" if r["correct"] else "bad"}">{esc(verdict)}</td>'
                       f"<td>{esc(why)}</td><td>{esc(r['extracted'] or '')}</td>"
                       f"<td class=\"out\">{shown}</td></tr>")
        parts.append(f"<h3>{esc(t.name)}</h3><div class=\"scroll\"><table class=\"samples\">"
                     "<thead><tr><th>load</th><th>task</th><th>verdict</th><th>reason</th>"
                     "<th>extracted</th><th>output</th></tr></thead>"
                     f"<tbody>{''.join(trs)}</tbody></table></div>")
    parts.append("</section>")
    return "".join(parts)


# --- portability and exit -----------------------------------------------------------------------

def _portability_html(result: RunResult) -> str:
    if not port.has_portability(result):
        return ""
    head, rows = port.levels_table(result)
    parts = ['<section id="portability"><h2>Portability and exit</h2>',
             f"<p>{esc(port.INTRO)}</p>", f'<div class="scroll">{_table(head, rows)}</div>']
    head, rows = port.ledger_table(result)
    if rows:
        parts.append(f'<h3>Migration ledger</h3><div class="scroll">{_table(head, rows)}</div>')
    for t in result.targets:
        if t.exit is None:
            continue
        ex = t.exit
        reasons = "".join(f"<li>{esc(r)}</li>" for r in ex.reasons)
        parts.append(f"<h3>Leaving {esc(t.name)}: {esc(ex.readiness)}</h3>"
                     + (f"<ul>{reasons}</ul>" if reasons else "")
                     + "".join(f"<p>{esc(x)}</p>" for x in port.exit_lines(ex)))
        for table in (port.exit_cost_table(ex), port.exports_table(ex), port.service_table(ex)):
            if table is not None:
                parts.append(f'<div class="scroll">{_table(*table)}</div>')
    parts.append("</section>")
    return "".join(parts)


# --- 4. provenance ------------------------------------------------------------------------------

def _kv(d: dict[str, Any]) -> str:
    return facts(d)


def _sorted_json(section: BaseModel) -> str:
    """A small stored section (the seeds, the tasks) as result.json holds it, keys sorted."""
    return json.dumps(section.model_dump(mode="json"), sort_keys=True)


def _provenance(result: RunResult) -> str:
    targets = []
    for t in result.targets:
        ls = t.local_server
        local = (f"{ls.engine} {ls.model or ''} {ls.precision or ''} pid {ls.pid}, "
                 f"startup {num(ls.startup_s, 2)} s" if ls else "—")
        targets.append([t.name, t.endpoint.base_url if t.endpoint else "—",
                        t.endpoint.model if t.endpoint else "—",
                        client_of(t.endpoint),
                        _kv(t.platform.model_dump(mode="json")) or "—",
                        facts_of(t.fingerprint) or NOT_MEASURED, local])
    assume = [[a.target or "study", a.name,
               a.shown, a.origin, a.source or "—",
               a.date or "—"] for a in assumptions(result)]
    warn = "".join(f"<li>{esc(w)}</li>" for w in result.warnings)
    study_yaml = study_as_run(result)
    t_targets = ('<h3>Targets</h3><div class="scroll">' + _table(
        ["target", "endpoint", "model", "client", "platform", "fingerprint", "local server"],
        targets) + "</div>") if targets else ""
    from acceval.report import _execution as execution

    load_from = execution.intro(result)
    t_load = "" if load_from is None else (
        f"<h3>Where the load came from</h3><p>{esc(load_from)}</p>"
        f'<div class="scroll">{_table(execution.HEAD, execution.rows(result))}</div>')
    t_check = ("<h3>Load-generator self-check</h3><p>Schedule lag is the actual send time "
               "minus the intended one (open loop); loop lag is how late the client's event "
               "loop ran its ticks (both loops). A point is not trusted when the client could "
               "not keep up: its numbers then describe the client as much as the server, and "
               "the verdict, capacity and sweep leave it out.</p>"
               f'<div class="scroll">{_table(*selfcheck_table(result))}</div>'
               ) if result.targets else ""
    t_assume = _table(["target", "input", "value", "origin", "source", "date"], assume)
    t_soft = _table(["package", "version"], sorted([k, v] for k, v in result.software.items()))
    t_env = _table(["key", "value"], [[k, fact(v)] for k,
                                      v in result.environment.model_dump().items()])
    return (
        f'<section id="provenance"><h2>{"4. " if result.targets else ""}Provenance</h2>'
        f"{t_targets}{t_load}{t_check}"
        f'<h3>Assumptions and their sources</h3><div class="scroll">{t_assume}</div>'
        f"<h3>Software</h3>{t_soft}<h3>Environment</h3>{t_env}"
        f"<h3>Seeds</h3><pre>{esc(_sorted_json(result.seeds))}</pre>"
        f"<h3>Tasks</h3><pre>{esc(_sorted_json(result.tasks))}</pre>"
        + (f"<h3>Warnings</h3><ul>{warn}</ul>" if warn else "")
        + f"<details><summary>Study as run</summary><pre>{esc(study_yaml)}</pre></details>"
        "</section>"
    )


# --- page ---------------------------------------------------------------------------------------

def _sha256(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def render_html(result: RunResult, *, records: pa.Table | None = None,
                samples: Samples | None = None) -> str:
    """The report page. ``records`` (the run's records table, or its
    :data:`CHART_COLUMNS`) feeds the timeline and the sample outputs; without it those parts
    say "not measured". ``samples``: the sample outputs already picked
    (:func:`pick_samples`, by target), instead of picking them from ``records``.

    A what-if (other prices, utilization, SLO) is a new RunResult: re-run the economics with
    the overrides and render that; this function only renders what it is given.
    """
    econ = {t.name: target_econ(t, result) for t in result.targets}
    run = run_econ(result, econ)
    # A study without inference targets (agents or training only) has no inference section.
    inference = bool(result.targets)
    charts = all_charts(result, econ, run, records) if inference else []
    capacity = cap.run_capacity(result)
    cap_chart = demand_vs_capacity(result, capacity)
    training, training_charts = training_html(result, _figure_html)
    specs = [{"id": c.id, "figure": c.figure}
             for c in [*charts, *([cap_chart] if inference else []), *training_charts]
             if c.figure is not None]
    telemetry = tm.chart(result)
    if telemetry is not None:
        specs.append({"id": "chart-telemetry", "figure": telemetry})
    plotly_js = _plotly_js() if specs else ""
    boot = _asset("report.js")
    scripts = [s for s in (plotly_js, boot) if s]
    csp = ("default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; "
           # plotly.js compiles a few functions at load; nothing else may run or load.
           f"script-src 'unsafe-eval' {' '.join(_sha256(s) for s in scripts)}; "
           "connect-src 'none'; base-uri 'none'; form-action 'none'")
    banner = ('<p class="bad banner">This run was interrupted; the numbers cover what was '
              "measured.</p>" if result.interrupted else "")
    desc = result.description
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(result.study_name)} — acceval report</title>",
        f"<style>{_asset('report.css')}</style></head><body><main>",
        f"<header><h1>{esc(result.study_name)}</h1><p class=\"meta\">run "
        f"<code>{esc(result.run_id)}</code>, started {esc(when(result.created_utc))}"
        f"{', finished ' + esc(when(result.finished_utc)) if result.finished_utc else ''}; "
        f"acceval {esc(__version__)}</p>{banner}"
        f"{'<p>' + esc(desc) + '</p>' if desc else ''}</header>",
        _verdict(result, econ, run),
        *((_decision(result, econ), _charts_html(charts), _capacity_html(capacity, cap_chart),
           _demand_html(result), _batching_html(result), _turns_html(result),
           _telemetry_html(result), _accelerator_html(result))
          if inference else ()),
        _repeats_peers_html(result), _claims_html(result), _plan_html(result), training,
        _portability_html(result), agents_html(result),
        _samples(result, records, samples) if inference else "", _provenance(result),
        "<footer>Self-contained report: every number is computed from this run's stored "
        "records; nothing on this page is fetched from the network.</footer></main>",
        f'<script type="application/json" id="acceval-charts">{json_for_script(specs)}</script>',
        *(f"<script>{s}</script>" for s in scripts),
        "</body></html>\n",
    ])


__all__ = ["esc", "json_for_script", "render_html"]
