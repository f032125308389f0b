"""The t-interval over repeats against textbook values (Student's t table)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acceval.metrics.repeats import t_cdf, t_interval, t_quantile


@pytest.mark.parametrize(("df", "q975"), [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262),
                                          (30, 2.042)])
def test_t_quantile_matches_the_table(df: int, q975: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(q975, abs=5e-4)
    assert t_quantile(0.025, df) == pytest.approx(-q975, abs=5e-4)


def test_interval_of_three_values_by_hand() -> None:
    # mean 12, s = 2, half = 4.303 * 2 / sqrt(3)
    i = t_interval([10.0, 12.0, 14.0])
    assert i.n == 3 and i.mean == pytest.approx(12.0)
    assert i.low == pytest.approx(12.0 - 4.3027 * 2 / math.sqrt(3), abs=1e-3)
    assert i.high == pytest.approx(12.0 + 4.3027 * 2 / math.sqrt(3), abs=1e-3)


def test_one_value_or_missing_ones_give_no_interval() -> None:
    one = t_interval([5.0, None, float("nan")])
    assert one.n == 1 and one.mean == 5.0 and one.low is None and one.high is None
    assert t_interval([]).mean is None
    assert one.overlaps(t_interval([1.0, 2.0])) is None


def test_overlap_decides_no_clear_difference() -> None:
    a, b, c = t_interval([10, 11, 12]), t_interval([11, 12, 13]), t_interval([30, 31, 32])
    assert a.overlaps(b) is True
    assert a.overlaps(c) is False


@given(st.floats(0.01, 50), st.floats(0.5, 200))
def test_quantile_inverts_the_cdf(p_tail: float, df: float) -> None:
    p = 0.5 + p_tail / 101.0
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-9)
