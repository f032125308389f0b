"""How a target's ``energy:`` section becomes a probe: one factory per built-in probe.

Each factory is registered in the ``acceval.probes`` entry-point group under the name a study
writes in ``energy.probe``; a third-party probe registers a callable with the same signature
(:class:`ProbeFactory`). :func:`make_probe` looks the name up through
:func:`acceval.plugins.load_plugin`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from acceval.plugins import load_plugin
from acceval.probes.base import Probe
from acceval.probes.cpu import CpuTimeProbe
from acceval.probes.neuron import NeuronSysfsProbe
from acceval.probes.nvml import NvmlProbe
from acceval.probes.rapl import RaplProbe
from acceval.probes.spec import Energy

GROUP = "acceval.probes"

#: Default for the cpu probe when the study declares no watts_per_core: an assumption, shown
#: as such in the energy provenance (docs/energy.md).
DEFAULT_WATTS_PER_CORE = 10.0


class ProbeFactory(Protocol):
    """What a name in the ``acceval.probes`` group resolves to."""

    def __call__(self, spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
        """The probe for ``spec``; ``pids`` are the served processes (local engines) and
        ``root`` replaces the sysfs root (tests)."""
        ...


def cpu(spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
    return CpuTimeProbe(pids, spec.watts_per_core or DEFAULT_WATTS_PER_CORE)


def rapl(spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
    return RaplProbe(root) if root else RaplProbe()


def nvml(spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
    return NvmlProbe(spec.devices)


def neuron(spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
    kw = {"root": root} if root else {}
    return NeuronSysfsProbe(max_power_w=spec.device_max_power_w, devices=spec.devices, **kw)


def dcgm(spec: Energy, *, pids: Sequence[int], root: Path | None) -> Probe:
    from acceval.probes.prometheus import DcgmProbe

    assert spec.exporter_url is not None  # the spec requires it for dcgm
    return DcgmProbe(spec.exporter_url, devices=spec.devices)


def make_probe(spec: Energy, *, pids: Sequence[int] = (), root: Path | None = None
               ) -> Probe | None:
    """The probe for ``energy.probe`` (None for ``none``); ``pids`` feed the cpu probe and
    ``root`` overrides the sysfs root (tests). An unknown name raises
    :class:`acceval.plugins.PluginError` listing the installed probes."""
    if spec.probe == "none":
        return None
    factory: ProbeFactory = load_plugin(GROUP, spec.probe)
    return factory(spec, pids=list(pids), root=root)
