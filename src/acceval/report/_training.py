"""The training section of the reports: curves, time-to-target spread, step-time and goodput
breakdowns, and the metrics table with provenance (HTML and Markdown).

It reads :class:`~acceval.training.result.TrainingResult` attributes only; every number was
computed by ``analyze``. Chart text is HTML-escaped (Plotly renders a subset of HTML).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from acceval.report._charts import Chart, _colour, _layout
from acceval.report._fmt import NOT_MEASURED, num, pct, sig
from acceval.run_result import RunResult
from acceval.training.metrics import BADPUT
from acceval.training.result import (
    PlatformTrainingResult,
    RankSplitResult,
    TimeToTargetResult,
    TrainingResult,
)
from acceval.units import ONE, MoneyScale, money_per, number, si, usd_interval


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _s(v: float | None, unit: str = " s") -> str:
    return NOT_MEASURED if v is None else f"{sig(v, 3)}{unit}"


# --- charts ------------------------------------------------------------------------------------

def curves(tr: TrainingResult) -> Chart:
    """Training loss (thin) and evaluation metric (markers) against time, per run, with the
    target line, spike markers and the interruptions."""
    title = f"Loss and evaluation per run ({tr.metric} target: {tr.target})"
    data: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = [] if tr.threshold is None else [{
        "type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": tr.threshold,
        "y1": tr.threshold, "line": {"dash": "dash", "color": "#c00", "width": 1}}]
    eval_axis = "y" if tr.metric == "eval_loss" else "y2"
    for i, p in enumerate(tr.platforms):
        colour = _colour(i)
        for r in p.runs:
            group = _e(f"{p.name} run {r.index}")
            first = r.index == 0
            data.append({"type": "scatter", "mode": "lines", "x": r.curve.t_s,
                         "y": r.curve.loss, "name": _e(f"{p.name} loss"),
                         "legendgroup": _e(p.name), "showlegend": first,
                         "line": {"color": colour, "width": 1}, "opacity": 0.5,
                         "hovertemplate": f"{group} %{{x:.2f}} s: loss %{{y:.3f}}<extra></extra>"})
            data.append({"type": "scatter", "mode": "lines+markers", "x": r.curve.eval_t_s,
                         "y": r.curve.eval_value, "name": _e(f"{p.name} {tr.metric}"),
                         "legendgroup": _e(p.name), "showlegend": first, "yaxis": eval_axis,
                         "line": {"color": colour, "width": 2}, "marker": {"size": 5},
                         "hovertemplate": f"{group} %{{x:.2f}} s: {_e(tr.metric)} "
                                          "%{y:.3f}<extra></extra>"})
            spikes = r.stability.loss_spikes
            if spikes:
                data.append({"type": "scatter", "mode": "markers",
                             "x": [s.t_s for s in spikes], "y": [s.value for s in spikes],
                             "name": _e(f"{p.name} loss spike"), "legendgroup": _e(p.name),
                             "showlegend": False,
                             "marker": {"symbol": "triangle-up", "size": 10, "color": colour},
                             "hovertemplate": f"{group}: spike z=%{{text}}<extra></extra>",
                             "text": [f"{s.z:.1f}" for s in spikes]})
            gspikes = [(g.t_s, g) for g in r.stability.grad_norm_spikes if g.t_s is not None]
            losses = [(t, v) for t, v in zip(r.curve.t_s, r.curve.loss, strict=False)
                      if t is not None and v is not None and math.isfinite(v)]
            if gspikes and losses:
                # A gradient norm is not a loss: marked on the loss curve where it happened.
                ts, vs = zip(*losses, strict=True)
                data.append({"type": "scatter", "mode": "markers",
                             "x": [t for t, _ in gspikes],
                             "y": [float(np.interp(t, ts, vs)) for t, _ in gspikes],
                             "name": _e(f"{p.name} grad-norm spike"),
                             "legendgroup": _e(p.name), "showlegend": False,
                             "marker": {"symbol": "diamond-open", "size": 10,
                                        "color": colour},
                             "hovertemplate": f"{group}: grad-norm spike %{{text}}"
                                              "<extra></extra>",
                             "text": [f"{number(g.value)} (z={g.z:.1f})" for _, g in gspikes]})
            for it in r.restarts.interruptions:
                shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": it.t_s,
                               "x1": it.t_s, "y0": 0, "y1": 1,
                               "line": {"color": colour, "width": 2, "dash": "dot"}})
                data.append({"type": "scatter", "mode": "markers", "x": [it.t_s],
                             "y": [tr.threshold], "name": _e(f"{p.name} interruption"),
                             "legendgroup": _e(p.name), "showlegend": False,
                             "marker": {"symbol": "x", "size": 12, "color": colour},
                             "hovertemplate": _e(f"{p.name} run {r.index}: interrupted at "
                                                 f"{it.t_s:.2f} s, {it.lost_steps} steps "
                                                 "lost") + "<extra></extra>"})
    if not data:
        return Chart("chart-training-curves", title, None, "no training run was read")
    extra: dict[str, Any] = {}
    if eval_axis == "y2":
        extra["yaxis2"] = {"title": {"text": "accuracy"}, "overlaying": "y", "side": "right"}
    layout = _layout(title, shapes=shapes, height=440,
                     xaxis={"title": {"text": "seconds since the run started"}},
                     yaxis={"title": {"text": "loss"}}, **extra)
    return Chart("chart-training-curves", title, {"data": data, "layout": layout},
                 "thin lines: training loss; lines with markers: the evaluation metric; dashed "
                 "red: the target; dotted verticals and crosses: interruptions; triangles: "
                 "loss spikes, open diamonds (on the loss curve): gradient-norm spikes "
                 f"(rolling z-score > {tr.spike_z:g} over {tr.spike_window} steps)")


def time_to_target(tr: TrainingResult) -> Chart:
    title = "Time to target per run (MLPerf scoring: fastest and slowest dropped)"
    data: list[dict[str, Any]] = []
    for i, p in enumerate(tr.platforms):
        ttt = p.time_to_target
        if ttt is None:
            continue
        xs = [r.time_to_target_s for r in p.runs if r.reached]
        labels = [f"run {r.index}" + (" (dropped)" if r.index in ttt.dropped else "")
                  for r in p.runs if r.reached]
        data.append({"type": "scatter", "mode": "markers", "x": xs, "y": [_e(p.name)] * len(xs),
                     "name": _e(p.name), "text": [_e(t) for t in labels],
                     "marker": {"size": 11, "color": _colour(i),
                                "symbol": ["circle-open" if r.index in ttt.dropped else "circle"
                                           for r in p.runs if r.reached]},
                     "hovertemplate": "%{text}: %{x:.2f} s<extra></extra>"})
        if ttt.value_s is not None:
            data.append({"type": "scatter", "mode": "markers", "x": [ttt.value_s],
                         "y": [_e(p.name)], "name": _e(f"{p.name} score"), "showlegend": False,
                         "marker": {"symbol": "line-ns-open", "size": 26, "color": "#000"},
                         "hovertemplate": f"{_e(p.name)} score %{{x:.2f}} s<extra></extra>"})
    if not data:
        return Chart("chart-training-ttt", title, None, "no run reached the target")
    layout = _layout(title, height=120 + 70 * len(tr.platforms), showlegend=False,
                     xaxis={"title": {"text": "seconds to the target"}, "rangemode": "tozero"})
    return Chart("chart-training-ttt", title, {"data": data, "layout": layout},
                 "filled: scored runs; open: the fastest and slowest, dropped; black bar: the "
                 "score (their mean)")


_SPLIT = (("compute", "#0072B2"), ("exposed communication", "#D55E00"), ("idle", "#999999"))


def step_breakdown(tr: TrainingResult) -> Chart:
    title = "Step time from the profiler trace: compute, communication, idle (ms per step)"
    names: list[str] = []
    parts: dict[str, list[float]] = {k: [] for k, _ in _SPLIT}
    for p in tr.platforms:
        cc = p.compute_comm
        if cc is None or not cc.steps:
            continue
        n = len(cc.steps)
        comm = sum(s.communication_ms for s in cc.steps) / n
        over = sum(s.overlap_ms for s in cc.steps) / n
        # Compute that ran during communication is counted once, under compute.
        parts["compute"].append(sum(s.compute_ms for s in cc.steps) / n)
        parts["exposed communication"].append(comm - over)
        parts["idle"].append(sum(s.idle_ms for s in cc.steps) / n)
        names.append(_e(p.name))
    if not names:
        return Chart("chart-training-steps", title, None, "no profiler trace was given")
    data = [{"type": "bar", "orientation": "h", "y": names, "x": parts[k], "name": _e(k),
             "marker": {"color": c}, "hovertemplate": f"{_e(k)} %{{x:.1f}} ms<extra></extra>"}
            for k, c in _SPLIT]
    layout = _layout(title, barmode="stack", height=140 + 70 * len(names),
                     xaxis={"title": {"text": "ms per traced step"}})
    bounds = "; ".join(f"{p.name}: {p.compute_comm.bound}" for p in tr.platforms
                       if p.compute_comm is not None and p.compute_comm.bound)
    return Chart("chart-training-steps", title, {"data": data, "layout": layout},
                 "HTA's temporal breakdown on the trace's events; communication that overlaps "
                 "compute is inside the compute bar, exposed communication is what adds to the "
                 f"step. {bounds}")


_GOODPUT_COLOURS = {"productive": "#009E73", "startup": "#E69F00", "data_loading": "#56B4E9",
                    "checkpoint_save": "#0072B2", "checkpoint_restore": "#CC79A7",
                    "lost_work": "#D55E00", "other": "#BBBBBB"}


def goodput_bars(tr: TrainingResult) -> Chart:
    title = "Where the wall time went: productive steps and badput (mean over runs, s)"
    names: list[str] = []
    cols: dict[str, list[float]] = {k: [] for k in ("productive", *BADPUT)}
    for p in tr.platforms:
        gps = [r.goodput for r in p.runs if r.goodput is not None]
        if not gps:
            continue
        names.append(_e(p.name))
        cols["productive"].append(sum(g.productive_s for g in gps) / len(gps))
        for k in BADPUT:
            cols[k].append(sum(g.badput_s.get(k, 0.0) for g in gps) / len(gps))
    if not names:
        return Chart("chart-training-goodput", title, None, "no run had a wall time")
    data = [{"type": "bar", "orientation": "h", "y": names, "x": v, "name": _e(k),
             "marker": {"color": _GOODPUT_COLOURS.get(k, "#999999")},
             "hovertemplate": f"{_e(k)} %{{x:.2f}} s<extra></extra>"}
            for k, v in cols.items()]
    layout = _layout(title, barmode="stack", height=140 + 70 * len(names),
                     xaxis={"title": {"text": "seconds per run"}})
    return Chart("chart-training-goodput", title, {"data": data, "layout": layout},
                 "productive: the preserved steps' own time less data waiting; other: "
                 "evaluation, logging and stalls")


def training_charts(tr: TrainingResult) -> list[Chart]:
    return [curves(tr), time_to_target(tr), step_breakdown(tr), goodput_bars(tr)]


# --- the metrics table (shared by HTML and Markdown) -------------------------------------------

def ttt_text(t: TimeToTargetResult) -> str:
    """The score, its rule, the spread and the initialization shown beside it."""
    if not t.valid:
        score = f"invalid ({t.reason})"
    elif t.benchmark is not None and t.value_s is not None:
        # An MLPerf score is compared with published ones: to the millisecond, and in the
        # minutes MLCommons publishes.
        score = f"{t.value_s:,.3f} s ({t.value_s / 60:.3f} min)"
    else:
        score = _s(t.value_s)
    spread = (f"; runs {sig(t.min_s, 3)}–{sig(t.max_s, 3)} s, sd {_s(t.stdev_s)}"
              if t.min_s is not None and t.max_s is not None else "")
    init = ("" if t.init_mean_s is None else
            f"; init {_s(t.init_mean_s)} per run on average, beside the score, not in it")
    rule = f"; {t.rule}" if t.rule else ""
    return f"{score} ({t.converged}/{t.runs} converged{spread}{init}{rule})"


def rank_text(ranks: list[RankSplitResult], slowest: int | None) -> str:
    """Each rank's split, and which one bounds the step."""
    parts = [f"rank {r.rank}: compute {pct(r.compute_share)}, non-compute "
             f"{pct(r.non_compute_share)}, idle {pct(r.idle_share)}"
             + (f", overlap {pct(r.overlap_share)} of communication" if r.overlap_share
                is not None else ", no communication" if r.communication_ms == 0 else
                ", overlap not measurable")
             + f" over {sig(r.window_ms, 4)} ms" + (f" ({r.steps})" if r.steps else "")
             for r in ranks]
    lead = f"slowest rank {slowest} bounds the step; " if len(ranks) > 1 else ""
    return lead + "; ".join(parts)


