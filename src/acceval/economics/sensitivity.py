"""One-at-a-time sensitivity of cost per correct task (tornado data) and ranking flips.

Each declared input is swung to the low and the high end of its range
(:class:`~acceval.economics.spec.Sensitivity`) with every other input at its base value.
A per-target input (price, utilization, engineering hours...) is swung for one target at a
time; a study-wide input (engineer rate, volume, electricity, egress price) for all targets
at once. A *flip* is a swing under which the cheapest target (Cost-of-Pass frontier) changes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from acceval.economics.bill import CostInputs, compute_bill, frontier
from acceval.economics.spec import Sensitivity
from acceval.results.section import Section


class TornadoBarResult(Section):
    target: str
    input: str
    scope: str
    base_value: float | None
    low_value: float | None
    high_value: float | None
    base_usd: float
    low_usd: float
    high_usd: float
    width_usd: float


class FlipResult(Section):
    input: str
    scope: str
    side: str
    value: float | None
    winner: str | None
    base_winner: str | None


class SensitivityResult(Section):
    base_winner: str | None
    base_usd: dict[str, float]
    bars: list[TornadoBarResult]
    flips: list[FlipResult]



#: Sensitivity field -> CostInputs field, for inputs that belong to one target.
PER_TARGET: dict[str, str] = {
    "price": "usd_per_chip_hour",
    "utilization": "utilization",
    "engineering_hours": "engineering_hours",
    "compile_s": "compile_s",
    "storage_usd_per_month": "storage_usd_per_month",
    "observability_usd_per_month": "observability_usd_per_month",
    "egress_gb_per_request": "egress_gb_per_request",
}
#: Inputs shared by every target (from ``costs:`` in the study).
STUDY_WIDE: tuple[str, ...] = (
    "engineer_usd_per_hour", "expected_requests_per_month", "electricity_usd_per_kwh",
    "egress_usd_per_gb",
)


@dataclass(frozen=True, slots=True)
class TornadoBar:
    target: str
    input: str
    scope: str                 # "target" (its own input) or "study" (shared input)
    base_value: float
    low_value: float
    high_value: float
    base_usd: float            # this target's cost per correct task (best load point)
    low_usd: float
    high_usd: float

    @property
    def width_usd(self) -> float:
        return abs(self.high_usd - self.low_usd) if math.isfinite(self.high_usd - self.low_usd) \
            else math.inf


@dataclass(frozen=True, slots=True)
class Flip:
    input: str
    scope: str                 # the target whose input moved, or "study"
    side: str                  # "low" or "high"
    value: float               # the swung value (for a study-wide input, the shared value)
    winner: str | None
    base_winner: str | None


@dataclass(frozen=True, slots=True)
class SensitivityReport:
    base_winner: str | None
    base_usd: dict[str, float]         # cost per correct task per target at base values
    bars: tuple[TornadoBar, ...]       # widest first
    flips: tuple[Flip, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for result.json (bars carry ``width_usd`` too)."""
        d = dataclasses.asdict(self)
        for bar, raw in zip(self.bars, d["bars"], strict=True):
            raw["width_usd"] = bar.width_usd
        return d


def _costs(inputs: list[CostInputs]) -> tuple[str | None, dict[str, float]]:
    f = frontier([compute_bill(ci) for ci in inputs])
    return f.winner, {e.target: e.cost_of_pass_usd for e in f.entries}


def _bounds(swing_name: str, ranges: Sensitivity, base: float) -> tuple[float, float]:
    low, high = getattr(ranges, swing_name).bounds(base)
    if swing_name == "utilization":          # 0 < u <= 1
        low, high = min(max(low, 1e-6), 1.0), min(max(high, 1e-6), 1.0)
    return max(low, 0.0), max(high, 0.0)


def _swung(ci: CostInputs, field: str, value: float, note: str) -> CostInputs:
    return dataclasses.replace(ci, **{field: getattr(ci, field).with_value(value, note)})


def sensitivity(inputs: list[CostInputs], ranges: Sensitivity | None = None) -> SensitivityReport:
    """Tornado bars for every declared input of every target, and the swings that flip the winner.

    ``inputs`` holds every (target, load point); a target's cost is its cheapest load point.
    Inputs whose base value is missing are not swung.
    """
    ranges = ranges or Sensitivity()
    base_winner, base = _costs(inputs)
    bars: list[TornadoBar] = []
    flips: list[Flip] = []
    targets = sorted({ci.target for ci in inputs})

    def run(field: str, swing_name: str, scope: str, who: set[str]) -> None:
        mine = [ci for ci in inputs if ci.target in who]
        bases = [getattr(ci, field).value for ci in mine]
        if not mine or any(v is None for v in bases):
            return
        base_value = float(bases[0])
        lo, hi = _bounds(swing_name, ranges, base_value)
        result: dict[str, dict[str, float]] = {}
        for i, side in enumerate(("low", "high")):
            note = f"sensitivity: {swing_name} {side}"
            # Relative swings apply to each load point's own base (e.g. measured compile time).
            case = [_swung(ci, field, _bounds(swing_name, ranges, getattr(ci, field).value)[i],
                           note) if ci.target in who else ci for ci in inputs]
            winner, costs = _costs(case)
            result[side] = costs
            if winner != base_winner:
                flips.append(Flip(swing_name, scope, side, (lo, hi)[i], winner, base_winner))
        for t in sorted(who):
            bars.append(TornadoBar(t, swing_name, "study" if scope == "study" else "target",
                                   base_value, lo, hi, base[t], result["low"][t],
                                   result["high"][t]))

    for swing_name, field in PER_TARGET.items():
        for t in targets:
            run(field, swing_name, t, {t})
    for name in STUDY_WIDE:
        run(name, name, "study", set(targets))
    bars.sort(key=lambda b: (-b.width_usd if math.isfinite(b.width_usd) else -math.inf,
                             b.target, b.input))
    return SensitivityReport(base_winner, base, tuple(bars), tuple(flips))
