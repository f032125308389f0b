"""Energy at an honest system boundary, and the energy outputs of a run.

A probe measures at one level (NVML and Neuron at the device, L0). Reporting at a higher
level adds the declared components, each tagged ``declared``; a level that needs a component
nobody declared is not reached, and the estimate says which component is missing.
Levels and what each probe misses: docs/energy.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from acceval.economics.formulas import J_PER_KWH, tokens_per_s_per_mw
from acceval.probes.spec import BOUNDARY_LEVELS, Boundary
from acceval.results.section import Section
from acceval.units import number

EnergyOrigin = Literal["measured", "estimated", "declared"]


class EnergyComponentResult(Section):
    """One step of the boundary: what it added and where the figure came from."""

    level: Boundary
    name: str
    joules: float  # energy this step added
    origin: EnergyOrigin
    detail: str = ""


class EnergyProvenance(Section):
    """How a measurement was carried to the requested boundary (docs/energy.md)."""

    joules: float | None
    level: Boundary | None  # the level reached (may be below the requested one)
    requested_level: Boundary
    complete: bool  # the requested level was reached
    missing: list[str]  # components to declare to reach requested_level
    components: list[EnergyComponentResult]
    # How the starting figure was obtained (a probe reading, an estimate such as TDP x time or
    # CPU time x watts, or a declared figure); None without one.
    origin: EnergyOrigin | None = None


def _provenance(joules: float | None, level: Boundary | None, requested: Boundary,
                parts: list[EnergyComponentResult], missing: list[str]) -> EnergyProvenance:
    return EnergyProvenance(joules=joules, level=level, requested_level=requested,
                            complete=level == requested, missing=missing, components=parts,
                            origin=parts[0].origin if parts else None)


class EnergyResult(Section):
    """Energy of one load point (or one training run) at the declared boundary."""

    load_label: str | None = None
    joules: float | None
    level: Boundary | None
    joules_per_correct: float | None  # inf when nothing passed
    correct_per_kwh: float | None
    joules_per_output_token: float | None
    tokens_per_s_per_mw: float | None  # output tokens/s per MW at this boundary
    energy_cost_usd: float | None
    provenance: EnergyProvenance
    origin: EnergyOrigin | None = None  # of the starting figure


@dataclass(frozen=True, slots=True)
class BoundaryComponents:
    """Declared figures that carry a measurement from one level to the next (per replica)."""

    node_overhead_w: float | None = None    # L0 -> L1: + W x duration
    psu_efficiency: float | None = None     # L1 -> L2: / efficiency
    network_w: float | None = None          # L2 -> L3: + W x duration
    pue: float | None = None                # L3 -> L4: x PUE


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
) -> EnergyProvenance:
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
        return _provenance(None, None, target_level, [], ["a measurement"])
    joules = float(measured_j)
    parts = [EnergyComponentResult(level=measured_level, name=measured_name, joules=joules,
                                   origin=measured_origin, detail=measured_detail)]
    reached: Boundary = measured_level
    for i in range(lo + 1, hi + 1):
        level = BOUNDARY_LEVELS[i]
        step = _step(level, joules, components, duration_s)
        if step is None:
            missing = _NEEDS[level]
            return _provenance(joules, reached, target_level, parts, [missing])
        added, detail = step
        parts.append(EnergyComponentResult(level=level, name=_NEEDS[level], joules=added,
                                           origin="declared", detail=detail))
        joules += added
        reached = level
    return _provenance(joules, reached, target_level, parts, [])


_NEEDS: dict[str, str] = {"node": "node_overhead_w", "wall": "psu_efficiency",
                          "cluster": "network_w", "facility": "pue"}


def _step(level: str, joules: float, c: BoundaryComponents,
          duration_s: float) -> tuple[float, str] | None:
    if level == "node" and c.node_overhead_w is not None:
        return c.node_overhead_w * duration_s, f"{c.node_overhead_w} W x {number(duration_s)} s"
    if level == "wall" and c.psu_efficiency is not None:
        return joules / c.psu_efficiency - joules, f"/ PSU efficiency {c.psu_efficiency}"
    if level == "cluster" and c.network_w is not None:
        return c.network_w * duration_s, f"{c.network_w} W x {number(duration_s)} s"
    if level == "facility" and c.pue is not None:
        return joules * (c.pue - 1.0), f"x PUE {c.pue}"
    return None


def device_energy_from_power(power_w: float, chips: int, duration_s: float) -> float:
    """Estimated device energy when no probe reads it: W x chips x s (TDP is an upper bound)."""
    return power_w * chips * duration_s


def energy_outputs(
    estimate: EnergyProvenance, *, correct: int, output_tokens: int | None, duration_s: float,
    electricity_usd_per_kwh: float | None = None, load_label: str | None = None,
) -> EnergyResult:
    """J per correct task, correct tasks per kWh, tokens/s per MW and the energy cost."""
    j = estimate.joules
    if j is None or j <= 0 or duration_s <= 0:
        # A probe that could not read reports None; zero energy is never a measurement.
        return EnergyResult(load_label=load_label, joules=None, level=estimate.level,
                            joules_per_correct=None, correct_per_kwh=None,
                            joules_per_output_token=None, tokens_per_s_per_mw=None,
                            energy_cost_usd=None, provenance=estimate, origin=estimate.origin)
    per_tok = j / output_tokens if output_tokens else None
    tpmw = (tokens_per_s_per_mw(output_tokens / duration_s, j / duration_s)
            if output_tokens else None)
    cost = None if electricity_usd_per_kwh is None else j / J_PER_KWH * electricity_usd_per_kwh
    return EnergyResult(
        load_label=load_label, joules=j, level=estimate.level,
        joules_per_correct=j / correct if correct else math.inf,
        correct_per_kwh=correct / (j / J_PER_KWH),
        joules_per_output_token=per_tok, tokens_per_s_per_mw=tpmw,
        energy_cost_usd=cost, provenance=estimate, origin=estimate.origin,
    )
