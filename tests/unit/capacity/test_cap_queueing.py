"""Erlang B/C, M/M/c and Allen–Cunneen against hand-computed values; fleet sizing
properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.capacity import erlang_b, erlang_c, ggc, min_servers, mmc, variability_factor


def test_erlang_b_one_server_is_a_over_1_plus_a() -> None:
    assert float(erlang_b(1, 3.0)) == pytest.approx(3.0 / 4.0)
    assert float(erlang_b(0, 3.0)) == 1.0


def test_erlang_c_hand_value_three_servers_two_erlangs() -> None:
    # B(3, 2) = (8/6) / (1 + 2 + 2 + 8/6) = 4/19;  C = 3B / (3 - 2(1 - B)) = 4/9.
    assert float(erlang_b(3, 2.0)) == pytest.approx(4 / 19)
    assert float(erlang_c(3, 2.0)) == pytest.approx(4 / 9)
    q = mmc(2.0, 1.0, 3)
    assert q.mean_wait_s == pytest.approx(4 / 9)      # C S / (c - a)
    assert q.utilization == pytest.approx(2 / 3)
    assert q.p_wait_longer(1.0) == pytest.approx(4 / 9 * math.exp(-1.0))


def test_mm1_mean_wait_is_rho_over_mu_minus_lambda() -> None:
    lam, mu = 3.0, 5.0
    q = mmc(lam, 1 / mu, 1)
    assert q.p_wait == pytest.approx(lam / mu)
    assert q.mean_wait_s == pytest.approx((lam / mu) / (mu - lam))


def test_textbook_call_centre_needs_six_agents() -> None:
    # 30 calls/h, 5-minute calls: a = 2.5 Erlang; P(wait) < 10% first at c = 6.
    assert float(erlang_c(5, 2.5)) == pytest.approx(0.1304, abs=5e-4)
    assert float(erlang_c(6, 2.5)) == pytest.approx(0.0474, abs=5e-4)
    assert min_servers(30 / 3600, 300, max_p_wait=0.10).servers == 6


def test_unstable_queue_always_waits() -> None:
    assert float(erlang_c(2, 2.0)) == 1.0
    q = mmc(5.0, 1.0, 4)
    assert not q.stable and math.isinf(q.mean_wait_s) and q.p_wait_longer(10) == 1.0


def test_allen_cunneen_scales_the_mmc_wait() -> None:
    base = mmc(8.0, 0.5, 5)
    det = ggc(8.0, 0.5, 5, cv_arrival=1.0, cv_service=0.0)  # M/D/c: half the wait
    bursty = ggc(8.0, 0.5, 5, cv_arrival=2.0, cv_service=1.0)
    assert det.mean_wait_s == pytest.approx(base.mean_wait_s * 0.5)
    assert bursty.mean_wait_s == pytest.approx(base.mean_wait_s * 2.5)
    assert variability_factor(1, 1) == 1.0


def test_min_servers_respects_mean_wait_and_steps() -> None:
    q = min_servers(100.0, 0.2, max_mean_wait_s=0.01)
    assert q.mean_wait_s <= 0.01
    assert mmc(100.0, 0.2, q.servers - 1).mean_wait_s > 0.01
    stepped = min_servers(100.0, 0.2, max_mean_wait_s=0.01, step=8)
    assert stepped.servers % 8 == 0 and stepped.servers >= q.servers


@settings(max_examples=80, deadline=None)
@given(lam=st.floats(0.0, 500.0), extra=st.floats(0.0, 200.0), s=st.floats(0.01, 5.0),
       wait=st.floats(0.001, 10.0), cv=st.floats(0.0, 3.0))
def test_fleet_size_is_monotone_bounded_and_feasible(lam: float, extra: float, s: float,
                                                     wait: float, cv: float) -> None:
    lo = min_servers(lam, s, max_mean_wait_s=wait * s, cv_arrival=cv)
    hi = min_servers(lam + extra, s, max_mean_wait_s=wait * s, cv_arrival=cv)
    assert lo.servers <= hi.servers
    for q, rate in ((lo, lam), (hi, lam + extra)):
        assert q.servers >= math.ceil(rate * s)           # offered-load bound
        assert q.servers >= 1
        assert 0 <= q.utilization < 1
        assert q.mean_wait_s <= wait * s
