"""The agents section of the report, in HTML and Markdown, read from ``result.agents``.

Completion against the number of steps (a small inline SVG and a table), pass^k, the
silent-error, forbidden-action, failed-action and stray-action rates with their intervals,
recovery times, the cost per correct workflow, and transcripts of failed tasks; then any
agent benchmark's imported trials (completion, pass^k, steps, cost), each with where it came
from. Every text that came from a model or a page is escaped. A scripted policy is labelled as
one wherever its name appears.
"""

from __future__ import annotations

import html

from acceval.agents.result import (
    AgentsResult,
    AgentTargetResult,
    ImportedAgentResult,
    ImportedCost,
    RateResult,
    StatsResult,
    Transcript,
)
from acceval.report._fmt import pct as _share
from acceval.run_result import RunResult
from acceval.units import NOT_MEASURED, money_per, usd_interval

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def esc(v: object) -> str:
    return html.escape(str(v), quote=True)


def pct(r: RateResult | None) -> str:
    if r is None or r.value is None:
        return NOT_MEASURED
    ci = (f" [{r.ci_low:.0%}–{r.ci_high:.0%}]" if r.ci_low is not None
          and r.ci_high is not None else "")
    return f"{r.value:.0%}{ci} ({r.k}/{r.n})"


def _num(v: float | None, fmt: str = "{:.2f}") -> str:
    return NOT_MEASURED if v is None else fmt.format(v)


def _st(s: StatsResult, fmt: str = "{:.2f}") -> str:
    if not s.n:
        return NOT_MEASURED
    return f"{_num(s.p50, fmt)} / {_num(s.p90, fmt)} / {_num(s.max, fmt)}"


def _who(t: AgentTargetResult) -> str:
    return f"{t.name} ({t.source})"


def _cost(t: AgentTargetResult) -> str:
    if t.cost is None:
        return "no price declared"
    ci = usd_interval(t.cost.cost_per_correct_ci_usd)
    return f"{money_per(t.cost.cost_per_correct_usd, 'correct workflow')} {ci}".strip()


def _declared(t: AgentTargetResult) -> str:
    if not t.declared:
        return ""
    return ", ".join(f"{k.replace('_', ' ')} {v:.0%}" for k, v in t.declared.items())


def summary_rows(a: AgentsResult) -> list[list[str]]:
    head = ["agent", "correct workflows", "per-step success", "silent errors",
            "irreversible without confirm", "episodes with one", "asked a human",
            "cost per correct workflow"]
    rows = [head]
    for t in a.targets:
        p = t.per_step_success
        step = (NOT_MEASURED if p.value is None else
                f"{_share(p.value)} [{_share(p.ci_low)}–{_share(p.ci_high)}]")
        rows.append([_who(t), pct(t.completion), step, pct(t.silent_errors),
                     pct(t.unconfirmed_irreversible), pct(t.forbidden_episodes),
                     pct(t.intervention_episodes), _cost(t)])
    return rows


def detail_rows(a: AgentsResult) -> list[list[str]]:
    head = ["agent", "declared error rates", "pass^k (k = 1…)", "premature done per step",
            "failed actions", "stray actions", "steps p50/p90/max", "tokens p50/p90/max",
            "latency s p50/p90/max", "stopped by"]
    rows = [head]
    for t in a.targets:
        passk = " · ".join(f"{_num(p.value, '{:.2f}')}" for p in t.pass_hat_k)
        stops = ", ".join(f"{k} {v}" for k, v in sorted(t.stopped_by.items()))
        rows.append([_who(t), _declared(t) or "—", passk, pct(t.premature_done_per_step),
                     pct(t.action_errors), pct(t.stray_actions), _st(t.steps_per_task, "{:.0f}"),
                     _st(t.tokens_per_task, "{:,.0f}"), _st(t.latency_s_per_task), stops])
    return rows


def curve_rows(a: AgentsResult) -> list[list[str]]:
    rows = [["agent", "steps", "completion [95%]", "p^steps (fit)"]]
    for t in a.targets:
        for c in t.curve:
            rows.append([t.name, str(c.steps), pct(c.completion),
                         _num(c.predicted, "{:.0%}")])
    return rows


