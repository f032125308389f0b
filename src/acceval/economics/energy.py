"""Energy at an honest system boundary, and the energy outputs of a run.

A probe measures at one level (NVML and Neuron at the device, L0). Reporting at a higher
level adds the declared components, each tagged ``declared``; a level that needs a component
nobody declared is not reached, and the estimate says which component is missing.
Levels and what each probe misses: docs/energy.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from acceval.economics.formulas import J_PER_KWH, tokens_per_s_per_mw
from acceval.probes.spec import BOUNDARY_LEVELS, Boundary
from acceval.results.section import Section


class EnergyComponentResult(Section):
    level: str
    name: str
    joules: float
    origin: str
    detail: str = ""


class EnergyProvenance(Section):
    joules: float | None
    level: str | None
    requested_level: str
    complete: bool
    missing: list[str]
    components: list[EnergyComponentResult]
    origin: str | None = None  # measured, estimated (TDP x time) or declared


class EnergyResult(Section):
    """Energy of the operating point at the declared boundary."""

    load_label: str | None = None
    joules: float | None
    level: str | None
    joules_per_correct: float | None
    correct_per_kwh: float | None
    joules_per_output_token: float | None
    tokens_per_s_per_mw: float | None
    energy_cost_usd: float | None
    provenance: EnergyProvenance
    origin: str | None = None




@dataclass(frozen=True, slots=True)
class BoundaryComponents:
    """Declared figures that carry a measurement from one level to the next (per replica)."""

    node_overhead_w: float | None = None    # L0 -> L1: + W x duration
    psu_efficiency: float | None = None     # L1 -> L2: / efficiency
    network_w: float | None = None          # L2 -> L3: + W x duration
    pue: float | None = None                # L3 -> L4: x PUE


@dataclass(frozen=True, slots=True)
class EnergyComponent:
    level: Boundary
    name: str
    joules: float                           # energy this step added
    origin: Literal["measured", "estimated", "declared"]
    detail: str = ""


@dataclass(frozen=True, slots=True)
class EnergyEstimate:
    joules: float | None
    level: Boundary | None                  # the level reached (may be below the requested one)
    requested_level: Boundary
    components: tuple[EnergyComponent, ...] = ()
    missing: tuple[str, ...] = ()           # components to declare to reach requested_level

    @property
    def complete(self) -> bool:
        return self.level == self.requested_level

    @property
    def origin(self) -> Literal["measured", "estimated", "declared"] | None:
        """How the starting figure was obtained (a probe reading, an estimate such as TDP x
        time or CPU time x watts, or a declared figure); None without one."""
        return self.components[0].origin if self.components else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "joules": self.joules, "level": self.level, "requested_level": self.requested_level,
            "origin": self.origin,
            "complete": self.complete, "missing": list(self.missing),
            "components": [{"level": c.level, "name": c.name, "joules": c.joules,
                            "origin": c.origin, "detail": c.detail} for c in self.components],
        }


def level_index(level: Boundary) -> int:
    """L0..L4 as 0..4."""
    return BOUNDARY_LEVELS.index(level)


def energy_at_boundary(
    measured_j: float | None,
    measured_level: Boundary,
    target_level: Boundary,
    components: BoundaryComponents,
    *,
    duration_s: float,
    measured_origin: Literal["measured", "estimated", "declared"] = "measured",
    measured_name: str = "probe",
    measured_detail: str = "",
) -> EnergyEstimate:
    """Carry ``measured_j`` (at ``measured_level``) up to ``target_level``.

    Steps: L1 = L0 + node_overhead_w x t; L2 = L1 / psu_efficiency; L3 = L2 + network_w x t;
    L4 = L3 x pue. Stops at the first step whose component is not declared. Going down
    (e.g. wall to device) is impossible without a model of the host, so it raises.
    ``measured_origin`` labels the starting figure: ``estimated`` for the CPU-time probe and
    for TDP x time. ``measured_name`` and ``measured_detail`` name it and say how it was
    obtained (``tdp``, "700 W x 8 chips x 10 s (catalog ...)").
    """
    lo, hi = level_index(measured_level), level_index(target_level)
    if hi < lo:
        raise ValueError(
            f"cannot report at {target_level} from a {measured_level} measurement "
            "(the host's share is unknown); report at the measured level or above"
        )
    if measured_j is None:
        return EnergyEstimate(None, None, target_level, (), ("a measurement",))
    joules = float(measured_j)
    parts = [EnergyComponent(measured_level, measured_name, joules, measured_origin,
                             measured_detail)]
    reached: Boundary = measured_level
    for i in range(lo + 1, hi + 1):
        level = BOUNDARY_LEVELS[i]
        step = _step(level, joules, components, duration_s)
        if step is None:
            missing = _NEEDS[level]
            return EnergyEstimate(joules, reached, target_level, tuple(parts), (missing,))
        added, detail = step
        parts.append(EnergyComponent(level, _NEEDS[level], added, "declared", detail))
        joules += added
        reached = level
    return EnergyEstimate(joules, reached, target_level, tuple(parts))


_NEEDS: dict[str, str] = {"node": "node_overhead_w", "wall": "psu_efficiency",
                          "cluster": "network_w", "facility": "pue"}


def _step(level: str, joules: float, c: BoundaryComponents,
          duration_s: float) -> tuple[float, str] | None:
    if level == "node" and c.node_overhead_w is not None:
        return c.node_overhead_w * duration_s, f"{c.node_overhead_w} W x {duration_s:.3g} s"
    if level == "wall" and c.psu_efficiency is not None:
        return joules / c.psu_efficiency - joules, f"/ PSU efficiency {c.psu_efficiency}"
    if level == "cluster" and c.network_w is not None:
        return c.network_w * duration_s, f"{c.network_w} W x {duration_s:.3g} s"
    if level == "facility" and c.pue is not None:
        return joules * (c.pue - 1.0), f"x PUE {c.pue}"
    return None


def device_energy_from_power(power_w: float, chips: int, duration_s: float) -> float:
    """Estimated device energy when no probe reads it: W x chips x s (TDP is an upper bound)."""
    return power_w * chips * duration_s


@dataclass(frozen=True, slots=True)
class EnergyOutputs:
    joules: float | None
    level: Boundary | None
    joules_per_correct: float | None        # inf when nothing passed
    correct_per_kwh: float | None
    joules_per_output_token: float | None
    tokens_per_s_per_mw: float | None        # output tokens/s per MW at this boundary
    energy_cost_usd: float | None
    provenance: dict[str, Any] = field(default_factory=dict)
    origin: Literal["measured", "estimated", "declared"] | None = None  # of the starting figure

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def energy_outputs(
    estimate: EnergyEstimate, *, correct: int, output_tokens: int | None, duration_s: float,
    electricity_usd_per_kwh: float | None = None,
) -> EnergyOutputs:
    """J per correct task, correct tasks per kWh, tokens/s per MW and the energy cost."""
    j = estimate.joules
    if j is None or j <= 0 or duration_s <= 0:
        # A probe that could not read reports None; zero energy is never a measurement.
        return EnergyOutputs(None, estimate.level, None, None, None, None, None,
                             estimate.to_dict(), estimate.origin)
    per_tok = j / output_tokens if output_tokens else None
    tpmw = (tokens_per_s_per_mw(output_tokens / duration_s, j / duration_s)
            if output_tokens else None)
    cost = None if electricity_usd_per_kwh is None else j / J_PER_KWH * electricity_usd_per_kwh
    return EnergyOutputs(
        joules=j, level=estimate.level,
        joules_per_correct=j / correct if correct else math.inf,
        correct_per_kwh=correct / (j / J_PER_KWH),
        joules_per_output_token=per_tok, tokens_per_s_per_mw=tpmw,
        energy_cost_usd=cost, provenance=estimate.to_dict(), origin=estimate.origin,
    )
