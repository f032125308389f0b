"""Plotly figure specs (plain dicts: ``data`` + ``layout``) for the HTML report.

Only plotly.js is needed to draw them, so nothing here imports plotly. Each builder returns a
:class:`Chart` whose ``figure`` is None when the run lacks the data, with a note saying what is
missing. Text that reaches Plotly is HTML-escaped: Plotly renders a subset of HTML in labels.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.metrics.derive import latencies
from acceval.report._capacity import CapacityView, untrusted_reason
from acceval.report._econ import RunEcon, TargetEcon
from acceval.results.section import PointResult
from acceval.run_result import RunResult
from acceval.units import money_per, pick_scale

Figure = dict[str, Any]

# Colour-blind-safe (Okabe-Ito), one per target in study order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")
_MAX_TORNADO_BARS = 14


@dataclass(frozen=True, slots=True)
class Chart:
    id: str
    title: str
    figure: Figure | None
    note: str = ""


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "title": {"text": _e(title), "font": {"size": 15}},
        "height": 400, "margin": {"l": 70, "r": 20, "t": 50, "b": 90},
        "paper_bgcolor": "#ffffff", "plot_bgcolor": "#f7f7f9",
        "legend": {"orientation": "h", "y": -0.28},
        "hovermode": "closest",
    }
    base.update(extra)
    return base


def _fin(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def _untrusted_trace(name: str, colour: str, pts: list[PointResult], x: list[float | None],
                     y: list[float | None], **axes: str) -> dict[str, Any]:
    """Points the load generator flagged degraded: drawn as crosses, with the reason, and
    left out of every line and frontier."""
    return {"type": "scatter", "mode": "markers", "x": x, "y": y,
            "text": [_e(f"{p.label}: {untrusted_reason(p)}") for p in pts],
            "name": _e(f"{name} (not trusted)"), "legendgroup": _e(name), **axes,
            "marker": {"symbol": "x-open", "size": 10, "color": colour},
            "hovertemplate": f"{_e(name)} %{{text}}<extra></extra>"}


def latency_vs_throughput(result: RunResult) -> Chart:
    title = "Latency (p95) vs throughput, per target"
    data: list[dict[str, Any]] = []
    untrusted_drawn = False
    for i, t in enumerate(result.targets):
        pts = [p for p in t.points if _fin(p.summary.request_throughput_rps)]
        pts.sort(key=lambda p: p.summary.request_throughput_rps or 0.0)
        for metric, axis in (("ttft_ms", ""), ("tpot_ms", "2")):
            xs, ys, text = [], [], []
            bad: list[PointResult] = []
            for p in pts:
                v = getattr(p.summary, metric).p95
                if not _fin(v):
                    continue
                if not p.trusted:
                    bad.append(p)
                    continue
                xs.append(p.summary.request_throughput_rps)
                ys.append(v)
                text.append(_e(p.label))
            if xs:
                data.append({"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys,
                             "text": text, "name": _e(t.name), "legendgroup": _e(t.name),
                             "showlegend": axis == "", "xaxis": "x" + axis, "yaxis": "y" + axis,
                             "line": {"color": _colour(i)},
                             "hovertemplate": f"{_e(t.name)} %{{text}}<br>%{{x:.3g}} req/s, "
                                              f"{metric[:4].upper()} p95 %{{y:.4g}} ms"
                                              "<extra></extra>"})
            if bad:
                untrusted_drawn = True
                tr = _untrusted_trace(t.name, _colour(i), bad,
                                      [p.summary.request_throughput_rps for p in bad],
                                      [getattr(p.summary, metric).p95 for p in bad],
                                      xaxis="x" + axis, yaxis="y" + axis)
                tr["showlegend"] = axis == ""
                data.append(tr)
    if not data:
        return Chart("chart-latency", title, None, "no load point completed a request")
    shapes = []
    for bound, yref in ((result.slo.ttft_ms, "y"), (result.slo.tpot_ms, "y2")):
        if bound is not None:
            shapes.append({"type": "line", "xref": "x domain" if yref == "y" else "x2 domain",
                           "x0": 0, "x1": 1, "yref": yref,
                           "y0": bound, "y1": bound,
                           "line": {"dash": "dash", "color": "#c00", "width": 1}})
    layout = _layout(title, shapes=shapes,
                     xaxis={"domain": [0, 0.46], "title": {"text": "completed req/s"}},
                     yaxis={"title": {"text": "TTFT p95 (ms)"}, "rangemode": "tozero"},
                     xaxis2={"domain": [0.54, 1], "title": {"text": "completed req/s"},
                             "anchor": "y2"},
                     yaxis2={"title": {"text": "TPOT p95 (ms)"}, "anchor": "x2",
                             "rangemode": "tozero"})
    note = "dashed red lines: the study's SLO bounds"
    if untrusted_drawn:
        note += ("; crosses: load points not trusted (the load generator fell behind), "
                 "not joined to the curve")
    return Chart("chart-latency", title, {"data": data, "layout": layout}, note)


def _pareto(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points not beaten on both axes (higher is better on both), sorted by x."""
    front: list[tuple[float, float]] = []
    best_y = -math.inf
    for x, y in sorted(points, key=lambda p: (-p[0], -p[1])):
        if y > best_y:
            front.append((x, y))
            best_y = y
    return sorted(front)


