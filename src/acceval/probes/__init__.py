"""Probes: side channels sampled during a run (energy, power, CPU time, device counters).

``Probe`` is the protocol, ``ProbeSampler`` runs probes in a background thread and streams
``samples.parquet``; ``energy_between`` turns cumulative counters into a window's joules.
``make_probe`` builds the probe a target's ``energy:`` section asks for, through the
``acceval.probes`` entry-point group (built-ins and plugins alike). docs/energy.md.
"""

from __future__ import annotations

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

__all__ = [
    "DEFAULT_WATTS_PER_CORE", "SAMPLE_SCHEMA", "CpuTimeProbe", "NeuronMonitorProbe",
    "NeuronSysfsProbe", "NvmlProbe", "Probe", "ProbeFactory", "ProbeSampler", "RaplProbe",
    "Sample", "SampleWriter", "energy_between", "make_probe", "parse_monitor_report",
    "read_samples", "table_to_samples",
]
