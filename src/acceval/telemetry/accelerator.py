"""A target's accelerator section from its exporter's scrapes (DCGM, neuron-monitor): per
load point and device, utilization by mean and p95, memory and power by mean and max,
throttling and errors; then across the target's devices, the way the hardware is billed
(every device the target holds counts, an idle one too). Pure: reads samples.parquet."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from acceval.results.runlog import TelemetryLog
from acceval.results.section import Section


class DeviceStat(Section):
    """One accelerator device (a GPU, a NeuronCore) over one load point, from its exporter's
    scrapes inside the point: utilization by mean and p95, memory and power by mean and
    max, the share of scrapes its clocks were throttled, the last XID error seen."""

    device: str
    scrapes: int = 0
    util_mean: float | None = None        # 0-1
    util_p95: float | None = None
    memory_used_bytes_mean: float | None = None
    memory_used_bytes_max: float | None = None
    power_w_mean: float | None = None
    power_w_max: float | None = None
    throttled_share: float | None = None  # 0-1 of the scrapes
    xid_last_max: float | None = None     # DCGM: the highest "last XID" code seen (0: none)


class AcceleratorPoint(Section):
    """The target's devices over one load point, reduced the way the hardware is billed:
    every device counts, idle ones too. ``util_*`` are over scrapes of the mean across
    devices; memory and power add the devices up at each scrape."""

    index: int
    label: str
    scrapes: int = 0
    devices: list[DeviceStat] = Field(default_factory=list)
    util_mean: float | None = None
    util_p95: float | None = None
    memory_used_bytes_mean: float | None = None
    memory_used_bytes_max: float | None = None
    power_w_total_mean: float | None = None
    power_w_total_max: float | None = None
    throttled_share: float | None = None   # scrapes in which any device was throttled
    execution_errors: float | None = None  # neuron-monitor: errors during the point
    ecc_events: float | None = None        # neuron-monitor: ECC events during the point


class AcceleratorResult(Section):
    """What the target's accelerator exporter (DCGM, neuron-monitor) said, per load point."""

    source: str | None = None      # dcgm, neuron
    url: str
    interval_s: float | None = None
    scrapes: int = 0
    devices: list[str] = Field(default_factory=list)
    publishes: list[str] = Field(default_factory=list)  # canonical metrics it published
    points: list[AcceleratorPoint] = Field(default_factory=list)
    note: str | None = None



class Window(Protocol):
    """What the section needs of a load point (a PointResult is one)."""

    @property
    def index(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def started_ns(self) -> int: ...
    @property
    def ended_ns(self) -> int: ...


PREFIX = "telemetry."
#: The probes whose readings can carry accelerator metrics: the exporter scraped beside the
#: server (``telemetry.exporter_url``), or the server URL itself pointed at an exporter.
PROBES = ("exporter", "metrics")
DEVICE_GAUGES = ("accelerator_util", "device_memory_used_bytes", "power_w", "throttled",
                 "xid_last")
COUNTERS = ("execution_errors", "ecc_events")
ACCELERATOR_METRICS = frozenset((*DEVICE_GAUGES, *COUNTERS))
MIN_SCRAPES = 2   # as for the server's own gauges: fewer say when they fell, not what ran

Series = dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]


def _series(samples: pa.Table, probe: str, lo: int, hi: int) -> Series:
    """(metric, device) -> (t_ns, value) sorted, for the probe's accelerator readings."""
    sel = samples.filter(pc.and_(pc.equal(samples["probe"], probe),
                                 pc.starts_with(samples["metric"], PREFIX)))
    out: Series = {}
    if sel.num_rows == 0:
        return out
    t = np.asarray(sel["t_ns"].to_numpy(zero_copy_only=False), dtype=np.int64)
    metric = np.asarray(sel["metric"].to_numpy(zero_copy_only=False), dtype=object)
    device = np.asarray(sel["device"].to_numpy(zero_copy_only=False), dtype=object)
    value = np.asarray(sel["value"].to_numpy(zero_copy_only=False), dtype=np.float64)
    keep = (t >= lo) & (t <= hi)
    for key in set(zip(metric[keep].tolist(), device[keep].tolist(), strict=True)):
        name = str(key[0]).removeprefix(PREFIX)
        if name not in ACCELERATOR_METRICS:
            continue
        m = keep & (metric == key[0]) & (device == key[1])
        order = np.argsort(t[m], kind="stable")
        out[(name, str(key[1]))] = (t[m][order], value[m][order])
    return out


def _natural(device: str) -> tuple[str, int]:
    m = re.match(r"(.*?)(\d+)$", device)
    return (m.group(1), int(m.group(2))) if m else (device, -1)


def _inside(tv: tuple[np.ndarray, np.ndarray] | None, start: int, end: int
            ) -> tuple[np.ndarray, np.ndarray]:
    if tv is None:
        return np.empty(0, np.int64), np.empty(0)
    t, v = tv
    keep = (t >= start) & (t <= end)
    return t[keep], v[keep]


def _mean_p95(v: np.ndarray) -> tuple[float | None, float | None]:
    if v.size < MIN_SCRAPES:
        return None, None
    return float(v.mean()), float(np.percentile(v, 95))


def _mean_max(v: np.ndarray) -> tuple[float | None, float | None]:
    if v.size < MIN_SCRAPES:
        return None, None
    return float(v.mean()), float(v.max())


