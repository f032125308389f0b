"""Number formatting shared by the text renderers: missing is "not measured", never 0."""

from __future__ import annotations

import math

NOT_MEASURED = "not measured"


def num(v: float | None, digits: int = 1, unit: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NOT_MEASURED
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    if v and abs(v) < 0.5 * 10 ** -digits:
        # Too small for the fixed decimals: keep two significant digits instead of "0.0".
        return f"{v:.2g}{unit}"
    return f"{v:,.{digits}f}{unit}"


def sig(v: float | None, digits: int = 3, unit: str = "") -> str:
    """Significant digits, for quantities that span orders of magnitude (joules, dollars)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NOT_MEASURED
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.{digits}g}{unit}"


def pct(v: float | None, digits: int = 1) -> str:
    return NOT_MEASURED if v is None else f"{100 * v:.{digits}f}%"


def usd(v: float | None) -> str:
    if v is None:
        return NOT_MEASURED
    if math.isinf(v):
        return "∞ (nothing correct)"
    if v == 0:
        return "$0"
    if abs(v) < 0.01:
        return f"${v:.3g}"
    return f"${v:,.4f}" if abs(v) < 10 else f"${v:,.2f}"


def yesno(v: bool | None) -> str:
    return NOT_MEASURED if v is None else ("yes" if v else "NO")


def gate(v: bool | None) -> str:
    return "no level set" if v is None else ("pass" if v else "FAIL")
