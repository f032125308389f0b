"""Numbers as people read them: money in human units, intervals, ratios.

Rules (one for every format): money is never printed in scientific notation; a cost per
task below a cent is scaled to a round count of tasks ("$0.49 per 1M correct tasks"); an
interval is ``[low–high]``; a ratio has two significant digits and a ``×``; missing is "not
measured"; an infinite cost is "∞ (no correct answers)".
"""

from __future__ import annotations

import math

_SCALES = ((1, ""), (1_000, "1k"), (1_000_000, "1M"), (1_000_000_000, "1B"),
           (1_000_000_000_000, "1T"))


def money(usd: float | None) -> str:
    """A dollar amount: two decimals from a cent up, otherwise three significant digits."""
    if usd is None:
        return "not measured"
    if math.isinf(usd):
        return "∞ (no correct answers)"
    a = abs(usd)
    if a >= 1000:
        return f"${usd:,.0f}"
    if a >= 0.01 or a == 0:
        return f"${usd:,.2f}"
    digits = max(2, 2 - math.floor(math.log10(a)))
    return f"${usd:.{digits}f}"


def scale_for(usd_per_unit: float | None) -> tuple[int, str]:
    """The count of units that brings a per-unit cost to at least ten cents."""
    if usd_per_unit is None or not math.isfinite(usd_per_unit) or usd_per_unit <= 0:
        return 1, ""
    for n, name in _SCALES:
        if usd_per_unit * n >= 0.1:
            return n, name
    return _SCALES[-1]


def money_per(usd_per_unit: float | None, unit: str = "task", *,
              scale: tuple[int, str] | None = None) -> str:
    """``$0.49 per 1M correct tasks``; ``scale`` forces one unit for a whole column."""
    if usd_per_unit is None or math.isinf(usd_per_unit):
        return money(usd_per_unit)
    n, name = scale if scale is not None else scale_for(usd_per_unit)
    if n == 1:
        return f"{money(usd_per_unit)} per {unit}"
    return f"{money(usd_per_unit * n)} per {name} {unit}s"


def usd_interval(ci: tuple[float | None, float | None] | None, unit: str = "",
                 *, scale: tuple[int, str] | None = None) -> str:
    """``[$0.45–$0.52]`` in the scale of the low end (or ``scale``); "" when unknown."""
    if ci is None or ci[0] is None or ci[1] is None:
        return ""
    n, _ = scale if scale is not None else scale_for(ci[0])
    return f"[{money(ci[0] * n)}–{money(ci[1] * n)}]"


def ratio_text(r: float | None) -> str:
    """``2.10×`` (two decimals below 10, the same rounding everywhere)."""
    if r is None or not math.isfinite(r):
        return "n/a"
    return f"{r:.2f}×" if r < 10 else f"{r:,.0f}×"


def money_rate(usd_per_hour: float | None) -> str:
    """An hourly spend as a daily one: ``$2.40 a day``."""
    if usd_per_hour is None:
        return "not measured"
    return f"{money(usd_per_hour * 24)} a day"