def runs_text(tr: TrainingResult) -> str:
    """How many runs each platform has: the study's count for those it runs, the logs'."""
    counts = sorted({len(p.runs) for p in tr.platforms if p.runs})
    if counts == [tr.runs_per_platform] or not counts:
        return f"{tr.runs_per_platform} runs per platform"
    return f"{' or '.join(map(str, counts))} runs per platform"


def target_text(p: PlatformTrainingResult) -> str:
    if p.target is None:
        return NOT_MEASURED
    src = "declared" if p.target_source == "declared" else p.target_source
    return f"{p.target} ({src})" + (f"; {p.target_note}" if p.target_note else "")


def console_lines(result: RunResult) -> list[str]:
    """The training lines of the console summary: each platform's score and cost."""
    tr = result.training
    if tr is None:
        return []
    out = []
    for p in tr.platforms:
        if p.failure and p.time_to_target is None:
            out.append(f"training {p.name}: not measured: {p.failure}")
            continue
        t = p.time_to_target
        cost = (money_per(p.cost.cost_per_run_usd, "training run", scale=ONE)
                if p.cost is not None else "no cost (no price declared)")
        out.append(f"training {p.name}: time to train {ttt_text(t) if t else NOT_MEASURED}; "
                   f"{cost}; target {target_text(p)}")
        out += [f"  run {r.index}: {r.note}" for r in p.runs if r.note]
        cc = p.compute_comm
        if cc is not None and cc.ranks:
            out.append(f"  per rank: {rank_text(cc.ranks, cc.slowest_rank)}")
        if p.mfu is not None and p.mfu.flag:
            out.append(f"  MFU {pct(p.mfu.mfu, 3)}: {p.mfu.flag}")
    return out

