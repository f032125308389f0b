"""Numbers read right: money at a human scale, [low–high] intervals, one ratio rule."""

from __future__ import annotations

import ast
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval import units
from acceval.units import (
    NOT_MEASURED,
    PERIODS,
    SCALES,
    interval,
    money,
    money_column,
    money_per,
    money_per_interval,
    money_per_mtok,
    money_rate,
    number,
    pick_period,
    pick_scale,
    rate_column,
    ratio,
    round_ratio,
    times,
)

MONEY = re.compile(r"-?\$\d{1,3}(,\d{3})*(\.\d+)?")
NUMBER = re.compile(r"-?\d{1,3}(,\d{3})*(\.\d+)?")
EXPONENT = re.compile(r"\d\s*[eE]\s*[-+]?\d|nan|inf", re.IGNORECASE)

any_float = st.floats(allow_nan=True, allow_infinity=True)
# Amounts a bill can resolve: from a picodollar-ish floor to far beyond any fleet.
amount = st.floats(min_value=1e-9, max_value=1e15)
signed_amount = st.one_of(amount, amount.map(lambda v: -v))


def parse_money(text: str) -> float:
    assert MONEY.fullmatch(text), text
    return float(text.replace("$", "").replace(",", ""))


def parse_number(text: str) -> float:
    assert NUMBER.fullmatch(text), text
    return float(text.replace(",", ""))


# --- hand-checked examples -------------------------------------------------------------------

@pytest.mark.parametrize(("usd", "text"), [
    (100_935.4, "$100,935"), (100.0, "$100"), (99.996, "$100"), (12.345, "$12.35"),
    (2.4, "$2.40"), (2.05, "$2.05"), (0.49, "$0.49"), (0.4, "$0.40"), (0.488, "$0.488"),
    (0.0123, "$0.0123"), (4.88e-07, "$0.000000488"), (0.0, "$0.00"), (-0.0, "$0.00"),
    (-5.0, "-$5.00"), (1e22, "$10,000,000,000,000,000,000,000"), (1e-300, "≈$0"),
    (None, NOT_MEASURED), (math.nan, NOT_MEASURED), (math.inf, "∞"),
])
def test_money_examples(usd: float | None, text: str) -> None:
    assert money(usd) == text


@pytest.mark.parametrize(("usd", "text"), [
    (4.88e-07, "$0.488 per 1M correct tasks"),
    (0.0123, "$12.30 per 1K correct tasks"),
    (0.49, "$0.49 per correct task"),
    (0.1, "$0.10 per correct task"),
    (0.0999, "$99.90 per 1K correct tasks"),
    (3.2, "$3.20 per correct task"),
    (1e-11, "$0.01 per 1B correct tasks"),
    (0.0, "$0.00 per correct task"),
    (math.inf, "∞ (no correct tasks)"),
    (None, NOT_MEASURED),
])
def test_money_per_examples(usd: float | None, text: str) -> None:
    assert money_per(usd) == text


def test_money_per_names_any_unit_and_takes_a_pinned_scale() -> None:
    assert money_per(2e-6, "request") == "$2.00 per 1M requests"
    assert money_per(2e-6, "tokens") == "$2.00 per 1M tokens"
    assert money_per(0.5, scale=SCALES[2]) == "$500,000 per 1M correct tasks"
    assert money_per(math.inf, "request", scale=SCALES[2]) == "∞ (no requests)"


@pytest.mark.parametrize(("usd_per_hour", "text"), [
    (0.10, "$2.40 a day"), (4.0, "$4.00 an hour"), (1.0, "$1.00 an hour"),
    (0.001, "$8.76 a year"), (0.002, "$1.46 a month"), (50_000.0, "$50,000 an hour"),
    (1e-9, "$0.00000876 a year"), (0.0, "$0.00 an hour"), (None, NOT_MEASURED),
])
def test_money_rate_examples(usd_per_hour: float | None, text: str) -> None:
    assert money_rate(usd_per_hour) == text


def test_a_rate_in_dollars_per_second_and_a_pinned_period() -> None:
    usd_per_s = 0.10 / 3600
    assert money_rate(usd_per_s * 3600) == "$2.40 a day"
    assert money_rate(4.0, period=PERIODS[1]) == "$96.00 a day"


