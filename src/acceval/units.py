"""How numbers read in every report: money at a human scale, intervals, ratios.

Pure string formatting over floats; it imports nothing from the rest of acceval so that every
renderer phrases a number the same way. The rules, each chosen once:

* **No scientific notation**, ever. Rounding is half-up on the number as Python prints it
  (``2.05`` -> ``2.1``), so what a reader rounds by hand matches.
* **Missing** (None or NaN) is ``not measured``; it is never shown as 0.
* **money**: whole dollars with thousands separators from $100 up (``$100,935``); below that
  3 significant digits with at least 2 decimals, zeros past the cents dropped (``$2.40``,
  ``$0.0123``, ``$0.000000488``). An amount that rounds away at 12 decimals is ``≈$0``.
* **money per unit** (cost per correct task): the smallest of *per unit*, *per 1K*, *per 1M*,
  *per 1B units* at which the amount is at least $0.10, so the leading digits sit in the
  dimes or above (4.88e-07 -> ``$0.488 per 1M correct tasks``, 0.0123 -> ``$12.30 per 1K
  correct tasks``, 0.49 -> ``$0.49 per correct task``). A table column uses one scale for
  every row: the one its smallest nonzero amount needs (:func:`money_column`). An infinite
  cost (nothing to divide by) reads ``∞ (no correct tasks)``, from the unit's plural.
* **money rates**: the shortest of an hour, a day, a month (730 h, a year / 12) and a year
  at which the amount is at least $1 (0.10 $/h -> ``$2.40 a day``); columns share one period.
* **intervals**: ``[low–high]`` with an en dash, both ends in the same format and scale.
* **ratios**: ``2.1×``: one decimal from 1 to 10, whole numbers from 10 up, 2 significant
  digits below 1 (``0.83×``); :func:`round_ratio` is the same rule as a number, for any code
  that compares what it shows.
* **one money scale per report**: a report (and the verdict it quotes) is rendered inside
  :func:`report_scale`, which pins the scale every money-per-unit figure takes (headline,
  tables, charts, intervals, axes alike), chosen once from the report's magnitudes the way
  :func:`pick_scale` chooses one. Inside it, :func:`pick_scale` and every ``money_per*``
  without an explicit ``scale`` answer that one scale, so no figure or interval can drift
  into another. A field that says otherwise passes its own ``scale`` (``per 1M output
  tokens``, ``per training run``).
* **declared values** (what a user typed: 100000000 requests a month, a 50 ms bound) are
  shown as typed, grouped, never with an exponent (:func:`plain`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal

NOT_MEASURED = "not measured"
INFINITY = "∞"
NEAR_ZERO = "≈"         # prefix for a nonzero amount too small for the decimals allowed
MAX_DECIMALS = 12       # a picodollar; nothing a bill can resolve lies below it
MONEY_MIN_SCALED = 0.10  # money per unit: the smallest amount a chosen scale may show
TINY_PER_MTOK_USD = 0.001  # below it, money per 1M output tokens is shown per 1B instead
RATE_MIN = 1.0           # money rates: the smallest amount a chosen period may show

# Enough precision for every float written out in full (1.8e308 has 309 digits).
_CTX = Context(prec=800, rounding=ROUND_HALF_UP)


def _missing(v: float | None) -> bool:
    return v is None or math.isnan(v)


def _decimal(v: float) -> Decimal:
    return Decimal(repr(float(v)))


def _quantize(d: Decimal, decimals: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-decimals), context=_CTX)


def _round(v: float, decimals_for: Callable[[int], int]) -> tuple[Decimal, int]:
    """``v`` rounded half-up to the decimals its magnitude asks for, and those decimals.

    ``decimals_for`` maps the exponent of the leading digit to a number of decimals; it is
    asked again when rounding carries into the next power of ten (99.996 -> 100).
    """
    d = _decimal(v)
    if d == 0:
        return Decimal(0), min(decimals_for(0), MAX_DECIMALS)
    places = min(decimals_for(d.adjusted()), MAX_DECIMALS)
    q = _quantize(d, places)
    if q != 0:
        again = min(decimals_for(q.adjusted()), MAX_DECIMALS)
        if again != places:
            places = again
            q = _quantize(d, places)
    return q, places


def _fixed(q: Decimal, places: int, *, min_places: int | None = None, group: bool = True
           ) -> str:
    """``q`` written out in full with ``places`` decimals, trailing zeros dropped down to
    ``min_places`` (None keeps them all); never an exponent, never ``-0``."""
    text = f"{abs(q):,.{places}f}" if group else f"{abs(q):.{places}f}"
    if min_places is not None and places > min_places:
        whole, _, frac = text.partition(".")
        frac = frac.rstrip("0").ljust(min_places, "0")
        text = f"{whole}.{frac}" if frac else whole
    return f"-{text}" if q < 0 else text


def _sig_decimals(sig: int, min_places: int = 0) -> Callable[[int], int]:
    return lambda exp: max(min_places, sig - 1 - exp)


# --- plain numbers ----------------------------------------------------------------------------

def number(v: float | None, sig: int = 3) -> str:
    """``v`` to ``sig`` significant digits, whole numbers grouped (``1,234``, ``12.3``,
    ``0.0123``); trailing zeros after the point dropped."""
    if _missing(v):
        return NOT_MEASURED
    assert v is not None
    if math.isinf(v):
        return INFINITY if v > 0 else f"-{INFINITY}"
    q, places = _round(v, _sig_decimals(sig))
    if q == 0 and v != 0:
        return NEAR_ZERO + "0"
    return _fixed(q, places, min_places=0)


_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(v: float | None, unit: str, sig: int = 3) -> str:
    """``v`` with an SI prefix on ``unit`` so that 1 to 999 leads (6.39e6 FLOP ->
    ``6.39 MFLOP``); never scientific notation."""
    if _missing(v):
        return NOT_MEASURED
    assert v is not None
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{number(v / scale, sig)} {prefix}{unit}"
    return f"{number(v, sig)} {unit}"


def plain(v: float | None) -> str:
    """A declared value as it was typed, thousands grouped and never an exponent:
    ``1e8`` -> ``100,000,000``, ``2400.0`` -> ``2,400``, ``0.05`` -> ``0.05``."""
    if _missing(v):
        return NOT_MEASURED
    assert v is not None
    if math.isinf(v):
        return INFINITY if v > 0 else f"-{INFINITY}"
    d = _decimal(v).normalize(context=_CTX)
    places = max(0, -d.as_tuple().exponent)  # type: ignore[operator]
    return _fixed(d, places) if d != 0 else "0"


# --- money ------------------------------------------------------------------------------------

def _money_decimals(exp: int) -> int:
    return 0 if exp >= 2 else max(2, 2 - exp)


def money(usd: float | None) -> str:
    """An amount of dollars: ``$100,935``, ``$2.40``, ``$0.0123``, ``-$5.00``."""
    if _missing(usd):
        return NOT_MEASURED
    assert usd is not None
    if math.isinf(usd):
        return INFINITY if usd > 0 else f"-{INFINITY}"
    q, places = _round(usd, _money_decimals)
    if q == 0:
        return f"{NEAR_ZERO}$0" if usd != 0 else "$0.00"
    text = _fixed(q, places, min_places=2)
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def plural(unit: str) -> str:
    """``correct task`` -> ``correct tasks``; a unit already ending in s is kept."""
    return unit if unit.endswith("s") else f"{unit}s"


@dataclass(frozen=True, slots=True)
class MoneyScale:
    """How many units one shown amount is for: 1, 1K, 1M or 1B."""

    factor: int
    label: str   # "" for one unit, else "1K", "1M", "1B"

    def per(self, unit: str = "correct task") -> str:
        """``per correct task`` or ``per 1M correct tasks``."""
        return f"per {unit}" if self.factor == 1 else f"per {self.label} {plural(unit)}"

    def amount(self, usd_per_unit: float | None, unit: str = "correct task") -> str:
        """The amount alone at this scale (a table cell under a ``per ...`` header)."""
        if usd_per_unit is not None and math.isinf(usd_per_unit) and usd_per_unit > 0:
            return f"{INFINITY} (no {plural(unit)})"
        if _missing(usd_per_unit):
            return NOT_MEASURED
        assert usd_per_unit is not None
        return money(usd_per_unit * self.factor)


SCALES: tuple[MoneyScale, ...] = (
    MoneyScale(1, ""),
    MoneyScale(1_000, "1K"),
    MoneyScale(1_000_000, "1M"),
    MoneyScale(1_000_000_000, "1B"),
)


_REPORT_SCALE: ContextVar[MoneyScale | None] = ContextVar("acceval_report_scale",
                                                         default=None)


def scale_of(factor: int | None) -> MoneyScale | None:
    """The scale whose factor is ``factor`` (as a result stores it), None if unknown."""
    return next((s for s in SCALES if s.factor == factor), None)


@contextmanager
def report_scale(scale: MoneyScale) -> Iterator[MoneyScale]:
    """Render one report (or one verdict) inside this: every money-per-unit figure that does
    not pin a scale of its own takes ``scale``."""
    token = _REPORT_SCALE.set(scale)
    try:
        yield scale
    finally:
        _REPORT_SCALE.reset(token)


def active_scale() -> MoneyScale | None:
    """The scale of the report being rendered, None outside :func:`report_scale`."""
    return _REPORT_SCALE.get()


def choose_scale(usd_per_unit: Iterable[float | None]) -> MoneyScale:
    """The scale for a whole report, from all of its money-per-unit magnitudes (the rule of
    :func:`pick_scale`, ignoring any active report scale)."""
    return _pick(usd_per_unit)


def pick_scale(usd_per_unit: Iterable[float | None]) -> MoneyScale:
    """One scale for all of ``usd_per_unit``: the smallest at which every finite nonzero
    amount shows at least $0.10 (the largest scale if none does; one unit if none is finite
    and nonzero). Inside :func:`report_scale`, the report's one scale."""
    active = _REPORT_SCALE.get()
    return active if active is not None else _pick(usd_per_unit)