def _cost(p: PlatformTrainingResult, scale: MoneyScale) -> str:
    if p.cost is None:
        return NOT_MEASURED
    return (money_per(p.cost.cost_per_run_usd, "training run", scale=scale) + " "
            + usd_interval(p.cost.interval_usd, scale=scale)).strip()


def _mean(vals: list[float]) -> float | None:
    return sum(vals) / len(vals) if vals else None


def metric_rows(tr: TrainingResult) -> tuple[list[str], list[list[str]]]:
    """One row per metric, one column per platform, and a provenance column."""
    ps = tr.platforms
    head = ["metric", *[p.name for p in ps], "provenance"]

    def row(name: str, cell: Callable[[PlatformTrainingResult], str], prov: str) -> list[str]:
        return [name, *[cell(p) if not p.failure else NOT_MEASURED for p in ps], prov]

    def ttt(p: PlatformTrainingResult) -> str:
        t = p.time_to_target
        if t is None:
            return NOT_MEASURED
        return ttt_text(t)

    def energy(p: PlatformTrainingResult) -> str:
        e = p.cost.energy if p.cost is not None else None
        if e is None or e.joules is None:
            return NOT_MEASURED
        return f"{sig(e.joules, 3)} J at {e.level} ({e.origin})"

    def spikes(p: PlatformTrainingResult) -> str:
        ls = sum(len(r.stability.loss_spikes) for r in p.runs)
        gs = sum(len(r.stability.grad_norm_spikes) for r in p.runs)
        nan = sum(r.stability.nan_steps for r in p.runs)
        div = sum(1 for r in p.runs if r.stability.diverged)
        return f"{ls} loss / {gs} grad-norm spikes; {nan} non-finite-loss steps; {div} diverged"

    def restarts(p: PlatformTrainingResult) -> str:
        its = [i for r in p.runs for i in r.restarts.interruptions]
        if not its:
            return "0"
        parts = [f"{i.lost_steps} steps ({sig(i.lost_s, 3)} s) lost since the step-"
                 f"{i.checkpoint_step} checkpoint; resumed in {_s(i.time_to_resume_s)}, "
                 f"recovered in {_s(i.time_to_recover_s)}" for i in its]
        return f"{len(its)}: " + "; ".join(parts)

    def ckpt(p: PlatformTrainingResult) -> str:
        saves = sum(r.restarts.checkpoint_saves for r in p.runs)
        secs = sum(r.restarts.checkpoint_save_s for r in p.runs)
        if not saves:
            return "0 saves"
        usd = p.cost.checkpoint_usd_per_run if p.cost is not None else None
        money = ""
        if usd is not None and p.cost is not None and p.cost.cost_per_run_usd > 0:
            # Per training run, as the cost above it; in dollars from a cent up (a toy run's
            # fractions of a cent read as its share alone).
            share = f"{pct(usd / p.cost.cost_per_run_usd)} of the cost per run"
            money = (f", {money_per(usd, 'training run', scale=ONE)} ({share})"
                     if usd >= 0.01 else f", {share}")
        return f"{saves} saves, {sig(secs / saves, 3)} s each{money}"

    def goodput(p: PlatformTrainingResult) -> str:
        g = _mean([r.goodput.goodput for r in p.runs
                   if r.goodput is not None and r.goodput.goodput is not None])
        return pct(g)

    def mfu(p: PlatformTrainingResult) -> str:
        m = p.mfu
        if m is None:
            return NOT_MEASURED
        if m.status != "assessed":
            return f"not assessed: {m.reason}"
        hfu = f", HFU {pct(m.hfu, 3)}" if m.hfu is not None else ""
        flag = f" — {m.flag}" if m.flag else ""
        return f"{pct(m.mfu, 3)}{hfu} ({si(m.flops_per_token, 'FLOP')}/token){flag}"

    def tput(p: PlatformTrainingResult) -> str:
        m = p.mfu
        return NOT_MEASURED if m is None or m.tokens_per_s is None else \
            f"{num(m.tokens_per_s, 0)} tokens/s"

    def bound(p: PlatformTrainingResult) -> str:
        cc = p.compute_comm
        if cc is None:
            return "not assessed: no profiler trace"
        if not cc.bound:
            return cc.note or NOT_MEASURED
        # What the trace's form does not give travels with the figures it qualifies.
        return f"{cc.bound}: {cc.evidence}" + (f" ({cc.note})" if cc.note else "")

    def per_rank(p: PlatformTrainingResult) -> str:
        cc = p.compute_comm
        if cc is None or not cc.ranks:
            return "not assessed: no profiler trace"
        return rank_text(cc.ranks, cc.slowest_rank)

    def unread(p: PlatformTrainingResult) -> str:
        lines = sum(r.ingest.records for r in p.runs)
        bad = sum(r.ingest.unread for r in p.runs)
        fmts = sorted({r.ingest.format for r in p.runs})
        return f"{bad} of {lines} records not understood ({', '.join(fmts)})"

    prov = {p.name: p.provenance for p in ps}

    def source(key: str) -> str:
        """The platforms' provenance of one metric: one text when they agree, else each
        platform's own (two platforms can differ: a Kineto trace against a Neuron one)."""
        said = {name: pv.get(key, "") for name, pv in prov.items()}
        distinct = list(dict.fromkeys(v for v in said.values() if v))
        if len(distinct) <= 1:
            return distinct[0] if distinct else ""
        return "; ".join(f"{name}: {v}" for name, v in said.items() if v)
    # A training run is bought one at a time: every platform's cost is per run, as the
    # verdict says it (a run of a tiny model costs a fraction of a cent, not "$37,821 per 1B").
    scale = ONE
    rows = [
        row("quality target", target_text, "declared in the study, else the benchmark's "
            "MLPerf training rules"),
        row("cost per run to target", lambda p: _cost(p, scale), source("cost")),
        row("time to target", ttt, source("time to target")),
        row("energy per run to target", energy, source("energy")),
        row("stability", spikes, f"rolling z-score above {tr.spike_z:g} over "
                                 f"{tr.spike_window} steps"),
        row("restarts", restarts, source("stability, restarts, goodput")),
        row("checkpoints", ckpt, "checkpoint_save events; priced at the chip rate"),
        row("training goodput", goodput, "productive step time / wall time"),
        row("throughput", tput, "tokens / preserved steps' time"),
        row("MFU", mfu, source("MFU")),
        row("which resource saturates", bound, source("compute vs communication")),
        row("per rank", per_rank, "every rank's trace; HTA's definitions (GPU: over its "
            "kernel window)"),
        row("log lines", unread, "every record a reader could not understand is counted"),
    ]
    return head, rows


