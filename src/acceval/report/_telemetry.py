"""The server-telemetry part of the reports: what each target's own /metrics said, per load
point and over the run (result.targets[*].telemetry)."""

from __future__ import annotations

import html
from typing import Any

from acceval.report._fmt import NOT_MEASURED, num
from acceval.run_result import RunResult
from acceval.telemetry.summary import TelemetryPoint

HEAD = ["target", "load", "scrapes", "running (mean)", "waiting (mean / max)", "batch (mean)",
        "KV cache used", "prefix-cache hits", "prompt cached (usage)", "server tok/s",
        "client tok/s", "server / client"]

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")


def _mean(p: TelemetryPoint, name: str, digits: int = 1) -> str:
    s = p.metrics.get(name)
    return num(s.mean, digits) if s is not None and s.mean is not None else NOT_MEASURED


def _share(v: float | None) -> str:
    return NOT_MEASURED if v is None else f"{v:.1%}"


def _hits(p: TelemetryPoint) -> str:
    rate = p.metrics.get("prefix_cache_hit_rate")
    if rate is not None and rate.mean is not None:
        return _share(rate.mean)
    hits, queries = p.metrics.get("prefix_cache_hits"), p.metrics.get("prefix_cache_queries")
    if hits and queries and hits.rate_per_s is not None and queries.rate_per_s:
        return _share(hits.rate_per_s / queries.rate_per_s)
    return NOT_MEASURED


def rows(result: RunResult) -> list[list[str]]:
    out = []
    for t in result.targets:
        tel = t.telemetry
        if tel is None:
            continue
        client = {p.index: p.summary.output_token_throughput_tps for p in t.points}
        cached = {p.index: p.summary.cached_prompt_fraction for p in t.points}
        for p in tel.points:
            w = p.metrics.get("waiting")
            waiting = (f"{num(w.mean, 1)} / {num(w.max, 0)}" if w is not None
                       and w.mean is not None else NOT_MEASURED)
            kv = p.metrics.get("kv_cache_usage")
            gen = p.metrics.get("generation_tokens")
            scrapes = max((m.scrapes for m in p.metrics.values()), default=0)
            out.append([
                t.name, p.label, str(scrapes), _mean(p, "running"), waiting,
                _mean(p, "batch_size"),
                _share(kv.mean if kv is not None else None), _hits(p),
                _share(cached.get(p.index)),
                num(gen.rate_per_s, 1) if gen is not None and gen.rate_per_s else NOT_MEASURED,
                num(client.get(p.index), 1) if client.get(p.index) else NOT_MEASURED,
                f"{p.server_over_client_tokens:.2f}" if p.server_over_client_tokens
                else NOT_MEASURED,
            ])
    return out


def notes(result: RunResult) -> list[str]:
    """Where each target's telemetry came from, and what it could not read."""
    out = []
    for t in result.targets:
        tel = t.telemetry
        if tel is None:
            out.append(f"{t.name}: no /metrics scraped (set targets[].telemetry.metrics_url)")
            continue
        line = (f"{t.name}: {tel.url} ({tel.source or 'unknown server'}), "
                f"{tel.scrapes} scrape(s)")
        note = tel.note
        if tel.failures:
            line += f", {tel.failures} failed"
            if note:   # runs before 2026-12-06 counted the failures in the note too
                line += f" ({note.removeprefix(f'{tel.failures} scrape(s) failed, ')})"
            if t.interruption is not None:
                line += "; the injected interruption stopped its server for a while"
        elif note:
            line += f": {note}"
        if tel.unmapped:
            line += (f"; {len(tel.unmapped)} metric famil{'y' if len(tel.unmapped) == 1 else 'ies'}"
                     " it publishes are not mapped (e.g. " + ", ".join(tel.unmapped[:3]) + ")")
        out.append(line)
    return out


def intro() -> str:
    return ("What each server said about itself, scraped from its Prometheus /metrics while "
            "it was measured (docs/telemetry.md): requests running and waiting, the batch, "
            "KV-cache and prefix-cache use, and its own token counter against the tokens the "
            "client counted (1.00: they agree). A point with fewer than two scrapes, or whose "
            "counter readings span less than a quarter of it, says \"not measured\": so few "
            "readings tell more about when they fell than about the server.")


def chart(result: RunResult) -> dict[str, Any] | None:
    """Plotly spec: running (solid) and waiting (dotted) per target over the run."""
    data: list[dict[str, Any]] = []
    starts = [p.started_ns for t in result.targets for p in t.points]
    if not starts:
        return None
    origin = min(starts)
    for i, t in enumerate(result.targets):
        tel = t.telemetry
        if tel is None:
            continue
        colour = PALETTE[i % len(PALETTE)]
        name = html.escape(t.name)
        for metric, dash in (("running", "solid"), ("waiting", "dot")):
            pts = tel.series.get(metric) or []
            if not pts:
                continue
            data.append({
                "type": "scatter", "mode": "lines", "name": f"{name} {metric}",
                "x": [(a - origin) / 1e9 for a, _ in pts], "y": [b for _, b in pts],
                "line": {"color": colour, "dash": dash, "shape": "hv"}, "legendgroup": name,
                "hovertemplate": f"{name} t=%{{x:.1f}} s: %{{y}} {metric}<extra></extra>"})
    if not data:
        return None
    layout = {
        "title": {"text": "Server telemetry: requests running and waiting", "font": {"size": 15}},
        "height": 380, "margin": {"l": 70, "r": 20, "t": 50, "b": 90},
        "paper_bgcolor": "#ffffff", "plot_bgcolor": "#f7f7f9",
        "legend": {"orientation": "h", "y": -0.28}, "hovermode": "closest",
        "xaxis": {"title": {"text": "seconds since the first load point began"}},
        "yaxis": {"title": {"text": "requests"}, "rangemode": "tozero"},
    }
    return {"data": data, "layout": layout}


__all__ = ["HEAD", "chart", "intro", "notes", "rows"]
