"""Probes: side channels sampled during a run (energy, power, CPU time, device counters).

``Probe`` is the protocol, ``ProbeSampler`` runs probes in a background thread and streams
``samples.parquet``; ``energy_between`` turns cumulative counters into a window's joules.
``make_probe`` builds the probe a target's ``energy:`` section asks for, through the
``acceval.probes`` entry-point group (built-ins and plugins alike). docs/energy.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
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
    from acceval.probes.factories import DEFAULT_WATTS_PER_CORE, ProbeFactory, make_probe
    from acceval.probes.neuron import NeuronMonitorProbe, NeuronSysfsProbe, parse_monitor_report
    from acceval.probes.nvml import NvmlProbe
    from acceval.probes.rapl import RaplProbe
    from acceval.probes.window import energy_between

# The probes (psutil, NVML, Neuron) load when a name is used, not when a study's
# ``acceval.probes.spec`` is read.
__getattr__ = exports(__name__, {
    "SAMPLE_SCHEMA": "acceval.probes.base", "Probe": "acceval.probes.base",
    "ProbeSampler": "acceval.probes.base", "Sample": "acceval.probes.base",
    "SampleWriter": "acceval.probes.base", "read_samples": "acceval.probes.base",
    "table_to_samples": "acceval.probes.base", "CpuTimeProbe": "acceval.probes.cpu",
    "DEFAULT_WATTS_PER_CORE": "acceval.probes.factories",
    "ProbeFactory": "acceval.probes.factories", "make_probe": "acceval.probes.factories",
    "NeuronMonitorProbe": "acceval.probes.neuron", "NeuronSysfsProbe": "acceval.probes.neuron",
    "parse_monitor_report": "acceval.probes.neuron", "NvmlProbe": "acceval.probes.nvml",
    "RaplProbe": "acceval.probes.rapl", "energy_between": "acceval.probes.window"})

__all__ = [
    "DEFAULT_WATTS_PER_CORE", "SAMPLE_SCHEMA", "CpuTimeProbe", "NeuronMonitorProbe",
    "NeuronSysfsProbe", "NvmlProbe", "Probe", "ProbeFactory", "ProbeSampler", "RaplProbe",
    "Sample", "SampleWriter", "energy_between", "make_probe", "parse_monitor_report",
    "read_samples", "table_to_samples",
]