def _failures(tr: TrainingResult) -> list[str]:
    return [f"{p.name}: {p.failure}" for p in tr.platforms if p.failure]


def _unread_examples(tr: TrainingResult) -> list[str]:
    out = []
    for p in tr.platforms:
        for r in p.runs:
            for ex in r.ingest.unread_examples[:2]:
                out.append(f"{p.name} run {r.index} ({r.ingest.format}): {ex}")
    return out[:8]


# --- HTML and Markdown -------------------------------------------------------------------------

def training_html(result: RunResult,
                  figure: Callable[[Chart], str]) -> tuple[str, list[Chart]]:
    """The section and its charts (empty when the study has no training section)."""
    tr = result.training
    if tr is None:
        return "", []
    charts = training_charts(tr)
    head, rows = metric_rows(tr)
    table = ("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
             + "</tr></thead><tbody>"
             + "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>"
                       for r in rows) + "</tbody></table>")
    v = tr.verdict
    verdict = (f"<p><b>{_e(v.headline)}</b></p><ul>"
               + "".join(f"<li>{_e(line)}</li>" for line in v.lines) + "</ul>") if v else ""
    notes = "".join(f'<p class="bad">{_e(f)}</p>' for f in _failures(tr))
    examples = _unread_examples(tr)
    unread = ("<details><summary>Records not understood (examples)</summary><ul>"
              + "".join(f"<li><code>{_e(x)}</code></li>" for x in examples)
              + "</ul></details>") if examples else ""
    body = ('<section id="training"><h2>Training on equal terms</h2>'
            f"<p>Target: {_e(tr.target)}; {_e(runs_text(tr))}, scored MLPerf-style "
            "(docs/training.md).</p>" + verdict + notes + table + unread
            + "".join(map(figure, charts)) + "</section>")
    return body, charts