def test_the_module_is_pure() -> None:
    tree = ast.parse(Path(units.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] not in sys.stdlib_module_names}


@pytest.mark.parametrize(("a", "b", "text"), [
    (2.06, 1.0, "2.1×"), (2.05, 1.0, "2.1×"), (2.0, 1.0, "2.0×"), (25.0, 10.0, "2.5×"),
    (12.4, 1.0, "12×"), (153.0, 1.0, "153×"), (5.0, 6.0, "0.83×"), (0.042, 1.0, "0.042×"),
    (0.999, 1.0, "1.00×"), (1.02, 1.0, "1.02×"), (1.0, 1.0, "1.0×"), (9.96, 1.0, "10×"),
    (1.0, 0.0, "∞×"), (0.0, 0.0, NOT_MEASURED),
    (None, 1.0, NOT_MEASURED), (1.0, math.nan, NOT_MEASURED),
])
def test_ratio_examples(a: float | None, b: float | None, text: str) -> None:
    assert ratio(a, b) == text


def test_intervals_use_an_en_dash_and_one_format() -> None:
    assert interval(0.45, 0.52) == "[0.45–0.52]"
    assert interval(1.0, 2.0, money) == "[$1.00–$2.00]"
    assert interval(1.5, 2.06, times) == "[1.5×–2.1×]"
    assert interval(None, 2.0) == NOT_MEASURED
    assert money_per_interval(4.5e-7, 5.2e-7) == "[$0.45–$0.52] per 1M correct tasks"
    assert money_per_interval(0.0123, 0.5) == "[$12.30–$500] per 1K correct tasks"
    with pytest.raises(ValueError, match="above"):
        interval(2.0, 1.0)


def test_a_column_uses_one_scale_for_every_row() -> None:
    col = money_column([4.88e-7, 0.5, None, math.inf])
    assert col.header == "per 1M correct tasks"
    assert col.cells == ("$0.488", "$500,000", NOT_MEASURED, "∞ (no correct tasks)")
    assert money_column([None, math.inf]).header == "per correct task"
    rates = rate_column([0.1, 3.0, None])
    assert rates.header == "a day" and rates.cells == ("$2.40", "$72.00", NOT_MEASURED)


def test_number_keeps_significant_digits_without_exponents() -> None:
    assert [number(v) for v in (1234.5, 12.34, 0.0123, 2.5, 100.0, 4.88e-7)] == [
        "1,235", "12.3", "0.0123", "2.5", "100", "0.000000488"]


# --- properties ------------------------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(any_float)
def test_no_exponent_ever(v: float) -> None:
    outs = [money(v), money_per(v), number(v), times(v), money_rate(v),
            money_column([v]).cells[0], ratio(v, 3.0), ratio(3.0, v)]
    if math.isfinite(v):
        outs.append(interval(v, v))
        outs.append(money_per_interval(v, v))
    for text in outs:
        assert not EXPONENT.search(text), (v, text)


