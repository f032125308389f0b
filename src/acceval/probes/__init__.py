"""Probes: side channels sampled during a run (energy, power, CPU time, device counters).

``Probe`` is the protocol, ``ProbeSampler`` runs probes in a background thread and streams
``samples.parquet``; ``energy_between`` turns cumulative counters into a window's joules.
``make_probe`` builds the probe a target's ``energy:`` section asks for. docs/energy.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from acceval.economics.spec import Energy
from acceval.probes.base import (
    SAMPLE_SCHEMA,
    Probe,
    ProbeSampler,
    Sample,
    SampleWriter,
    read_samples,
    table_to_samples,
)
from acceval.probes.cpu import CpuTimeProbe
from acceval.probes.neuron import NeuronMonitorProbe, NeuronSysfsProbe, parse_monitor_report
from acceval.probes.nvml import NvmlProbe
from acceval.probes.rapl import RaplProbe
from acceval.probes.window import energy_between

__all__ = [
    "SAMPLE_SCHEMA", "CpuTimeProbe", "NeuronMonitorProbe", "NeuronSysfsProbe", "NvmlProbe",
    "Probe", "ProbeSampler", "RaplProbe", "Sample", "SampleWriter", "energy_between",
    "make_probe", "parse_monitor_report", "read_samples", "table_to_samples",
]

#: Default for the cpu probe when the study declares no watts_per_core: an assumption, shown
#: as such in the energy provenance (docs/energy.md).
DEFAULT_WATTS_PER_CORE = 10.0


def _cpu(spec: Energy, pids: Sequence[int], _root: Path | None) -> Probe:
    return CpuTimeProbe(pids, spec.watts_per_core or DEFAULT_WATTS_PER_CORE)


def _rapl(spec: Energy, pids: Sequence[int], root: Path | None) -> Probe:
    return RaplProbe(root) if root else RaplProbe()


def _nvml(spec: Energy, pids: Sequence[int], _root: Path | None) -> Probe:
    return NvmlProbe(spec.devices)


def _neuron(spec: Energy, pids: Sequence[int], root: Path | None) -> Probe:
    kw = {"root": root} if root else {}
    return NeuronSysfsProbe(max_power_w=spec.device_max_power_w, devices=spec.devices, **kw)


_FACTORIES: dict[str, Callable[[Energy, Sequence[int], Path | None], Probe]] = {
    "cpu": _cpu, "rapl": _rapl, "nvml": _nvml, "neuron": _neuron,
}


def make_probe(spec: Energy, *, pids: Sequence[int] = (), root: Path | None = None
               ) -> Probe | None:
    """The probe for ``energy.probe`` (None for ``none``); ``pids`` feed the cpu probe and
    ``root`` overrides the sysfs root (tests)."""
    factory = _FACTORIES.get(spec.probe)
    return None if factory is None else factory(spec, pids, root)
