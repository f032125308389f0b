"""Process CPU time, turned into an *estimated* energy by a declared watts-per-core figure.

For CPU targets (the local engines, a laptop) this is the only energy signal available
without RAPL. CPU seconds (user + system, including reaped children) are read with psutil
for a list of PIDs; ``energy_j = cpu_s x watts_per_core`` is labelled ``estimated=True``.
It misses idle/uncore/DRAM power, other processes, and frequency scaling (docs/energy.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import psutil

from acceval.probes.base import Sample, rel_ns


def _cpu_s(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system + t.children_user + t.children_system)


class CpuTimeProbe:
    """CPU seconds of ``pids`` since start, and energy estimated at ``watts_per_core``."""

    def __init__(self, pids: Sequence[int], watts_per_core: float, name: str = "cpu") -> None:
        if watts_per_core <= 0:
            raise ValueError("watts_per_core must be > 0")
        self.name = name
        self.pids = list(pids)
        self.watts_per_core = watts_per_core
        self._t0_ns = 0
        self._procs: dict[int, psutil.Process] = {}
        self._base: dict[int, float] = {}
        self._last: dict[int, float] = {}

    def available(self) -> tuple[bool, str]:
        if not self.pids:
            return False, "no process ids to watch"
        for pid in self.pids:
            try:
                _cpu_s(psutil.Process(pid))
            except psutil.NoSuchProcess:
                return False, f"process {pid} does not exist"
            except psutil.AccessDenied:
                return False, f"no permission to read CPU times of process {pid}"
        return True, ""

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        for pid in self.pids:
            proc = psutil.Process(pid)
            self._procs[pid] = proc
            self._base[pid] = self._last[pid] = _cpu_s(proc)

    def sample(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        for pid, proc in self._procs.items():
            # An exited process keeps the CPU time it had spent.
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                self._last[pid] = _cpu_s(proc)
        cpu = sum(self._last[p] - self._base[p] for p in self._procs)
        return [
            Sample(t, self.name, "cpu_s", cpu, "s", "pids"),
            Sample(t, self.name, "energy_j", cpu * self.watts_per_core, "J", "pids",
                   estimated=True),
        ]

    def stop(self) -> list[Sample]:
        out = self.sample()
        self._procs.clear()
        return out
