"""Arrival schedules: shape, rate, burstiness and seeding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.loadgen import arrivals
from acceval.loadgen.arrivals import arrivals_seed, seed_info
from acceval.loadgen.spec import schedule

_NS = 1_000_000_000
kinds = st.sampled_from(["constant", "poisson", "gamma"])
rates = st.floats(min_value=0.5, max_value=5000.0)
horizons = st.floats(min_value=0.01, max_value=20.0)
burst = st.floats(min_value=0.1, max_value=10.0)


def _rng(seed: int = 0, index: int = 0) -> np.random.Generator:
    return np.random.default_rng(arrivals_seed(seed, index))


@settings(max_examples=60, deadline=None)
@given(kind=kinds, rate=rates, horizon=horizons, b=burst, seed=st.integers(0, 2**32))
def test_offsets_are_sorted_int64_inside_the_horizon(kind: str, rate: float, horizon: float,
                                                     b: float, seed: int) -> None:
    off = schedule(kind, rate, horizon, rng=_rng(seed), burstiness=b)  # type: ignore[arg-type]
    assert off.dtype == np.int64
    assert np.all(np.diff(off) >= 0)
    if len(off):
        assert off[0] >= 0 and off[-1] < horizon * _NS


@settings(max_examples=40, deadline=None)
@given(kind=kinds, rate=st.floats(min_value=50.0, max_value=2000.0),
       b=st.floats(min_value=0.25, max_value=8.0), seed=st.integers(0, 2**32))
def test_mean_rate_matches_the_request(kind: str, rate: float, b: float, seed: int) -> None:
    horizon = 4000.0 / rate          # about 4000 arrivals expected
    off = schedule(kind, rate, horizon, rng=_rng(seed), burstiness=b)  # type: ignore[arg-type]
    expected = rate * horizon
    # Count of a renewal process: variance ~ expected * CV^2, CV^2 = 1/b for gamma.
    cv2 = {"constant": 0.0, "poisson": 1.0, "gamma": 1.0 / b}[kind]
    assert abs(len(off) - expected) <= 6.0 * np.sqrt(expected * cv2) + 2.0


def test_constant_is_evenly_spaced_from_zero() -> None:
    off = schedule("constant", 4.0, 1.0)
    assert off.tolist() == [0, 250_000_000, 500_000_000, 750_000_000]


@settings(max_examples=25, deadline=None)
@given(b=st.floats(min_value=0.2, max_value=8.0), seed=st.integers(0, 2**32))
def test_gamma_cv_is_one_over_sqrt_burstiness(b: float, seed: int) -> None:
    off = schedule("gamma", 1000.0, 20.0, rng=_rng(seed), burstiness=b)
    gaps = np.diff(off).astype(np.float64)
    cv = gaps.std() / gaps.mean()
    assert cv == pytest.approx(1.0 / np.sqrt(b), rel=0.12)


def test_lower_burstiness_is_burstier() -> None:
    cvs = []
    for b in (0.25, 1.0, 4.0):
        gaps = np.diff(schedule("gamma", 500.0, 20.0, rng=_rng(3), burstiness=b))
        cvs.append(gaps.std() / gaps.mean())
    assert cvs[0] > cvs[1] > cvs[2]
    poisson = np.diff(schedule("poisson", 500.0, 20.0, rng=_rng(3)))
    assert poisson.std() / poisson.mean() == pytest.approx(1.0, rel=0.1)


def test_same_seed_same_schedule_other_point_other_schedule() -> None:
    a = schedule("poisson", 100.0, 5.0, rng=_rng(7, 0))
    b = schedule("poisson", 100.0, 5.0, rng=_rng(7, 0))
    c = schedule("poisson", 100.0, 5.0, rng=_rng(7, 1))
    d = schedule("poisson", 100.0, 5.0, rng=_rng(8, 0))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d)


def test_seed_is_a_spawned_child_and_info_reproduces_it() -> None:
    ss = arrivals_seed(11, 3)
    assert ss.generate_state(4).tolist() == (
        np.random.SeedSequence(11).spawn(1)[0].spawn(4)[3].generate_state(4).tolist()
    )
    info = seed_info(ss)
    assert info == {"entropy": 11, "spawn_key": [0, 3], "bit_generator": "PCG64"}
    again = np.random.SeedSequence(info["entropy"], spawn_key=tuple(info["spawn_key"]))
    assert np.random.default_rng(again).random() == np.random.default_rng(ss).random()


@pytest.mark.parametrize(
    ("kind", "rate", "horizon", "msg"),
    [("poisson", 0.0, 1.0, "rate"), ("poisson", 1.0, 0.0, "horizon"),
     ("weibull", 1.0, 1.0, "unknown"), ("poisson", float("inf"), 1.0, "rate")],
)
def test_bad_arguments_are_refused(kind: str, rate: float, horizon: float, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        schedule(kind, rate, horizon, rng=_rng())  # type: ignore[arg-type]


def test_stochastic_kinds_need_an_rng() -> None:
    with pytest.raises(ValueError, match="rng"):
        schedule("poisson", 1.0, 1.0)


@pytest.mark.parametrize("rate_rps", [1e-300, 5e-324, 1e-12])
def test_a_tiny_positive_rate_never_schedules_outside_the_point(rate_rps: float) -> None:
    """Issue 30: a gap of 1e300 s overflowed int64 nanoseconds and wrapped to a negative
    send time, which crashed the analysis."""
    offsets = arrivals.renewal(arrivals.exponential_gaps(rate_rps), rate_rps, 10.0,
                               rng=np.random.default_rng(1))
    assert ((offsets >= 0) & (offsets < 10 * 10**9)).all()
    assert len(offsets) <= 1