def gate_rows(a: AgentsResult) -> list[list[str]]:
    """The gate's verdicts on each agent's irreversible requests."""
    rows = [["agent", "confirmed", "stale confirmation", "mismatched confirmation",
             "no confirmation", "refused", "let through unconfirmed (count mode)"]]
    for t in a.targets:
        v = t.gate_verdicts
        rows.append([t.name, *(str(v.get(k, 0)) for k in
                               ("confirmed", "stale", "mismatched", "unconfirmed")),
                     str(t.refused_irreversible), str(t.would_refuse)])
    return rows


def recovery_rows(a: AgentsResult) -> list[list[str]]:
    rows = [["agent", "perturbation", "episodes", "recovered", "recovery s p50/p90/max",
             "recovery steps p50/p90/max", "completed"]]
    for t in a.targets:
        for r in t.recoveries:
            rows.append([t.name, r.perturbation.replace("_", " "), str(r.episodes),
                         pct(r.recovered), _st(r.recovery_s), _st(r.recovery_steps, "{:.0f}"),
                         pct(r.completion)])
    return rows


def _imported_cost(c: ImportedCost | None) -> str:
    if c is None:
        return NOT_MEASURED
    ci = usd_interval(c.cost_per_correct_ci_usd)
    return f"{money_per(c.cost_per_correct_usd, 'correct workflow')} {ci}".strip()


def _passk(t: AgentTargetResult | ImportedAgentResult) -> str:
    return " · ".join(f"{_num(p.value, '{:.2f}')}" for p in t.pass_hat_k) or NOT_MEASURED


def imported_rows(a: AgentsResult) -> list[list[str]]:
    """Each imported agent: the benchmark's trials counted and priced."""
    rows = [["agent", "source", "tasks x trials", "successful trials [95%]", "mean reward",
             "pass^k (k = 1…)", "ended in an error", "steps p50/p90/max", "tokens p50/p90/max",
             "latency s p50/p90/max", "cost per correct workflow (declared prices)",
             "cost per correct workflow (the file's own cost)"]]
    for t in a.imported:
        rows.append([t.name, t.provenance, f"{t.tasks} x {t.trials_per_task}",
                     pct(t.completion), _num(t.mean_reward, "{:.3f}"), _passk(t),
                     pct(t.errors), _st(t.steps_per_task, "{:.0f}"),
                     _st(t.tokens_per_task, "{:,.0f}"), _st(t.latency_s_per_task),
                     _imported_cost(t.cost), _imported_cost(t.peer_cost)])
    return rows


def imported_notes(a: AgentsResult) -> list[str]:
    """How each imported cost was found, and what the counting had to say."""
    out = []
    for t in a.imported:
        out += [f"{t.name}: {c.basis}." for c in (t.cost, t.peer_cost) if c is not None]
        out += [f"{t.name}: {n}." for n in t.notes]
    return out


_IMPORTED_INTRO = ("Trials measured by an agent benchmark and imported (acceval import): the "
                   "benchmark judged each one (successful: reward within 1e-6 of 1, as "
                   "τ-bench and tau2 count it); acceval counts them, gives pass^k (τ-bench's "
                   "formula) and prices them.")


def console_lines(result: RunResult) -> list[str]:
    """The imported agent benchmarks, one line each (the measured agents are in the
    verdict's sentences)."""
    a = result.agents
    if a is None:
        return []
    out = []
    for t in a.imported:
        cost = (f"; {_imported_cost(t.cost)} ({t.cost.basis})" if t.cost else "")
        peer = (f"; {_imported_cost(t.peer_cost)} by the file's own cost" if t.peer_cost
                else "")
        out.append(f"Agent workflows, {t.name} ({t.provenance}): {pct(t.completion)} trials "
                   f"successful over {t.tasks} task(s); pass^k (k = 1…) {_passk(t)}; steps "
                   f"p50/p90/max {_st(t.steps_per_task, '{:.0f}')}{cost}{peer}.")
    return out