def pareto(result: RunResult) -> Chart:
    title = "Throughput per chip vs interactivity (Pareto view)"
    data: list[dict[str, Any]] = []
    everything: list[tuple[float, float]] = []
    untrusted_drawn = gate_failed = False
    for i, t in enumerate(result.targets):
        xs, ys, text = [], [], []
        bad: list[PointResult] = []
        bad_x: list[float | None] = []
        bad_y: list[float | None] = []
        for p in t.points:
            tpot = p.summary.tpot_ms.p50
            tps = p.summary.output_token_throughput_tps
            if not (_fin(tpot) and tpot and _fin(tps)):
                continue
            assert tpot is not None and tps is not None
            if not p.trusted:
                bad.append(p)
                bad_x.append(1000.0 / tpot)
                bad_y.append(tps / t.chips)
                continue
            xs.append(1000.0 / tpot)
            ys.append(tps / t.chips)
            text.append(_e(p.label))
        failed = t.gate.passed is False
        if failed:
            # A target below the quality level is drawn, marked, and kept off the frontier:
            # its throughput buys wrong answers.
            gate_failed = True
        else:
            everything += list(zip(xs, ys, strict=True))
        if xs:
            data.append({"type": "scatter", "mode": "markers", "x": xs, "y": ys, "text": text,
                         "name": _e(t.name + (" (fails the quality gate)" if failed else "")),
                         "legendgroup": _e(t.name),
                         "marker": {"size": 10, "color": _colour(i),
                                    "symbol": "circle-open" if failed else "circle"},
                         "hovertemplate": f"{_e(t.name)} %{{text}}<br>%{{x:.3g}} tok/s/user, "
                                          "%{y:.4g} tok/s/chip<extra></extra>"})
        if bad:
            untrusted_drawn = True
            data.append(_untrusted_trace(t.name, _colour(i), bad, bad_x, bad_y))
    if not data:
        return Chart("chart-pareto", title, None,
                     "needs TPOT (answers longer than one token) and token throughput")
    front = _pareto(everything)
    if front:
        data.append({"type": "scatter", "mode": "lines", "x": [p[0] for p in front],
                     "y": [p[1] for p in front], "name": "Pareto frontier",
                     "line": {"color": "#555", "dash": "dot"}, "hoverinfo": "skip"})
    layout = _layout(title, xaxis={"title": {"text": "interactivity: output tok/s per user "
                                             "(1000 / TPOT p50)"}, "rangemode": "tozero"},
                     yaxis={"title": {"text": "output tok/s per chip"}, "rangemode": "tozero"})
    note = "up and to the right is better; chips from each target's platform.chips"
    if untrusted_drawn:
        note += "; crosses: load points not trusted, left out of the frontier"
    if gate_failed:
        note += ("; open circles: a target that fails the quality gate, left out of the "
                 "frontier")
    return Chart("chart-pareto", title, {"data": data, "layout": layout}, note)


