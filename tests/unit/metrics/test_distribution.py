import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.metrics import Distribution, percentile
from acceval.metrics.distribution import sorted_quantiles


def test_empty_is_all_none():
    d = Distribution.of(np.array([]))
    assert d.count == 0
    assert d.model_dump(exclude={"count"}) == dict.fromkeys(
        ("mean", "std", "min", "p50", "p90", "p95", "p99", "p999", "max"))


def test_only_nan_is_empty():
    assert Distribution.of(np.array([np.nan, np.nan])) == Distribution(count=0)


def test_hand_values_ignore_nan():
    d = Distribution.of(np.array([10.0, np.nan, 20.0]))
    assert d.count == 2
    assert d.mean == 15.0
    assert d.std == 5.0          # population std
    assert d.min == 10.0 and d.max == 20.0
    assert d.p50 == 15.0
    assert d.p90 == pytest.approx(19.0)   # linear interpolation
    assert d.p999 == pytest.approx(19.99)


def test_single_value():
    d = Distribution.of([7.0])
    assert (d.count, d.std, d.p50, d.p999) == (1, 0.0, 7.0, 7.0)


def test_percentile_helper_and_stored_levels():
    assert percentile([1.0, 2.0, 3.0, np.nan], 50) == 2.0
    assert percentile([np.nan], 50) is None
    d = Distribution.of([1.0, 2.0, 3.0, 4.0])
    assert d.percentile(0) == 1.0 and d.percentile(100) == 4.0
    assert d.percentile(99.9) == d.p999
    with pytest.raises(ValueError, match="not stored"):
        d.percentile(75)


def test_json_round_trip():
    d = Distribution.of([1.5, 2.5, 9.0])
    assert Distribution.model_validate_json(d.model_dump_json()) == d
    empty = Distribution.of([])
    assert Distribution.model_validate_json(empty.model_dump_json()) == empty


floats = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@given(st.lists(floats, min_size=1, max_size=200))
def test_percentiles_monotone(values):
    d = Distribution.of(np.array(values))
    chain = [d.min, d.p50, d.p90, d.p95, d.p99, d.p999, d.max]
    assert all(a is not None for a in chain)
    assert all(a <= b for a, b in itertools.pairwise(chain))
    assert d.min <= d.mean <= d.max or math.isclose(d.mean, d.min) or math.isclose(d.mean, d.max)
    assert d.count == len(values)


@settings(max_examples=300)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64,
                          min_value=-1e12, max_value=1e12), min_size=1, max_size=400),
       st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=6))
def test_sorted_quantiles_are_numpys_percentiles_to_the_bit(values: list[float],
                                                            qs: list[float]) -> None:
    arr = np.array(values)
    levels = [*qs, 50.0, 90.0, 95.0, 99.0, 99.9, 0.0, 100.0]
    ours = sorted_quantiles(np.sort(arr), levels)
    assert np.array_equal(ours, np.percentile(arr, levels))


def test_the_summary_of_a_large_sample_is_numpys() -> None:
    # Ties, a long tail and an odd size: the sample a point of a million-record run gives.
    rng = np.random.default_rng(7)
    v = np.concatenate([rng.lognormal(3, 1, 250_001), np.full(999, 20.0), [np.nan] * 5])
    d = Distribution.of(v)
    x = v[~np.isnan(v)]
    levels = [q for _, q in Distribution.QUANTILES]
    assert [getattr(d, n) for n, _ in Distribution.QUANTILES] == list(np.percentile(x, levels))
    assert (d.min, d.max, d.mean, d.std, d.count) == (x.min(), x.max(), x.mean(), x.std(), x.size)
