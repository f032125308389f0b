"""The study's ``execution:`` section: where the load generators run (docs/scale-out.md)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from acceval.names import Name

# What Ray accepts as a node label key and value (the Kubernetes label syntax).
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[a-zA-Z0-9]([a-zA-Z0-9_.-]*[a-zA-Z0-9])?$")
_LABEL_VALUE = re.compile(r"^([a-zA-Z0-9]([a-zA-Z0-9_.-]*[a-zA-Z0-9])?)?$")
MAX_CLIENTS = 256


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Placement(_Model):
    """Where one target's load generators run, and how many there are."""

    target: Name = Field(description="The target these load generators drive.")
    clients: int | None = Field(
        None, ge=1, le=MAX_CLIENTS,
        description="Load-generator processes for this target (default: execution.clients).")
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Ray resources each load generator asks for, e.g. {client-east: 0.01}: a "
        "custom resource the client host next to the endpoint was started with "
        "(`ray start --resources '{\"client-east\": 1}'`).")
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Node labels each load generator must run on (Ray's label selector), e.g. "
        "{region: us-east-1}: a node started with `ray start --labels region=us-east-1`.")
    num_cpus: float = Field(
        1.0, ge=0, le=1024,
        description="Logical CPUs each load generator reserves (1: one per core, so two "
        "generators never share a core by accident).")

    @field_validator("resources")
    @classmethod
    def _resources(cls, v: dict[str, float]) -> dict[str, float]:
        for name, amount in v.items():
            if not name or name in ("CPU", "GPU", "memory", "object_store_memory"):
                raise ValueError(f"resources: {name!r} is not a custom resource; use num_cpus "
                                 "for CPUs, and a name the node was started with otherwise")
            if not 0 < amount <= 1e6:
                raise ValueError(f"resources.{name}: {amount} must be above 0 (a fraction such "
                                 "as 0.01 lets many generators share one node's resource)")
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            if not _LABEL_KEY.match(key) or len(key) > 253:
                raise ValueError(f"labels: {key!r} is not a valid label key (letters, digits, "
                                 "'-', '_', '.', optionally a DNS prefix and '/')")
            if not _LABEL_VALUE.match(value) or len(value) > 63:
                raise ValueError(f"labels.{key}: {value!r} is not a valid label value (up to 63 "
                                 "letters, digits, '-', '_', '.')")
        return v


class Execution(_Model):
    """How the run sends its load: from this process (``local``, the default) or from
    load-generator actors on a Ray cluster (``ray``), one or more per target."""

    backend: Literal["local", "ray"] = Field(
        "local", description="local: this process sends every request. ray: load-generator "
        "actors on a Ray cluster do (the `[ray]` extra), and targets run in parallel.")
    address: str | None = Field(
        None, description="The Ray cluster to join (e.g. 127.0.0.1:6379, or `auto` for the "
        "one started on this host with `ray start`). Default with backend ray: a private "
        "Ray started for the run on this host (for several client processes on one machine), "
        "even when another Ray runs here or RAY_ADDRESS names one.")
    clients: int = Field(
        1, ge=1, le=MAX_CLIENTS,
        description="Load-generator processes per target (placement can set it per target). "
        "More than one needs backend ray: each sends its share of every point's load.")
    parallel_targets: bool = Field(
        True, description="backend ray: measure the targets at the same time (each on its own "
        "load generators). false: one after the other, as the local backend does.")
    placement: list[Placement] = Field(
        default_factory=list, description="Per target: where its load generators run.")

    @field_validator("address")
    @classmethod
    def _address(cls, v: str | None) -> str | None:
        if v is None or v == "auto":
            return v
        bare = v.removeprefix("ray://")
        host, sep, port = bare.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"address {v!r} must be HOST:PORT (e.g. 127.0.0.1:6379), "
                             "ray://HOST:PORT, or `auto`")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Execution:
        if self.backend == "local":
            many = [p.target for p in self.placement if (p.clients or 1) > 1]
            if self.clients > 1 or many:
                raise ValueError("more than one load-generator process needs backend: ray "
                                 "(without an address a private Ray is started on this host)")
            if self.address is not None:
                raise ValueError("address is the Ray cluster to join; set backend: ray with it")
            placed = [p.target for p in self.placement if p.resources or p.labels]
            if placed:
                raise ValueError(f"placement for {', '.join(placed)} needs backend: ray")
        names = [p.target for p in self.placement]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"placement names {', '.join(dupes)} more than once; give one "
                             "entry per target")
        return self

    def placement_for(self, target: str) -> Placement:
        for p in self.placement:
            if p.target == target:
                return p
        return Placement(target=target)

    def clients_for(self, target: str) -> int:
        p = self.placement_for(target)
        return p.clients if p.clients is not None else self.clients


def overridden(execution: Execution, *, address: str | None = None,
               clients: int | None = None) -> Execution:
    """``execution`` with the command line's ``--ray ADDRESS`` and ``--clients N`` applied:
    either one selects the Ray backend (``--clients`` alone: a private Ray on this host).
    Raises ValueError (pydantic's) naming what is wrong."""
    if address is None and clients is None:
        return execution
    data = execution.model_dump()
    data["backend"] = "ray"
    if address is not None:
        data["address"] = address
    if clients is not None:
        data["clients"] = clients
    return Execution.model_validate(data)


__all__ = ["MAX_CLIENTS", "Execution", "Placement", "overridden"]
