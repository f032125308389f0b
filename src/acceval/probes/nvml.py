"""NVIDIA GPUs through NVML (``nvidia-ml-py``, imported as ``pynvml``; the ``[nvml]`` extra).

Energy comes from ``nvmlDeviceGetTotalEnergyConsumption`` (mJ since driver load, Volta and
newer), the way Zeus and ML.ENERGY read it; on older GPUs, where it raises, power
(``nvmlDeviceGetPowerUsage``, mW; a 1-s average on Ampere and newer) is integrated instead
and labelled estimated. The counter updates every ~20-100 ms, so windows under ~0.1 s are
unreliable. Boundary: the board (device, L0). Also: memory used (bytes) and utilization (%
of time a kernel ran, not SM occupancy).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from acceval.probes.base import Sample, rel_ns


def _load() -> ModuleType | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


class NvmlProbe:
    """Per GPU: cumulative energy_j since start, power_w, memory_used_bytes, utilization."""

    name = "nvml"

    def __init__(self, devices: Sequence[int] | None = None) -> None:
        self.devices = None if devices is None else list(devices)
        self._nv: ModuleType | None = None
        self._handles: list[tuple[int, Any]] = []
        self._e0_mj: dict[int, int | None] = {}
        self._integrated_j: dict[int, float] = {}
        self._last: dict[int, tuple[int, float]] = {}
        self._t0_ns = 0

    def available(self) -> tuple[bool, str]:
        nv = _load()
        if nv is None:
            return False, "pynvml is not installed: pip install 'acceval[nvml]'"
        try:
            nv.nvmlInit()
            try:
                count = int(nv.nvmlDeviceGetCount())
            finally:
                nv.nvmlShutdown()
        except Exception as exc:  # NVMLError and driver faults alike
            return False, f"NVML did not initialise ({exc}); is an NVIDIA driver loaded?"
        if count == 0:
            return False, "NVML sees no GPU"
        missing = [i for i in self.devices or [] if i >= count]
        if missing:
            return False, f"GPU index {missing[0]} not present (NVML sees {count})"
        return True, ""

    def start(self, t0_ns: int) -> None:
        nv = _load()
        assert nv is not None, "start() after available()"
        self._nv, self._t0_ns = nv, t0_ns
        nv.nvmlInit()
        idx = self.devices if self.devices is not None else range(nv.nvmlDeviceGetCount())
        self._handles = [(i, nv.nvmlDeviceGetHandleByIndex(i)) for i in idx]
        for i, h in self._handles:
            try:
                self._e0_mj[i] = int(nv.nvmlDeviceGetTotalEnergyConsumption(h))
            except nv.NVMLError:
                self._e0_mj[i] = None          # pre-Volta: integrate power instead
                self._integrated_j[i] = 0.0

    def _device(self, i: int, h: Any, t: int) -> list[Sample]:
        nv = self._nv
        assert nv is not None
        dev = f"gpu{i}"
        out: list[Sample] = []
        power_w: float | None = None
        try:
            power_w = nv.nvmlDeviceGetPowerUsage(h) / 1000.0
            out.append(Sample(t, self.name, "power_w", power_w, "W", dev))
        except nv.NVMLError:
            pass
        e0 = self._e0_mj[i]
        if e0 is not None:
            mj = int(nv.nvmlDeviceGetTotalEnergyConsumption(h))
            out.append(Sample(t, self.name, "energy_j", (mj - e0) / 1000.0, "J", dev))
        elif power_w is not None:
            prev = self._last.get(i)
            if prev is not None:
                self._integrated_j[i] += (prev[1] + power_w) / 2 * (t - prev[0]) / 1e9
                out.append(Sample(t, self.name, "energy_j", self._integrated_j[i], "J", dev,
                                  estimated=True))
            self._last[i] = (t, power_w)
        try:
            mem = nv.nvmlDeviceGetMemoryInfo(h)
            out.append(Sample(t, self.name, "memory_used_bytes", float(mem.used), "bytes", dev))
        except nv.NVMLError:
            pass
        try:
            u = nv.nvmlDeviceGetUtilizationRates(h)
            out.append(Sample(t, self.name, "gpu_util_pct", float(u.gpu), "%", dev))
            out.append(Sample(t, self.name, "mem_util_pct", float(u.memory), "%", dev))
        except nv.NVMLError:
            pass
        return out

    def sample(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        return [s for i, h in self._handles for s in self._device(i, h, t)]

    def stop(self) -> list[Sample]:
        out = self.sample()
        if self._nv is not None:
            self._nv.nvmlShutdown()
        self._handles = []
        return out