def cost_stack(result: RunResult) -> Chart:
    """Each bill item's share of the cost per correct task at the operating point the verdict
    names for the target (a target the verdict gives none is not drawn)."""
    title = "Cost per correct task, by bill item"
    bills = []
    left_out: list[str] = []
    for t in result.targets:
        s = result.verdict.standing(t.name)
        pc = (t.economics.point(s.operating_point)
              if t.economics is not None and s is not None and s.operating_point else None)
        if pc is None:
            if t.economics is not None:
                left_out.append(t.name)
            continue
        counted = sum(i.usd for i in pc.bill.items if i.usd is not None)
        if _fin(pc.bill.cost_per_correct_usd) and counted > 0:
            bills.append((t.name, pc.label, pc.bill, counted))
    if not bills:
        return Chart("chart-cost", title, None,
                     "no target has a priced operating point (declare a price, meet the SLO) "
                     "or nothing was answered correctly")
    scale = pick_scale([min(b.cost_per_correct_usd for _, _, b, _ in bills)])
    failed = {t.name for t in result.targets if t.gate.passed is False}
    names: list[str] = []
    for _, _, bill, _ in bills:
        names += [i.name for i in bill.items if i.usd is not None and i.name not in names]
    data = []
    for j, item_name in enumerate(names):
        xs, ys, text = [], [], []
        for target, label, bill, counted in bills:
            item = bill.item(item_name)
            if item is None or item.usd is None:
                continue
            share = item.usd / counted * bill.cost_per_correct_usd
            xs.append(_e(target + (" (fails the quality gate)" if target in failed else "")))
            ys.append(share * scale.factor)
            text.append(_e(f"{item_name} at {label}: "
                           f"{money_per(share, 'correct task', scale=scale)}"))
        if xs:
            data.append({"type": "bar", "x": xs, "y": ys, "name": _e(item_name), "text": text,
                         "textposition": "none", "marker": {"color": _colour(j + 2)},
                         "hovertemplate": "%{text}<extra></extra>"})
    unit = f"per {scale.label} correct tasks" if scale.label else "per correct task"
    layout = _layout(title, barmode="stack", yaxis={"title": {"text": f"USD {unit}"}})
    note = "each item's share of the bill at the operating point the verdict names"
    if left_out:
        note += f"; no operating point (not drawn): {', '.join(left_out)}"
    return Chart("chart-cost", title, {"data": data, "layout": layout}, note)


def tornado(run: RunEcon) -> Chart:
    title = "Sensitivity of cost per correct task (one input at a time)"
    bars = [b for b in run.bars
            if all(map(_fin, (b.base_usd, b.low_usd, b.high_usd))) and b.high_usd != b.low_usd]
    bars = sorted(bars, key=lambda b: -abs(b.high_usd - b.low_usd))[:_MAX_TORNADO_BARS]
    if not bars:
        return Chart("chart-tornado", title, None,
                     "no sensitivity analysis in this run (needs a bill per target)")
    bars.reverse()  # Plotly draws the first category at the bottom
    scale = pick_scale([min(min(b.base_usd, b.low_usd, b.high_usd) for b in bars)])
    n = scale.factor
    labels = [_e(f"{b.target} · {b.input}") for b in bars]
    data = []
    for side, colour in (("low", "#56B4E9"), ("high", "#D55E00")):
        ends = [(b.low_usd, b.low_value) if side == "low" else (b.high_usd, b.high_value)
                for b in bars]
        data.append({"type": "bar", "orientation": "h", "y": labels,
                     "x": [(usd - b.base_usd) * n for b, (usd, _) in zip(bars, ends,
                                                                         strict=True)],
                     "base": [b.base_usd * n for b in bars], "name": f"input at its {side} end",
                     "marker": {"color": colour},
                     "text": [_e(f"input {value:g}" if value is not None else "input unknown")
                              + " → " + _e(money_per(usd, "correct task", scale=scale))
                              + " (base " + _e(money_per(b.base_usd, "correct task",
                                                         scale=scale)) + ")"
                              for b, (usd, value) in zip(bars, ends, strict=True)],
                     "textposition": "none",
                     "hovertemplate": f"%{{y}} {side}: %{{text}}<extra></extra>"})
    unit = f"per {scale.label} correct tasks" if scale.label else "per correct task"
    layout = _layout(title, barmode="overlay", height=max(300, 60 + 28 * len(bars)),
                     margin={"l": 220, "r": 20, "t": 50, "b": 60},
                     # a long "target · input" label widens the margin rather than being cut
                     yaxis={"automargin": True},
                     xaxis={"title": {"text": f"USD {unit}"}})
    return Chart("chart-tornado", title, {"data": data, "layout": layout},
                 "bars start at each target's base cost; widest input on top")