def _imported_html(a: AgentsResult) -> str:
    if not a.imported:
        return ""
    return ("<h3>Imported agent benchmark results</h3>" + f"<p>{esc(_IMPORTED_INTRO)}</p>"
            + _html_table(imported_rows(a))
            + "".join(f'<p class="note">{esc(n)}</p>' for n in imported_notes(a)))


def _html_table(rows: list[list[str]]) -> str:
    if len(rows) < 2:
        return f"<p>{NOT_MEASURED}</p>"
    head = "".join(f"<th>{esc(h)}</th>" for h in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
                   for r in rows[1:])
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def _svg_curve(a: AgentsResult) -> str:
    """Completion against the number of steps, one line per agent (dots: measured with
    their intervals; dashes: the fitted p^steps)."""
    lengths = sorted({c.steps for t in a.targets for c in t.curve})
    if not lengths:
        return ""
    w, h, m = 560, 240, 40
    top = max(lengths)

    def x(s: float) -> float:
        return m + (w - 2 * m) * (s / top if top else 0)

    def y(v: float) -> float:
        return h - m - (h - 2 * m) * v

    parts = [f'<svg class="agents-curve" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
             'role="img" aria-label="completion against the number of steps">',
             f'<line x1="{m}" y1="{y(0)}" x2="{w - m}" y2="{y(0)}" stroke="#888"/>',
             f'<line x1="{m}" y1="{y(0)}" x2="{m}" y2="{y(1)}" stroke="#888"/>']
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{m - 6}" y="{y(v) + 4}" font-size="11" '
                     f'text-anchor="end">{v:.0%}</text>')
    for s in lengths:
        parts.append(f'<text x="{x(s)}" y="{h - m + 16}" font-size="11" '
                     f'text-anchor="middle">{s}</text>')
    parts.append(f'<text x="{w / 2}" y="{h - 6}" font-size="12" text-anchor="middle">'
                 "steps on the shortest path</text>")
    for i, t in enumerate(a.targets):
        col = _COLOURS[i % len(_COLOURS)]
        pts = [(c.steps, c.completion) for c in t.curve if c.completion.value is not None]
        if pts:
            line = " ".join(f"{x(s):.1f},{y(r.value or 0):.1f}" for s, r in pts)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{col}" '
                         'stroke-width="2"/>')
        for s, r in pts:
            if r.ci_low is not None and r.ci_high is not None:
                parts.append(f'<line x1="{x(s)}" x2="{x(s)}" y1="{y(r.ci_low):.1f}" '
                             f'y2="{y(r.ci_high):.1f}" stroke="{col}" opacity="0.5"/>')
            parts.append(f'<circle cx="{x(s):.1f}" cy="{y(r.value or 0):.1f}" r="3" '
                         f'fill="{col}"/>')
        p = t.per_step_success.value
        if p is not None:
            fit = " ".join(f"{x(s):.1f},{y(p ** s):.1f}"
                           for s in [top * k / 40 for k in range(41)])
            parts.append(f'<polyline points="{fit}" fill="none" stroke="{col}" '
                         'stroke-dasharray="4 3" opacity="0.7"/>')
        parts.append(f'<text x="{w - m + 4 - 150}" y="{m + 14 * i}" font-size="11" '
                     f'fill="{col}">{esc(t.name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _html_transcript(t: AgentTargetResult, tr: Transcript) -> str:
    rows = [["step", "tool", "arguments", "result", "irreversible"]]
    for s in tr.steps:
        irr = "" if not s.irreversible else (
            f"{s.irreversible} ({'confirmed' if s.confirmed else 'NOT confirmed'})")
        rows.append([str(s.step), s.tool, s.arguments, s.result, irr])
    pert = f", perturbation: {tr.perturbation.replace('_', ' ')}" if tr.perturbation else ""
    return (f"<details><summary>{esc(t.name)}: {esc(tr.scenario)} (trial {tr.trial}{esc(pert)})"
            f" — {esc(tr.why)}</summary>{_html_table(rows)}</details>")


def agents_html(result: RunResult) -> str:
    a = result.agents
    if a is None:
        return ""
    parts = ['<section id="agents"><h2>Agent workflows, end to end</h2>']
    if a.skipped:
        parts.append(f'<p class="bad">{esc(a.skipped)}</p></section>')
        return "".join(parts)
    if not a.targets:  # imported trials only
        return "".join([*parts, _imported_html(a), "</section>"])
    parts.append(f"<p>{esc(_intro(a))}</p>")
    parts += [f'<p class="note">{esc(n)}</p>' for n in a.notes]
    parts.append(_html_table(summary_rows(a)))
    parts.append("<h3>Completion against the number of steps</h3>")
    parts.append(_svg_curve(a) + _html_table(curve_rows(a)))
    parts.append("<h3>pass^k, tokens and latency</h3>" + _html_table(detail_rows(a)))
    parts.append("<h3>The confirmation gate</h3>" + _html_table(gate_rows(a)))
    parts.append("<h3>Recovery after a perturbation</h3>" + _html_table(recovery_rows(a)))
    failures = [(t, tr) for t in a.targets for tr in t.transcripts]
    if failures:
        parts.append("<h3>Failed tasks, step by step</h3>")
        parts += [_html_transcript(t, tr) for t, tr in failures]
    parts.append(_imported_html(a) + "</section>")
    return "".join(parts)


def _intro(a: AgentsResult) -> str:
    perturb = (f"{a.perturbation_share:.0%} of episodes meet one of: "
               + ", ".join(p.replace("_", " ") for p in a.perturbations)
               if a.perturbations else "no perturbations")
    return (f"Scenario set {a.scenario_set}, {a.trials} trial(s) per scenario, {perturb}; at "
            f"most {a.max_steps} tool calls and {a.timeout_s:g} s per episode; browser "
            f"Chromium {a.browser or '?'}. A workflow is correct only when the final state is "
            "right and no irreversible action ran without its confirmation. The gate "
            + ("refuses" if a.gate_mode == "enforce" else "counts (and lets through)")
            + " an irreversible request unless a confirmation naming its action and object "
            f"came at most {a.gate_window_steps} step(s) before it.")


def _md_table(rows: list[list[str]]) -> list[str]:
    if len(rows) < 2:
        return [NOT_MEASURED, ""]
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(_md(c) for c in r) + " |" for r in rows[1:]]
    return [*out, ""]