def _pick(usd_per_unit: Iterable[float | None]) -> MoneyScale:
    finite = [abs(v) for v in usd_per_unit if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return SCALES[0]
    smallest = min(finite)
    for scale in SCALES:
        if smallest * scale.factor >= MONEY_MIN_SCALED:
            return scale
    return SCALES[-1]


def money_per(usd_per_unit: float | None, unit: str = "correct task", *,
              scale: MoneyScale | None = None) -> str:
    """Dollars per ``unit`` at a human scale: ``$0.488 per 1M correct tasks``.

    ``scale`` pins the scale (to match a table); by default the amount picks its own.
    """
    if _missing(usd_per_unit):
        return NOT_MEASURED
    s = scale or pick_scale([usd_per_unit])
    text = s.amount(usd_per_unit, unit)
    return text if text.startswith(INFINITY) else f"{text} {s.per(unit)}"


def money_per_mtok(usd_per_mtok: float | None) -> str:
    """Dollars per output tokens: ``$0.00707 per 1M output tokens``; per 1B output tokens when
    per 1M would read ``$0.0000…`` (a price typed per hour in fractions of a cent)."""
    if _missing(usd_per_mtok):
        return NOT_MEASURED
    assert usd_per_mtok is not None
    if math.isfinite(usd_per_mtok) and 0 < abs(usd_per_mtok) < TINY_PER_MTOK_USD:
        return money_per(usd_per_mtok / 1e6, "output token", scale=SCALES[-1])
    return money_per(usd_per_mtok, "1M output tokens", scale=ONE)


@dataclass(frozen=True, slots=True)
class MoneyColumn:
    """A table column of money per unit, at one scale: ``header`` goes above ``cells``."""

    scale: MoneyScale
    header: str                # "per 1M correct tasks"
    cells: tuple[str, ...]     # "$0.488", "not measured", "∞ (no correct tasks)"


def money_column(usd_per_unit: Sequence[float | None], unit: str = "correct task"
                 ) -> MoneyColumn:
    """Format a whole column of money per unit at the one scale :func:`pick_scale` gives."""
    scale = pick_scale(usd_per_unit)
    return MoneyColumn(scale, scale.per(unit),
                       tuple(scale.amount(v, unit) for v in usd_per_unit))


# --- money over time --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Period:
    """A stretch of time money is shown over."""

    hours: float
    phrase: str   # "an hour", "a day" ...

    def amount(self, usd_per_hour: float | None) -> str:
        """The amount alone over this period (a table cell under a period header)."""
        if usd_per_hour is None or _missing(usd_per_hour):
            return NOT_MEASURED
        return money(usd_per_hour * self.hours)


PERIODS: tuple[Period, ...] = (
    Period(1.0, "an hour"),
    Period(24.0, "a day"),
    Period(730.0, "a month"),    # 8760 h / 12
    Period(8760.0, "a year"),
)


def pick_period(usd_per_hour: Iterable[float | None]) -> Period:
    """One period for all of ``usd_per_hour``: the shortest at which every finite nonzero
    rate shows at least $1 (a year if none does)."""
    finite = [abs(v) for v in usd_per_hour if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return PERIODS[0]
    smallest = min(finite)
    for period in PERIODS:
        if smallest * period.hours >= RATE_MIN:
            return period
    return PERIODS[-1]


def money_rate(usd_per_hour: float | None, *, period: Period | None = None) -> str:
    """A rate of spending over a human period: 0.10 $/h -> ``$2.40 a day``.

    A rate in dollars per second is ``money_rate(usd_per_s * 3600)``.
    """
    if _missing(usd_per_hour):
        return NOT_MEASURED
    p = period or pick_period([usd_per_hour])
    return f"{p.amount(usd_per_hour)} {p.phrase}"


@dataclass(frozen=True, slots=True)
class RateColumn:
    """A table column of money rates over one period: ``header`` goes above ``cells``."""

    period: Period
    header: str                # "a day"
    cells: tuple[str, ...]


def rate_column(usd_per_hour: Sequence[float | None]) -> RateColumn:
    """Format a whole column of rates over the one period :func:`pick_period` gives."""
    period = pick_period(usd_per_hour)
    return RateColumn(period, period.phrase, tuple(period.amount(v) for v in usd_per_hour))


# --- intervals and ratios ---------------------------------------------------------------------

def interval(low: float | None, high: float | None,
             fmt: Callable[[float], str] = number) -> str:
    """``[low–high]`` (en dash), both ends through ``fmt``; ``not measured`` if either end is
    missing. For money per unit, pass ``scale.amount`` of one :class:`MoneyScale`."""
    if _missing(low) or _missing(high):
        return NOT_MEASURED
    assert low is not None and high is not None
    if low > high:
        raise ValueError(f"interval low {low!r} is above high {high!r}")
    return f"[{fmt(low)}–{fmt(high)}]"


def money_per_interval(low: float | None, high: float | None, unit: str = "correct task", *,
                       scale: MoneyScale | None = None) -> str:
    """An interval of money per unit at one scale: ``[$0.45–$0.52] per 1M correct tasks``."""
    if _missing(low) or _missing(high):
        return NOT_MEASURED
    s = scale or pick_scale([low, high])
    return f"{interval(low, high, lambda v: s.amount(v, unit))} {s.per(unit)}"


def money_per_with_interval(usd_per_unit: float | None,
                            ci: tuple[float | None, float | None] | None,
                            unit: str = "correct task", *,
                            scale: MoneyScale | None = None) -> str:
    """A figure and its interval at one scale: ``$0.266 per 1K correct workflows
    [$0.0658–$1.49]``; the interval is left out when an end is unknown."""
    scale = scale or pick_scale([usd_per_unit, *(ci or ())])
    text = money_per(usd_per_unit, unit, scale=scale)
    bounds = usd_interval(ci, scale=scale)
    return f"{text} {bounds}" if bounds else text


def _ratio_decimals(exp: int) -> int:
    return 0 if exp >= 1 else (1 if exp == 0 else 1 - exp)


def _ratio_round(x: float) -> tuple[Decimal, int]:
    """One decimal from 1 to 10, whole from 10 up, 2 significant digits below 1; a ratio
    that one decimal would show as ``1.0`` but is not 1 keeps two (``1.02×``), so a small
    margin never reads as none."""
    q, places = _round(x, _ratio_decimals)
    if abs(q) == 1 and abs(x) != 1 and places < 2:
        places = 2
        q = _quantize(_decimal(x), places)
    return q, places


def round_ratio(x: float) -> float:
    """The value :func:`times` shows for ``x`` (see :func:`_ratio_round`)."""
    if not math.isfinite(x):
        return x
    q, _ = _ratio_round(x)
    return float(q)


def times(x: float | None) -> str:
    """A ratio already computed: ``2.1×``, ``12×``, ``0.83×``."""
    if _missing(x):
        return NOT_MEASURED
    assert x is not None
    if math.isinf(x):
        return f"{INFINITY}×" if x > 0 else f"-{INFINITY}×"
    q, places = _ratio_round(x)
    if q == 0 and x != 0:
        return f"{NEAR_ZERO}0×"
    return f"{_fixed(q, places)}×"


def ratio(a: float | None, b: float | None) -> str:
    """``a / b`` as ``2.1×``; ``∞×`` when only ``b`` is 0, ``not measured`` for 0/0 or a
    missing side."""
    if _missing(a) or _missing(b):
        return NOT_MEASURED
    assert a is not None and b is not None
    if b == 0:
        return NOT_MEASURED if a == 0 else times(math.copysign(math.inf, a))
    return times(a / b)


def usd_interval(ci: tuple[float | None, float | None] | None, *,
                 scale: MoneyScale | None = None) -> str:
    """A cost interval's ends at one scale, ``[$0.45–$0.52]`` (the unit is said beside it);
    "" when an end is unknown."""
    if ci is None or _missing(ci[0]) or _missing(ci[1]):
        return ""
    s = scale or pick_scale([ci[0], ci[1]])
    return interval(ci[0], ci[1], lambda v: money(v * s.factor))


ONE = SCALES[0]