def accuracy(result: RunResult) -> Chart:
    title = "Accuracy with 95 % Wilson intervals"
    xs, ys, lo, hi, colours = [], [], [], [], []
    for i, t in enumerate(result.targets):
        a = t.accuracy
        if a is None or a.accuracy is None or a.ci_low is None or a.ci_high is None:
            continue
        xs.append(_e(t.name))
        ys.append(a.accuracy)
        lo.append(a.accuracy - a.ci_low)
        hi.append(a.ci_high - a.accuracy)
        colours.append(_colour(i))
    if not xs:
        return Chart("chart-accuracy", title, None, "the task set has no checker")
    data = [{"type": "scatter", "mode": "markers", "x": xs, "y": ys, "name": "accuracy",
             "marker": {"size": 12, "color": colours},
             "error_y": {"type": "data", "symmetric": False, "array": hi, "arrayminus": lo},
             "hovertemplate": "%{x}: %{y:.1%}<extra></extra>"}]
    shapes = []
    level = result.quality.min_accuracy
    if level is not None:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": level,
                       "y1": level, "line": {"dash": "dash", "color": "#c00", "width": 1}})
    layout = _layout(title, shapes=shapes, showlegend=False,
                     yaxis={"title": {"text": "accuracy"}, "tickformat": ".0%",
                            "range": [0, 1.05]})
    return Chart("chart-accuracy", title, {"data": data, "layout": layout},
                 "dashed red line: the study's minimum accuracy" if level is not None else "")


def _bucket_stats(sec: np.ndarray, values: np.ndarray | None, n: int) -> list[float | None]:
    """Per one-second bucket: the count of rows (``values`` None) or the p95 of ``values``."""
    idx = sec.astype(np.int64)
    if values is None:
        return [float(c) for c in np.bincount(idx, minlength=n)[:n]]
    out: list[float | None] = []
    for b in range(n):
        v = values[(idx == b) & ~np.isnan(values)]
        out.append(float(np.percentile(v, 95)) if v.size else None)
    return out


def timeline(result: RunResult, records: pa.Table | None) -> Chart:
    title = "Timeline of the run (per-second buckets)"
    if records is None or records.num_rows == 0:
        return Chart("chart-timeline", title, None, "no records.parquet for this run")
    d = latencies(records)
    m = d.measured & ~np.isnan(d.sent_ns)
    if not m.any():
        return Chart("chart-timeline", title, None, "no request was sent")
    origin = float(np.nanmin(d.sent_ns[m]))
    data: list[dict[str, Any]] = []
    for i, t in enumerate(result.targets):
        sel = m & np.asarray(pc.equal(records["target"], t.name).to_numpy(
            zero_copy_only=False), dtype=np.bool_)
        if not sel.any():
            continue
        sent_s = np.floor((d.sent_ns[sel] - origin) / 1e9)
        done = d.done_ns[sel]
        done_s = np.floor((np.where(np.isnan(done), d.sent_ns[sel], done) - origin) / 1e9)
        lo, hi = int(sent_s.min()), int(max(sent_s.max(), done_s.max()))
        n = hi - lo + 1
        x = list(range(lo, hi + 1))
        err = ~d.ok[sel]
        rate = _bucket_stats(sent_s - lo, None, n)
        ttft = _bucket_stats(sent_s - lo, d.ttft_ms[sel], n)
        errors = _bucket_stats((done_s - lo)[err], None, n)
        common = {"legendgroup": _e(t.name), "line": {"color": _colour(i)}}
        data.append({"type": "scatter", "mode": "lines", "x": x, "y": rate, "name": _e(t.name),
                     "yaxis": "y", **common,
                     "hovertemplate": f"{_e(t.name)} t=%{{x}} s: %{{y}} sent<extra></extra>"})
        data.append({"type": "scatter", "mode": "lines", "x": x, "y": ttft, "showlegend": False,
                     "yaxis": "y2", "connectgaps": False, **common,
                     "hovertemplate": f"{_e(t.name)} t=%{{x}} s: TTFT p95 %{{y:.4g}} ms"
                                      "<extra></extra>"})
        data.append({"type": "bar", "x": x, "y": errors, "showlegend": False, "yaxis": "y3",
                     "legendgroup": _e(t.name), "marker": {"color": _colour(i)},
                     "hovertemplate": f"{_e(t.name)} t=%{{x}} s: %{{y}} errors<extra></extra>"})
    shapes, notes = _fault_windows(result, origin)
    layout = _layout(title, height=640,
                     xaxis={"title": {"text": "seconds since the first measured send"},
                            "anchor": "y3"},
                     yaxis={"domain": [0.70, 1], "title": {"text": "sent/s"}},
                     yaxis2={"domain": [0.36, 0.64], "title": {"text": "TTFT p95"}},
                     yaxis3={"domain": [0, 0.28], "title": {"text": "errors/s"}},
                     shapes=shapes, annotations=notes)
    note = "warm-up requests excluded; TTFT by send second, errors by completion second"
    if shapes:
        note += ("; shaded: the injected interruption (fault to target back), lighter: until "
                 "the rolling SLO recovered")
    return Chart("chart-timeline", title, {"data": data, "layout": layout}, note)