@settings(max_examples=300, deadline=None)
@given(signed_amount)
def test_money_round_trips_within_half_a_percent(v: float) -> None:
    shown = parse_money(money(v))
    assert math.copysign(1.0, shown) == math.copysign(1.0, v)
    assert abs(shown - v) <= 0.005 * abs(v) * (1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(amount, amount)
def test_money_is_monotone(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert parse_money(money(lo)) <= parse_money(money(hi))


@settings(max_examples=300, deadline=None)
@given(amount)
def test_money_per_picks_a_readable_scale_and_round_trips(v: float) -> None:
    scale = pick_scale([v])
    text = money_per(v)
    assert text.endswith(scale.per("correct task"))
    shown = parse_money(text.split(" per ")[0])
    assert abs(shown / scale.factor - v) <= 0.005 * v * (1 + 1e-9)
    if scale is not SCALES[-1]:
        assert v * scale.factor >= 0.10
    if scale is not SCALES[0]:
        assert v * scale.factor / 1000 < 0.10   # a smaller scale would not have done


@settings(max_examples=300, deadline=None)
@given(amount, amount)
def test_the_scale_only_grows_as_amounts_shrink(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert pick_scale([lo]).factor >= pick_scale([hi]).factor
    assert pick_period([lo]).hours >= pick_period([hi]).hours


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.just(math.inf), amount), min_size=1, max_size=8))
def test_a_column_shares_the_scale_of_its_smallest_amount(values: list[float | None]) -> None:
    col = money_column(values)
    finite = [v for v in values if v is not None and math.isfinite(v)]
    expected = pick_scale([min(finite)]) if finite else SCALES[0]
    assert col.scale == expected and col.header == expected.per("correct task")
    assert len(col.cells) == len(values)
    for v, cell in zip(values, col.cells, strict=True):
        if v is None:
            assert cell == NOT_MEASURED
        elif math.isinf(v):
            assert cell.startswith("∞")
        else:
            assert abs(parse_money(cell) / col.scale.factor - v) <= 0.005 * v * (1 + 1e-9)
            if col.scale is not SCALES[-1]:
                assert parse_money(cell) >= 0.10


@settings(max_examples=300, deadline=None)
@given(amount)
def test_money_rate_picks_the_shortest_period_showing_a_dollar(v: float) -> None:
    period = pick_period([v])
    text = money_rate(v)
    assert text.endswith(" " + period.phrase)
    shown = parse_money(text[: -len(period.phrase) - 1])
    assert abs(shown / period.hours - v) <= 0.005 * v * (1 + 1e-9)
    if period is not PERIODS[-1]:
        assert v * period.hours >= 1.0
    shorter = PERIODS[: PERIODS.index(period)]
    assert all(v * p.hours < 1.0 for p in shorter)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e9), st.floats(min_value=1e-6, max_value=1e9))
def test_ratio_shows_round_ratio_and_is_monotone(a: float, b: float) -> None:
    text = times(a)
    assert text.endswith("×")
    assert parse_number(text[:-1]) == round_ratio(a)
    assert ratio(a, b) == times(a / b)
    lo, hi = sorted((a, b))
    assert round_ratio(lo) <= round_ratio(hi)


@settings(max_examples=200, deadline=None)
@given(amount, amount)
def test_an_interval_reads_low_then_high_in_one_format(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    text = interval(lo, hi, money)
    assert text == f"[{money(lo)}–{money(hi)}]"
    text = money_per_interval(lo, hi)
    scale = pick_scale([lo])
    assert text == f"[{scale.amount(lo)}–{scale.amount(hi)}] {scale.per()}"


def test_a_figure_and_its_interval_are_said_at_one_scale() -> None:
    from acceval.units import money_per_with_interval

    # Alone the figure would pick "per 1K" ($0.266) and its interval "per 1M" ($65.82-$1,488);
    # together both are per 1M, where every amount shows at least $0.10.
    text = money_per_with_interval(2.66e-4, (6.582e-5, 1.488e-3), "correct workflow")
    assert text == "$266 per 1M correct workflows [$65.82–$1,488]"
    assert money_per_with_interval(2.66e-4, None, "correct workflow") == (
        "$0.266 per 1K correct workflows")


@pytest.mark.parametrize(("v", "text"), [(6.39e6, "6.39 MFLOP"), (1.2e12, "1.2 TFLOP"),
                                         (999.0, "999 FLOP"), (4.56e15, "4.56 PFLOP"),
                                         (None, "not measured")])
def test_si_prefixes_never_scientific_notation(v: float | None, text: str) -> None:
    from acceval.units import si

    assert si(v, "FLOP") == text


def test_money_per_output_tokens_moves_to_1b_where_1m_would_read_four_zeros() -> None:
    assert money_per_mtok(0.00707) == "$0.00707 per 1M output tokens"
    assert money_per_mtok(0.001) == "$0.001 per 1M output tokens"
    # A price of $0.0001 an hour (fuzzed): per 1M it would read $0.0000572.
    assert money_per_mtok(0.0000572) == "$0.0572 per 1B output tokens"
    assert money_per_mtok(None) == NOT_MEASURED
