"""A target's telemetry section from the scrapes stored in samples.parquet: per load point,
gauges by mean and max and counters by rate, and the gauges' series for the timeline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from acceval.results.runlog import TelemetryLog
from acceval.results.section import PointResult, Section
from acceval.telemetry.latency import ServerLatency, server_latency
from acceval.telemetry.names import CANONICAL
from acceval.telemetry.server_families import rank_unmapped


class TelemetryStat(Section):
    """One canonical metric over one load point: gauges by mean and max of the scrapes in
    the point's window, counters by their rate (difference over the window's seconds)."""

    mean: float | None = None
    max: float | None = None
    rate_per_s: float | None = None
    scrapes: int = 0


class TelemetryPoint(Section):
    index: int
    label: str
    metrics: dict[str, TelemetryStat] = Field(default_factory=dict)
    # The server's own generation tokens/s against what the client counted at this point
    # (1.0: they agree): a cross-check of the token counts.
    server_over_client_tokens: float | None = None
    # The server's own latency means beside the client's (vLLM, SGLang, TGI histograms).
    server_latency: ServerLatency | None = None


class TelemetryResult(Section):
    url: str
    source: str | None = None           # vllm, sglang, tgi, llamacpp, acceval, ...
    scrapes: int = 0
    failures: int = 0
    note: str | None = None             # why nothing was scraped, or the last failure
    unmapped: list[str] = Field(default_factory=list)  # families it published and we do not map
    points: list[TelemetryPoint] = Field(default_factory=list)
    # Gauges over the run, for the timeline: metric -> [[t_ns, value], ...] (run-relative,
    # at most a few hundred points each).
    series: dict[str, list[tuple[int, float]]] = Field(default_factory=dict)



#: Where scraped readings live in samples.parquet (see acceval.probes.prometheus).
PROBE = "metrics"
PREFIX = "telemetry."
MAX_SERIES_POINTS = 400


def _series(samples: pa.Table, lo: int, hi: int) -> dict[tuple[str, str], tuple[np.ndarray,
                                                                              np.ndarray]]:
    """(metric, device) -> (t_ns, value), sorted, for the readings within [lo, hi]."""
    sel = samples.filter(pc.and_(pc.equal(samples["probe"], PROBE),
                                 pc.starts_with(samples["metric"], PREFIX)))
    if sel.num_rows == 0:
        return {}
    t = np.asarray(sel["t_ns"].to_numpy(zero_copy_only=False), dtype=np.int64)
    keep = (t >= lo) & (t <= hi)
    out: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    metric = np.asarray(sel["metric"].to_numpy(zero_copy_only=False), dtype=object)[keep]
    device = np.asarray(sel["device"].to_numpy(zero_copy_only=False), dtype=object)[keep]
    value = np.asarray(sel["value"].to_numpy(zero_copy_only=False), dtype=np.float64)[keep]
    t = t[keep]
    for key in sorted(set(zip(metric.tolist(), device.tolist(), strict=True))):
        m = (metric == key[0]) & (device == key[1])
        order = np.argsort(t[m], kind="stable")
        out[(str(key[0]).removeprefix(PREFIX), str(key[1]))] = (t[m][order], value[m][order])
    return out


#: A point's gauges need this many scrapes inside it to be summarised, and its counters'
#: readings must span this share of its duration: fewer say more about when the scrapes
#: fell than about the server. A quarter: a 0.7-s point scraped every 0.25 s (make
#: test-llamacpp's) has two readings 0.25 s apart inside it, and their rate is the point's.
MIN_SCRAPES = 2
MIN_SPAN = 0.25


def _stat(name: str, t: np.ndarray, v: np.ndarray, start: int, end: int,
          quiet_from: int | None = None) -> TelemetryStat:
    """``quiet_from``: since when nothing of this run loaded the server before ``start`` (the
    end of the point before; None before the first point)."""
    inside = (t >= start) & (t <= end)
    n = int(inside.sum())
    if CANONICAL[name].kind == "gauge":
        if n < MIN_SCRAPES:
            return TelemetryStat(scrapes=n)
        return TelemetryStat(mean=float(v[inside].mean()), max=float(v[inside].max()), scrapes=n)
    # A counter: its increase from the last reading at or before the start, where nothing
    # loaded the server between that reading and the start (so all of the increase came
    # after the start: over the time from the start), else from the first reading inside
    # the point (over the time from that reading); to the last reading at or before the end.
    # Points run back to back, so the reading before a point usually falls in the point
    # before it, whose tail it would carry in: in the demo, a 50 req/s point read 1.91x the
    # client's tokens, half of them the 834 req/s point's last quarter-second.
    a = int(np.searchsorted(t, start, side="right")) - 1
    if a < 0 or (quiet_from is not None and t[a] < quiet_from):
        a = int(np.searchsorted(t, start, side="left"))
    b = int(np.searchsorted(t, end, side="right")) - 1
    if a >= t.size or b <= a:
        return TelemetryStat(scrapes=n)
    dt = (t[b] - max(int(t[a]), start)) / 1e9
    increase = float(v[b] - v[a])
    if dt <= 0 or increase < 0 or dt < MIN_SPAN * (end - start) / 1e9:
        return TelemetryStat(scrapes=n)
    return TelemetryStat(rate_per_s=increase / dt, scrapes=n)


def _downsample(t: np.ndarray, v: np.ndarray) -> list[tuple[int, float]]:
    step = max(1, int(np.ceil(t.size / MAX_SERIES_POINTS)))
    return [(int(a), float(b)) for a, b in zip(t[::step], v[::step], strict=True)]


def _llamacpp_queries(stats: dict[str, TelemetryStat]) -> None:
    """llama.cpp publishes no prefix-cache lookups: its ``prompt_tokens`` counts the prompt
    tokens it computed, not those a slot's cache held, so its lookups are the two together
    (recorded live: six 8-token prompts gave 38 computed and 10 cached)."""
    hits, computed = stats.get("prefix_cache_hits"), stats.get("prompt_tokens")
    if (hits is None or computed is None or hits.rate_per_s is None
            or computed.rate_per_s is None or "prefix_cache_queries" in stats):
        return
    stats["prefix_cache_queries"] = TelemetryStat(
        rate_per_s=hits.rate_per_s + computed.rate_per_s,
        scrapes=min(hits.scrapes, computed.scrapes))


def telemetry_section(log: TelemetryLog | None, points: Sequence[PointResult],
                      samples: pa.Table | None) -> TelemetryResult | None:
    """The section for one target (None: its telemetry was not scraped). Targets run one
    after another, so the target's readings are those between its first and last scrape."""
    if log is None:
        return None
    out = TelemetryResult(url=log.url, source=log.source, scrapes=log.scrapes,
                          failures=log.failures, note=log.note,
                          unmapped=rank_unmapped(log.unmapped))
    if samples is None or samples.num_rows == 0 or not points or log.first_ns is None:
        return out
    # Only this target's scrapes: the previous target's server published the same names.
    series = _series(samples, log.first_ns, log.last_ns or log.first_ns)
    whole = {k: v for k, v in series.items() if k[1] == ""}  # per-device series: not summed here
    for p in points:
        # Since when the server was quiet before the point: the end of the points before it
        # (before the first point, the target's readings are its own, before any load).
        quiet_from = max((q.ended_ns for q in points if q.started_ns < p.started_ns),
                         default=None)
        stats = {name: _stat(name, t, v, p.started_ns, p.ended_ns, quiet_from)
                 for (name, _), (t, v) in whole.items()}
        stats = {k: s for k, s in stats.items() if s.scrapes or s.rate_per_s is not None}
        if log.source == "llamacpp":
            _llamacpp_queries(stats)
        gen = stats.get("generation_tokens")
        client = p.summary.output_token_throughput_tps
        ratio = (gen.rate_per_s / client if gen is not None and gen.rate_per_s is not None
                 and client else None)
        out.points.append(TelemetryPoint(index=p.index, label=p.label, metrics=stats,
                                         server_over_client_tokens=ratio,
                                         server_latency=server_latency(stats, p.summary)))
    out.series = {f"{name}{'@' + dev if dev else ''}": _downsample(t, v)
                  for (name, dev), (t, v) in sorted(series.items())
                  if CANONICAL[name].kind == "gauge"}
    return out


__all__ = ["telemetry_section"]