def training_markdown(result: RunResult) -> list[str]:
    tr = result.training
    if tr is None:
        return []
    lines = ["## Training on equal terms", "",
             f"Target: {tr.target}; {runs_text(tr)}, scored MLPerf-style "
             "(docs/training.md).", ""]
    if tr.verdict is not None:
        lines += [f"**{html.escape(tr.verdict.headline, quote=False)}**", ""]
        lines += [f"- {html.escape(x, quote=False)}" for x in tr.verdict.lines]
        lines.append("")
    lines += [f"- not measured: {html.escape(f, quote=False)}" for f in _failures(tr)]
    head, rows = metric_rows(tr)
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(html.escape(c, quote=False).replace("|", "\\|") for c in r)
              + " |" for r in rows]
    lines.append("")
    lines += ["Per run: time to target (MLPerf logs: run_stop - run_start), initialization "
              "beside it, steps, wall time, goodput, restarts.", "",
              "| platform | run | seed | reached | time to target | init | status | step | "
              "wall | goodput | restarts | note |", "|---" * 12 + "|"]
    for p in tr.platforms:
        for r in p.runs:
            g = r.goodput.goodput if r.goodput is not None else None
            note = html.escape(r.note, quote=False).replace("|", "\\|")
            lines.append(f"| {p.name} | {r.index} | {r.seed if r.seed is not None else '—'} | "
                         f"{'yes' if r.reached else 'no'} | {_s(r.time_to_target_s)} | "
                         f"{_s(r.init_s)} | {r.run_status or '—'} | "
                         f"{r.step_to_target if r.step_to_target is not None else '—'} | "
                         f"{_s(r.wall_s)} | {pct(g)} | {r.restarts.count} | {note} |")
    lines.append("")
    return lines


__all__ = ["console_lines", "metric_rows", "rank_text", "runs_text", "target_text",
           "training_charts", "training_html", "training_markdown", "ttt_text"]
