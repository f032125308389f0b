"""The study's ``energy:`` section of a target: which probe measures, and the boundary the
energy is reported at (L0 device … L4 facility; docs/energy.md).

The probes own it because they are what it configures; economics reads it to price energy.
Validated at the edge like the rest of the study (``extra="forbid"``, frozen).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from acceval.plugins import installed, unknown


def _known_probe(name: str) -> str:
    """``none`` or a name in the ``acceval.probes`` entry-point group (built-in or plugin)."""
    names = sorted([*installed("acceval.probes"), "none"])
    if name not in names:
        raise ValueError(str(unknown("acceval.probes", name, names)))
    return name


ProbeName = Annotated[str, AfterValidator(_known_probe)]
Boundary = Literal["device", "node", "wall", "cluster", "facility"]

#: Boundary names in order, L0..L4 (docs/energy.md).
BOUNDARY_LEVELS: tuple[Boundary, ...] = ("device", "node", "wall", "cluster", "facility")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Energy(_Model):
    """How energy is measured for a target and the boundary it is reported at (L0..L4)."""

    probe: ProbeName = Field(
        "none", description="cpu (process CPU time x watts_per_core, estimated), rapl, nvml, "
        "neuron, dcgm (a remote GPU's DCGM exporter, at exporter_url), a probe plugin "
        "(entry-point group acceval.probes), or none.",
    )
    exporter_url: str | None = Field(
        None, description="dcgm: the exporter's /metrics URL (e.g. "
        "http://gpu-node:9400/metrics), read over HTTP during the run.",
    )
    boundary: Boundary = Field(
        "device", description="Report at device (L0), node (L1), wall (L2), cluster (L3) or "
        "facility (L4); levels above what the probe measures use the declared components.",
    )
    devices: list[int] | None = Field(
        None, description="Device indices to read (GPUs, Neuron devices); default all.",
    )
    device_tdp_w: float | None = Field(
        None, gt=0, description="Device power per chip in W, used when no probe reads energy "
        "(an upper-bound estimate); defaults to the catalog TDP.",
    )
    device_max_power_w: float | None = Field(
        None, gt=0, description="Neuron: watts at 100% of max power, to turn the sysfs "
        "percentage into watts (AWS does not publish it).",
    )
    watts_per_core: float | None = Field(
        None, gt=0, description="cpu probe: watts per fully busy core (an estimate).",
    )
    node_overhead_w: float | None = Field(
        None, ge=0, description="L0->L1: host CPUs, DRAM, NICs, fans per replica, in W.",
    )
    psu_efficiency: float | None = Field(
        None, gt=0, le=1, description="L1->L2: PSU AC->DC efficiency (e.g. 0.94).",
    )
    network_w: float | None = Field(
        None, ge=0, description="L2->L3: switch/optics/storage share per replica, in W.",
    )
    pue: float | None = Field(
        None, ge=1, description="L3->L4: power usage effectiveness (AWS 1.15, industry 1.56).",
    )

    @model_validator(mode="after")
    def _exporter(self) -> Energy:
        if self.probe == "dcgm" and not self.exporter_url:
            raise ValueError("probe dcgm reads a DCGM exporter: set exporter_url, e.g. "
                             "http://gpu-node:9400/metrics")
        if self.exporter_url is not None and not self.exporter_url.startswith(
                ("http://", "https://")):
            raise ValueError(f"exporter_url must be an http(s) URL, got {self.exporter_url!r}")
        return self