def _device(series: Series, device: str, start: int, end: int) -> DeviceStat:
    def vals(name: str) -> np.ndarray:
        return _inside(series.get((name, device)), start, end)[1]

    util_mean, util_p95 = _mean_p95(vals("accelerator_util"))
    mem_mean, mem_max = _mean_max(vals("device_memory_used_bytes"))
    pw_mean, pw_max = _mean_max(vals("power_w"))
    thr, xid = vals("throttled"), vals("xid_last")
    scrapes = max((vals(n).size for n in DEVICE_GAUGES), default=0)
    return DeviceStat(
        device=device, scrapes=scrapes, util_mean=util_mean, util_p95=util_p95,
        memory_used_bytes_mean=mem_mean, memory_used_bytes_max=mem_max,
        power_w_mean=pw_mean, power_w_max=pw_max,
        throttled_share=float(thr.mean()) if thr.size >= MIN_SCRAPES else None,
        xid_last_max=float(xid.max()) if xid.size else None)


def _per_scrape(series: Series, name: str, devices: list[str], start: int, end: int
                ) -> dict[int, list[float]]:
    """Scrape time -> the devices' values at that scrape (one scrape stamps all alike)."""
    at: dict[int, list[float]] = defaultdict(list)
    for d in devices:
        t, v = _inside(series.get((name, d)), start, end)
        for a, b in zip(t.tolist(), v.tolist(), strict=True):
            at[int(a)].append(float(b))
    return at


def _increase(tv: tuple[np.ndarray, np.ndarray] | None, start: int, end: int) -> float | None:
    """A counter's growth over the point: last reading at or before the end minus the last
    at or before the start (None without a reading before the point began)."""
    if tv is None:
        return None
    t, v = tv
    a = int(np.searchsorted(t, start, side="right")) - 1
    b = int(np.searchsorted(t, end, side="right")) - 1
    if a < 0 or b < a:
        return None
    grew = float(v[b] - v[a])
    return grew if grew >= 0 else None  # the exporter restarted: its total began again


def _across(series: Series, devices: list[str], p: Window) -> dict[str, float | None]:
    s, e = p.started_ns, p.ended_ns
    util = np.array([np.mean(v) for v in
                     _per_scrape(series, "accelerator_util", devices, s, e).values()])
    mem_dev = _per_scrape(series, "device_memory_used_bytes", devices, s, e)
    mem = (np.array([sum(v) for v in mem_dev.values()]) if mem_dev
           else _inside(series.get(("device_memory_used_bytes", "")), s, e)[1])
    power = np.array([sum(v) for v in _per_scrape(series, "power_w", devices, s, e).values()])
    thr = np.array([max(v) for v in _per_scrape(series, "throttled", devices, s, e).values()])
    u_mean, u_p95 = _mean_p95(util)
    m_mean, m_max = _mean_max(mem)
    p_mean, p_max = _mean_max(power)
    return {"util_mean": u_mean, "util_p95": u_p95, "memory_used_bytes_mean": m_mean,
            "memory_used_bytes_max": m_max, "power_w_total_mean": p_mean,
            "power_w_total_max": p_max,
            "throttled_share": float(thr.mean()) if thr.size >= MIN_SCRAPES else None,
            "execution_errors": _increase(series.get(("execution_errors", "")), s, e),
            "ecc_events": _increase(series.get(("ecc_events", "")), s, e)}


def _source(samples: pa.Table, logs: Sequence[tuple[TelemetryLog | None, str]]
            ) -> tuple[TelemetryLog, Series] | None:
    """The first log (exporter before the server's own URL) whose scrapes carry accelerator
    readings, with those readings."""
    for log, probe in logs:
        if log is None or log.first_ns is None:
            continue
        series = _series(samples, probe, log.first_ns, log.last_ns or log.first_ns)
        if series:
            return log, series
    return None


def accelerator_section(telemetry: TelemetryLog | None, exporter: TelemetryLog | None,
                        points: Sequence[Window], samples: pa.Table | None
                        ) -> AcceleratorResult | None:
    """The section for one target (None: nothing it scraped was an accelerator exporter)."""
    found = (_source(samples, ((exporter, "exporter"), (telemetry, "metrics")))
             if samples is not None and samples.num_rows else None)
    if found is None:
        if exporter is None:
            return None
        return AcceleratorResult(url=exporter.url, source=exporter.source,
                                 interval_s=exporter.interval_s, scrapes=exporter.scrapes,
                                 note=exporter.note or "the exporter published no "
                                 "utilization, memory, power or error series acceval maps")
    log, series = found
    devices = sorted({d for (_, d) in series if d}, key=_natural)
    out = AcceleratorResult(url=log.url, source=log.source, interval_s=log.interval_s,
                            scrapes=log.scrapes, devices=devices, note=log.note,
                            publishes=sorted({m for (m, _) in series}))
    for p in points:
        stats = [_device(series, d, p.started_ns, p.ended_ns) for d in devices]
        times = {int(a) for tv in series.values()
                 for a in _inside(tv, p.started_ns, p.ended_ns)[0].tolist()}
        out.points.append(AcceleratorPoint(index=p.index, label=p.label, scrapes=len(times),
                                           devices=stats, **_across(series, devices, p)))
    return out


__all__ = ["ACCELERATOR_METRICS", "AcceleratorPoint", "AcceleratorResult", "DeviceStat",
           "accelerator_section"]
