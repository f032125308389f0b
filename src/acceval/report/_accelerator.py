"""The accelerator part of the reports: what each target's exporter (DCGM, neuron-monitor)
said of its devices, per load point, across the devices and per device
(result.targets[*].accelerator)."""

from __future__ import annotations

from acceval.report._fmt import NOT_MEASURED, num
from acceval.run_result import RunResult
from acceval.telemetry.accelerator import AcceleratorPoint, AcceleratorResult, DeviceStat

HEAD = ["target", "load", "scrapes", "devices", "util mean", "util p95", "memory used GiB",
        "power total W (mean / max)", "throttled", "errors"]
DEVICE_HEAD = ["target", "load", "device", "util mean", "util p95", "memory used GiB",
               "power W (mean / max)", "throttled", "last XID"]
GIB = 2.0**30


def _share(v: float | None) -> str:
    return NOT_MEASURED if v is None else f"{v:.1%}"


def _gib(v: float | None) -> str:
    return NOT_MEASURED if v is None else f"{v / GIB:.2f}"


def _pair(a: float | None, b: float | None) -> str:
    return NOT_MEASURED if a is None else f"{num(a, 1)} / {num(b, 1)}"


def _errors(p: AcceleratorPoint) -> str:
    parts = [f"{num(v, 0)} {what}" for v, what in ((p.execution_errors, "execution"),
                                                     (p.ecc_events, "ECC")) if v is not None]
    return ", ".join(parts) or NOT_MEASURED


def _power(acc: AcceleratorResult, a: float | None, b: float | None) -> str:
    if a is None and acc.source == "neuron":
        return "not published (neuron-monitor has no power)"
    return _pair(a, b)


def rows(result: RunResult) -> list[list[str]]:
    out = []
    for t in result.targets:
        acc = t.accelerator
        if acc is None:
            continue
        for p in acc.points:
            out.append([t.name, p.label, str(p.scrapes), str(len(p.devices)),
                        _share(p.util_mean), _share(p.util_p95),
                        _gib(p.memory_used_bytes_mean),
                        _power(acc, p.power_w_total_mean, p.power_w_total_max),
                        _share(p.throttled_share), _errors(p)])
    return out


def _device_row(name: str, label: str, acc: AcceleratorResult, d: DeviceStat) -> list[str]:
    return [name, label, d.device, _share(d.util_mean), _share(d.util_p95),
            _gib(d.memory_used_bytes_mean), _power(acc, d.power_w_mean, d.power_w_max),
            _share(d.throttled_share), NOT_MEASURED if d.xid_last_max is None
            else num(d.xid_last_max, 0)]


def device_rows(result: RunResult) -> list[list[str]]:
    return [_device_row(t.name, p.label, t.accelerator, d) for t in result.targets
            if t.accelerator is not None for p in t.accelerator.points for d in p.devices]


def notes(result: RunResult) -> list[str]:
    """Where each target's device readings came from, and how often they were read."""
    out = []
    for t in result.targets:
        acc = t.accelerator
        if acc is None:
            continue
        every = f"every {acc.interval_s:g} s" if acc.interval_s else "interval not recorded"
        line = (f"{t.name}: {acc.source or 'unknown exporter'} at {acc.url}, {every}, "
                f"{acc.scrapes} scrape(s), devices: {', '.join(acc.devices) or 'none'}")
        if acc.publishes:
            line += f"; publishes {', '.join(acc.publishes)}"
        if acc.note:
            line += f": {acc.note}"
        out.append(line)
    return out


def intro() -> str:
    return ("What each target's accelerator exporter said of its devices while it was "
            "measured (DCGM for NVIDIA GPUs, neuron-monitor for NeuronCores; docs/telemetry.md). "
            "Across devices the way the hardware is billed: utilization is the mean over the "
            "target's devices at each scrape (idle devices count), then its mean and 95th "
            "percentile over the point's scrapes; memory and power add the devices up. A "
            "point with fewer than two scrapes says \"not measured\".")


def has_any(result: RunResult) -> bool:
    return any(t.accelerator is not None for t in result.targets)


__all__ = ["DEVICE_HEAD", "HEAD", "device_rows", "has_any", "intro", "notes", "rows"]