def _fault_windows(result: RunResult, origin_ns: float
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Shaded spans for each target's interruption, on the timeline's seconds axis."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for t in result.targets:
        i = t.interruption
        if i is None or i.fault_ns is None:
            continue
        x0 = (i.fault_ns - origin_ns) / 1e9
        x1 = (i.ready_ns - origin_ns) / 1e9 if i.ready_ns is not None else x0
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1,
                       "y0": 0, "y1": 1, "fillcolor": "#D55E00", "opacity": 0.18,
                       "line": {"width": 0}, "layer": "below"})
        rec = i.slo_recovered_s
        if rec is not None and x0 + rec > x1:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": x1,
                           "x1": x0 + rec, "y0": 0, "y1": 1, "fillcolor": "#D55E00",
                           "opacity": 0.08, "line": {"width": 0}, "layer": "below"})
        notes.append({"x": x0, "y": 1.0, "xref": "x", "yref": "paper", "showarrow": False,
                      "xanchor": "left", "yanchor": "bottom",
                      "text": _e(f"{t.name}: {i.action} ({i.point_label})"),
                      "font": {"size": 11, "color": "#D55E00"}})
    return shapes, notes


def demand_vs_capacity(result: RunResult, view: CapacityView | None) -> Chart:
    """Hourly demand as a line, each target's provisioned SLO-bounded capacity (replicas x
    max rate under the SLO) as steps: the gap between them is the idle capacity paid for."""
    hours = len(view.hourly_mean_rps) if view and view.hourly_mean_rps else 24
    title = f"Demand vs provisioned capacity over {hours} h"
    if view is None or not view.hourly_mean_rps:
        why = "the study declares no demand profile" if view is None else (
            view.demand_note or "no hourly demand")
        return Chart("chart-capacity", title, None, why)
    mean = list(view.hourly_mean_rps)
    data: list[dict[str, Any]] = [{
        "type": "scatter", "mode": "lines+markers", "x": [h + 0.5 for h in range(hours)],
        "y": mean, "name": "demand (hourly mean)", "line": {"color": "#333", "width": 3},
        "hovertemplate": "hour %{x:.0f}: %{y:.4g} req/s demanded<extra></extra>"}]
    peak = list(view.hourly_peak_rps or ())
    if len(peak) == hours and any(p > m * (1 + 1e-9) for p, m in zip(peak, mean, strict=True)):
        data.append({"type": "scatter", "mode": "lines", "x": [h + 0.5 for h in range(hours)],
                     "y": peak, "name": "demand (hour's peak: bursts)",
                     "line": {"color": "#333", "dash": "dot"},
                     "hovertemplate": "hour %{x:.0f}: peak %{y:.4g} req/s<extra></extra>"})
    index = {t.name: i for i, t in enumerate(result.targets)}
    drawn = 0
    for name, c in view.targets.items():
        cap = c.capacity_rps if c is not None else None
        if c is None or c.replicas is None or cap is None or len(cap) != hours:
            continue
        drawn += 1
        # A step per hour needs the last hour's value repeated at its end.
        data.append({"type": "scatter", "mode": "lines", "x": list(range(hours + 1)),
                     "y": [*cap, cap[-1]], "name": _e(f"{name} capacity"),
                     "line": {"shape": "hv", "color": _colour(index.get(name, 0))},
                     "customdata": [*c.replicas, c.replicas[-1]],
                     "hovertemplate": f"{_e(name)} hour %{{x}}: %{{customdata}} replica(s), "
                                      "%{y:.4g} req/s within the SLO<extra></extra>"})
    layout = _layout(title, xaxis={"title": {"text": "hour of the planning horizon"},
                                   "range": [0, hours], "dtick": 24 if hours > 48 else 2},
                     yaxis={"title": {"text": "req/s"}, "rangemode": "tozero"})
    note = ("steps: replicas × the max rate one replica serves within the SLO; the area "
            "between a step and the demand is capacity paid for and idle")
    if drawn < len(view.targets):
        note += f"; {len(view.targets) - drawn} target(s) without a fleet plan are not drawn"
    return Chart("chart-capacity", title, {"data": data, "layout": layout}, note)


