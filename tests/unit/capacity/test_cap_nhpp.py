"""Non-homogeneous Poisson replay of a profile: hourly counts follow the profile within
Poisson noise, times are sorted and bounded, seeds reproduce, compression keeps rates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.capacity import BurstWindow, DemandProfile, compress_factor, nhpp_schedule

NS = 1_000_000_000


def _hourly_counts(offsets_ns: np.ndarray, hour_len_s: float, hours: int) -> np.ndarray:
    return np.bincount((offsets_ns / NS // hour_len_s).astype(np.int64), minlength=hours)[:hours]


@settings(max_examples=40, deadline=None)
@given(rates=st.lists(st.floats(0.0, 3.0), min_size=24, max_size=24),
       seed=st.integers(0, 2**32 - 1), compress=st.sampled_from([1.0, 6.0, 144.0]))
def test_hourly_counts_match_the_profile(rates: list[float], seed: int, compress: float) -> None:
    p = DemandProfile(tuple(rates))
    horizon_s = 86_400 / compress
    out = nhpp_schedule(p, horizon_s, compress=compress, seed=seed)
    counts = _hourly_counts(out, 3600 / compress, 24)
    expected = np.asarray(rates) * 3600 / compress
    # 6 standard deviations of a Poisson count (+1 for tiny means): a true failure, not noise.
    assert np.all(np.abs(counts - expected) <= 6 * np.sqrt(expected) + 1)
    assert out.dtype == np.int64
    assert np.all(np.diff(out) >= 0)
    assert out.size == 0 or (out[0] >= 0 and out[-1] < horizon_s * NS)


def test_same_seed_same_schedule_other_seed_differs() -> None:
    p = DemandProfile((2.0,) * 24)
    a, b = nhpp_schedule(p, 3600, seed=7), nhpp_schedule(p, 3600, seed=7)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, nhpp_schedule(p, 3600, seed=8))
    gen = np.random.default_rng(7)
    assert np.array_equal(nhpp_schedule(p, 3600, seed=gen), a)


def test_bursts_show_in_the_counts() -> None:
    p = DemandProfile((1.0,) * 24, (BurstWindow(3600, 3600, 10.0),))
    out = nhpp_schedule(p, 3 * 3600, seed=1)
    c = _hourly_counts(out, 3600, 3)
    assert c[1] > 5 * max(c[0], c[2])


def test_compression_keeps_rates_and_shrinks_counts() -> None:
    p = DemandProfile(tuple(float(h % 4 + 1) for h in range(24)))
    k = compress_factor(p, 600)
    assert k == pytest.approx(144)
    out = nhpp_schedule(p, 600, compress=k, seed=3)
    assert out.size == pytest.approx(p.expected_requests() / k, rel=0.05)
    # replay seconds 100..125 are profile hour 4 (rate 1 rps), 75..100 hour 3 (4 rps)
    hour4 = int(((out >= 100 * NS) & (out < 125 * NS)).sum())
    hour3 = int(((out >= 75 * NS) & (out < 100 * NS)).sum())
    assert hour4 == pytest.approx(25, abs=6 * 5 + 1)
    assert hour3 == pytest.approx(100, abs=6 * 10 + 1)


def test_zero_rate_hours_send_nothing() -> None:
    p = DemandProfile(tuple(0.0 if h < 12 else 1.0 for h in range(24)))
    out = nhpp_schedule(p, 86_400, seed=0)
    assert out.size and out[0] >= 12 * 3600 * NS


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf")])
def test_bad_compression_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="compress"):
        nhpp_schedule(DemandProfile((1.0,) * 24), 10, compress=bad)
