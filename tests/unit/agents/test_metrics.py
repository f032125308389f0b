"""The workflow metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from acceval.agents.metrics import pass_hat_k, per_step_success, rate, stats


def test_pass_hat_k_is_taubench_all_k_trials_succeed() -> None:
    # C(2,2)/C(4,2) = 1/6, C(4,2)/C(4,2) = 1, C(0,2)/C(4,2) = 0  ->  mean 7/18
    assert pass_hat_k([(2, 4), (4, 4), (0, 4)], 2) == pytest.approx(7 / 18)
    # k = 1 is the plain success rate averaged over tasks
    assert pass_hat_k([(2, 4), (4, 4), (0, 4)], 1) == pytest.approx(0.5)
    # C(3,3)/C(4,3) = 1/4
    assert pass_hat_k([(3, 4)], 3) == pytest.approx(0.25)


def test_pass_hat_k_leaves_out_tasks_with_too_few_trials() -> None:
    assert pass_hat_k([(2, 2), (0, 1)], 2) == pytest.approx(1.0)
    assert pass_hat_k([(1, 1)], 2) is None
    with pytest.raises(ValueError):
        pass_hat_k([(1, 1)], 0)


def test_per_step_success_of_one_length_is_the_root_of_its_completion() -> None:
    fit = per_step_success([(2, 100, 64)])  # 0.8 ** 2 = 0.64
    assert fit.value == pytest.approx(0.8, abs=1e-6)
    assert fit.ci_low is not None and fit.ci_high is not None
    assert fit.ci_low < 0.8 < fit.ci_high
    # a 1-step workflow: p is the completion itself
    assert per_step_success([(1, 10, 7)]).value == pytest.approx(0.7, abs=1e-6)


def test_per_step_success_pools_lengths_and_handles_the_extremes() -> None:
    pooled = per_step_success([(1, 50, 45), (4, 50, 33)])  # 0.9 and 0.9 ** 4 = 0.656
    assert pooled.value == pytest.approx(0.9, abs=0.01)
    all_ok = per_step_success([(3, 5, 5)])
    assert all_ok.value == 1.0 and all_ok.ci_high == 1.0
    assert all_ok.ci_low is not None and 0.5 < all_ok.ci_low < 1.0
    none_ok = per_step_success([(3, 5, 0)])
    assert none_ok.value == 0.0 and none_ok.ci_high is not None and none_ok.ci_high < 1.0
    assert per_step_success([]).value is None


def test_rate_and_stats_say_missing_as_none() -> None:
    r = rate(3, 10)
    assert r.value == pytest.approx(0.3) and r.ci_low is not None and r.ci_low < 0.3
    empty = rate(0, 0)
    assert empty.value is None and empty.ci_low is None
    s = stats([1.0, 2.0, 3.0, 4.0, math.inf])
    assert (s.n, s.mean, s.p50, s.max) == (4, 2.5, 2.5, 4.0)
    assert stats([]).mean is None