def _md(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def agents_markdown(result: RunResult) -> list[str]:
    a = result.agents
    if a is None:
        return []
    lines = ["## Agent workflows, end to end", ""]
    if a.skipped:
        return [*lines, f"**{_md(a.skipped)}**", ""]
    if not a.targets:  # imported trials only
        return [*lines, *_imported_markdown(a)]
    lines += [_md(_intro(a)), ""] + [f"_{_md(n)}_" for n in a.notes] + [""]
    lines += _md_table(summary_rows(a))
    lines += ["Completion against the number of steps:", "", *_md_table(curve_rows(a))]
    lines += _md_table(detail_rows(a))
    lines += ["The confirmation gate:", "", *_md_table(gate_rows(a))]
    lines += ["Recovery after a perturbation:", "", *_md_table(recovery_rows(a))]
    for t in a.targets:
        for tr in t.transcripts:
            lines += [f"<details><summary>{_md(t.name)}: {_md(tr.scenario)} (trial "
                      f"{tr.trial}) — {_md(tr.why)}</summary>", ""]
            rows = [["step", "tool", "arguments", "result"]]
            rows += [[str(s.step), s.tool, s.arguments, s.result] for s in tr.steps]
            lines += [*_md_table(rows), "</details>", ""]
    return [*lines, *_imported_markdown(a)]


def _imported_markdown(a: AgentsResult) -> list[str]:
    if not a.imported:
        return []
    return ["### Imported agent benchmark results", "", _md(_IMPORTED_INTRO), "",
            *_md_table(imported_rows(a)), *[f"_{_md(n)}_" for n in imported_notes(a)], ""]


__all__ = ["agents_html", "agents_markdown", "console_lines", "imported_rows"]