_CDF_STEPS = 201  # probabilities the CDF is drawn at: exact quantiles, not a resampling


def latency_cdf(result: RunResult, records: pa.Table | None) -> Chart:
    """The distribution of TTFT and E2E at every point: one empirical CDF per target and
    point (each target's first point shown, the others one click away in the legend)."""
    title = "Latency distributions: TTFT and E2E (CDF per load point)"
    if records is None or records.num_rows == 0:
        return Chart("chart-cdf", title, None, "no records.parquet for this run")
    d = latencies(records)
    targets = records["target"].to_numpy(zero_copy_only=False)
    index = records["load_index"].to_numpy(zero_copy_only=False)
    probs = np.linspace(0.0, 1.0, _CDF_STEPS)
    data: list[dict[str, Any]] = []
    for i, t in enumerate(result.targets):
        for j, p in enumerate(t.points):
            sel = d.ok & d.measured & (targets == t.name) & (index == p.index)
            for axis, values, metric in (("", d.ttft_ms, "TTFT"), ("2", d.e2e_ms, "E2E")):
                v = values[sel]
                v = v[~np.isnan(v)]
                if v.size < 2:
                    continue
                q = np.quantile(v, probs)
                name = f"{t.name} · {p.label}"
                data.append({
                    "type": "scatter", "mode": "lines", "x": q.tolist(),
                    "y": probs.tolist(), "name": _e(name), "legendgroup": _e(name),
                    "showlegend": axis == "", "xaxis": f"x{axis}", "yaxis": f"y{axis}",
                    "visible": True if j == 0 else "legendonly",
                    "line": {"color": _colour(i), "dash": "solid" if j == 0 else "dot"},
                    "hovertemplate": f"{_e(name)}: {metric} %{{x:.4g}} ms at p%{{y:.0%}}"
                                     "<extra></extra>"})
    if not data:
        return Chart("chart-cdf", title, None, "no point has two completed requests")
    layout = _layout(title, height=480,
                     xaxis={"domain": [0, 0.47], "title": {"text": "TTFT (ms)"}},
                     xaxis2={"domain": [0.53, 1], "title": {"text": "E2E (ms)"},
                             "anchor": "y2"},
                     yaxis={"title": {"text": "fraction of requests"}, "range": [0, 1]},
                     yaxis2={"anchor": "x2", "range": [0, 1]})
    note = ("completed, measured requests (no warm-up); each line is the exact quantiles of "
            "one point, so a percentile reads off where it crosses that height")
    return Chart("chart-cdf", title, {"data": data, "layout": layout}, note)


def all_charts(result: RunResult, econ: dict[str, TargetEcon], run: RunEcon,
               records: pa.Table | None) -> list[Chart]:
    """Every chart of the HTML report. ``econ`` is accepted for the caller's convenience; the
    cost chart reads the operating point from ``result.verdict`` and the bill from the
    result itself."""
    del econ
    return [latency_vs_throughput(result), pareto(result), cost_stack(result),
            tornado(run), accuracy(result), timeline(result, records),
            latency_cdf(result, records)]
