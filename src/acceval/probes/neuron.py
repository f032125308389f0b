"""AWS Trainium/Inferentia through the Neuron driver's sysfs and ``neuron-monitor``.

Power: ``/sys/devices/virtual/neuron_device/neuron<N>/stats/power/utilization`` holds
``"<status>,<timestamp>,<min_power>,<max_power>,<avg_power>"`` in **percent of max power**,
refreshed every minute. AWS publishes no max-power figure, so watts (and energy) exist only
when the study declares ``device_max_power_w``; they are labelled estimated. Driver 2.31
moved several nodes, so the files are found by searching, not by a fixed path.

``neuron-monitor`` streams one JSON report per period with NeuronCore utilization, FLOP/s,
memory and execution stats, and **no power field**; :func:`parse_monitor_report` turns a
report into samples.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acceval.probes.base import Sample, rel_ns

NEURON_SYSFS = Path("/sys/devices/virtual/neuron_device")
VALID = "POWER_STATUS_VALID"


@dataclass(frozen=True, slots=True)
class PowerReading:
    status: str
    timestamp: str
    min_pct: float
    max_pct: float
    avg_pct: float


def parse_power_utilization(text: str) -> PowerReading | None:
    """Parse the sysfs power file; None unless the status is POWER_STATUS_VALID."""
    parts = [p.strip() for p in text.strip().split(",")]
    if len(parts) != 5 or parts[0] != VALID:
        return None
    try:
        lo, hi, avg = (float(x) for x in parts[2:])
    except ValueError:
        return None
    return PowerReading(parts[0], parts[1], lo, hi, avg)


class NeuronSysfsProbe:
    """Average power per Neuron device in % of max; watts and energy only with a declared max."""

    name = "neuron"

    def __init__(self, root: Path = NEURON_SYSFS, max_power_w: float | None = None,
                 devices: list[int] | None = None) -> None:
        self.root = Path(root)
        self.max_power_w = max_power_w
        self.devices = devices
        self._files: dict[str, Path] = {}
        self._energy_j: dict[str, float] = {}
        self._last: dict[str, tuple[int, float]] = {}
        self._t0_ns = 0

    def _find(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for dev in sorted(self.root.glob("neuron[0-9]*")):
            if self.devices is not None and int(dev.name[6:]) not in self.devices:
                continue
            hits = sorted(dev.glob("**/power/utilization"))
            if hits:
                found[dev.name] = hits[0]
        return found

    def available(self) -> tuple[bool, str]:
        try:
            files = self._find()
        except OSError as exc:
            return False, f"cannot search {self.root}: {exc}"
        if not files:
            return False, f"no Neuron power files under {self.root} (no Neuron driver?)"
        return True, ""

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        self._files = self._find()
        self._energy_j = {d: 0.0 for d in self._files}

    def sample(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        out: list[Sample] = []
        for dev, path in self._files.items():
            try:
                reading = parse_power_utilization(path.read_text())
            except OSError:
                reading = None
            if reading is None:
                continue                     # NO_DATA / INVALID: no sample, never 0
            out.append(Sample(t, self.name, "power_pct_of_max", reading.avg_pct, "%", dev))
            if self.max_power_w is None:
                continue
            watts = reading.avg_pct / 100.0 * self.max_power_w
            out.append(Sample(t, self.name, "power_w", watts, "W", dev, estimated=True))
            prev = self._last.get(dev)
            if prev is not None:
                self._energy_j[dev] += (prev[1] + watts) / 2 * (t - prev[0]) / 1e9
                out.append(Sample(t, self.name, "energy_j", self._energy_j[dev], "J", dev,
                                  estimated=True))
            self._last[dev] = (t, watts)
        return out

    def stop(self) -> list[Sample]:
        return self.sample()


def parse_monitor_report(report: dict[str, Any], t_ns: int, probe: str = "neuron-monitor"
                         ) -> list[Sample]:
    """Samples from one neuron-monitor JSON report (format: docs/energy.md)."""
    out: list[Sample] = []
    for rt in report.get("neuron_runtime_data") or []:
        tag = str(rt.get("neuron_runtime_tag") or rt.get("pid", ""))
        rep = rt.get("report") or {}
        cores = (rep.get("neuroncore_counters") or {}).get("neuroncores_in_use") or {}
        for idx, c in cores.items():
            dev = f"{tag}/nc{idx}"
            if c.get("neuroncore_utilization") is not None:
                out.append(Sample(t_ns, probe, "neuroncore_util_pct",
                                  float(c["neuroncore_utilization"]), "%", dev))
            if c.get("flops") is not None:
                out.append(Sample(t_ns, probe, "flops", float(c["flops"]), "FLOP/s", dev))
        used = (rep.get("memory_used") or {}).get("neuron_runtime_used_bytes") or {}
        for where in ("host", "neuron_device"):
            if used.get(where) is not None:
                out.append(Sample(t_ns, probe, f"memory_used_bytes_{where}",
                                  float(used[where]), "bytes", tag))
        summary = (rep.get("execution_stats") or {}).get("execution_summary") or {}
        for key in ("completed", "completed_with_err", "timed_out", "failed_to_queue"):
            if summary.get(key) is not None:
                out.append(Sample(t_ns, probe, f"executions_{key}", float(summary[key]),
                                  "count", tag))
        lat = (rep.get("execution_stats") or {}).get("latency_stats") or {}
        for kind in ("total_latency", "device_latency"):
            p50 = (lat.get(kind) or {}).get("p50")
            if p50 is not None:
                out.append(Sample(t_ns, probe, f"{kind}_p50_s", float(p50), "s", tag))
    sysdata = report.get("system_data") or {}
    mem = sysdata.get("memory_info") or {}
    if mem.get("memory_used_bytes") is not None:
        out.append(Sample(t_ns, probe, "host_memory_used_bytes",
                          float(mem["memory_used_bytes"]), "bytes", "host"))
    return out


class NeuronMonitorProbe:
    """Runs ``neuron-monitor`` (or tails a JSON-lines file it writes) and parses each report."""

    name = "neuron-monitor"

    def __init__(self, command: tuple[str, ...] = ("neuron-monitor",),
                 source: Path | None = None) -> None:
        self.command = command
        self.source = source
        self._proc: subprocess.Popen[str] | None = None
        self._lines: deque[str] = deque()
        self._reader: threading.Thread | None = None
        self._offset = 0
        self._t0_ns = 0

    def available(self) -> tuple[bool, str]:
        if self.source is not None:
            return (True, "") if self.source.exists() else (False, f"{self.source} not found")
        if shutil.which(self.command[0]) is None:
            return False, f"{self.command[0]} is not on PATH (install aws-neuronx-tools)"
        return True, ""

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        if self.source is not None:
            return
        self._proc = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.append(line)

    def _pending(self) -> list[str]:
        if self.source is None:
            got = []
            while self._lines:
                got.append(self._lines.popleft())
            return got
        with self.source.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]     # leave a half-written line for later
        self._offset += len(complete)
        return complete.decode("utf-8", errors="replace").splitlines()

    def sample(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        out: list[Sample] = []
        for line in self._pending():
            if not line.strip():
                continue
            try:
                report = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(report, dict):
                out.extend(parse_monitor_report(report, t, self.name))
        return out

    def stop(self) -> list[Sample]:
        out = self.sample()
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=5)
            self._proc = None
        return out
