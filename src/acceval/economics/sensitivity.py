"""One-at-a-time sensitivity of cost per correct task (tornado data) and ranking flips.

Each declared input is swung to the low and the high end of its range
(:class:`~acceval.economics.spec.Sensitivity`) with every other input at its base value.
A per-target input (price, utilization, engineering hours...) is swung for one target at a
time; a study-wide input (engineer rate, volume, electricity, egress price) for all targets
at once. A *flip* is a swing under which the winner changes, by the rule the caller passes (the
verdict's: :func:`acceval.verdict.cheapest`); this module never ranks.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

from acceval.economics.bill import CostInputs, compute_bill, frontier
from acceval.economics.spec import Sensitivity
from acceval.results.section import Section


class TornadoBarResult(Section):
    """One input swung low and high for one target (scope ``target``) or for all (``study``),
    with every other input at its base: that target's cost per correct task at each end."""

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
    """A swing under which the winner (by the verdict's rule) changes."""

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


#: Who wins at given costs per correct task: the verdict's rule (acceval.verdict.cheapest).
Winner = Callable[[Mapping[str, float]], str | None]


def _costs(inputs: list[CostInputs], winner: Winner) -> tuple[str | None, dict[str, float]]:
    f = frontier([compute_bill(ci) for ci in inputs])
    costs = {e.target: e.cost_of_pass_usd for e in f.entries}
    return winner(costs), costs


def _width(low_usd: float, high_usd: float) -> float:
    return abs(high_usd - low_usd) if math.isfinite(high_usd - low_usd) else math.inf


def _bounds(swing_name: str, ranges: Sensitivity, base: float) -> tuple[float, float]:
    low, high = getattr(ranges, swing_name).bounds(base)
    if swing_name == "utilization":          # 0 < u <= 1
        low, high = min(max(low, 1e-6), 1.0), min(max(high, 1e-6), 1.0)
    return max(low, 0.0), max(high, 0.0)


def _swung(ci: CostInputs, field: str, value: float, note: str) -> CostInputs:
    return dataclasses.replace(ci, **{field: getattr(ci, field).with_value(value, note)})


def sensitivity(inputs: list[CostInputs], winner: Winner,
                ranges: Sensitivity | None = None) -> SensitivityResult:
    """Tornado bars for every declared input of every target, and the swings that flip the winner.

    ``inputs`` holds every (target, load point); a target's cost is its cheapest load point.
    ``winner`` names who wins at given costs (the verdict's rule; this module never ranks).
    Inputs whose base value is missing are not swung.
    """
    ranges = ranges or Sensitivity()
    base_winner, base = _costs(inputs, winner)
    bars: list[TornadoBarResult] = []
    flips: list[FlipResult] = []
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
            who_wins, costs = _costs(case, winner)
            result[side] = costs
            if who_wins != base_winner:
                flips.append(FlipResult(input=swing_name, scope=scope, side=side,
                                        value=(lo, hi)[i], winner=who_wins,
                                        base_winner=base_winner))
        for t in sorted(who):
            low_usd, high_usd = result["low"][t], result["high"][t]
            bars.append(TornadoBarResult(
                target=t, input=swing_name, scope="study" if scope == "study" else "target",
                base_value=base_value, low_value=lo, high_value=hi, base_usd=base[t],
                low_usd=low_usd, high_usd=high_usd, width_usd=_width(low_usd, high_usd)))

    for swing_name, field in PER_TARGET.items():
        for t in targets:
            run(field, swing_name, t, {t})
    for name in STUDY_WIDE:
        run(name, name, "study", set(targets))
    bars.sort(key=lambda b: (-b.width_usd if math.isfinite(b.width_usd) else -math.inf,
                             b.target, b.input))
    return SensitivityResult(base_winner=base_winner, base_usd=base, bars=bars, flips=flips)
