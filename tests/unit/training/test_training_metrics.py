"""The training metrics on hand-computed fixtures."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acceval.training import metrics as m
from acceval.training.ingest import read_log
from acceval.training.log import Eval, Event, RunLog, Step
from acceval.training.spec import Columns, QualityTarget
from acceval.training.trace import split_step

FIXTURES = Path(__file__).parents[2] / "fixtures" / "training"


def test_mlperf_score_drops_the_fastest_and_slowest() -> None:
    s = m.mlperf_score([10.0, 12.0, 11.0, 30.0, 9.0])
    assert s.valid and s.value_s == pytest.approx(11.0)   # mean of 10, 11, 12
    assert set(s.dropped) == {4, 3} and sorted(s.scored) == [0, 1, 2]
    assert (s.min_s, s.max_s) == (9.0, 30.0)
    assert s.window == (10.0, 12.0)


def test_one_run_that_never_converges_counts_as_the_slowest() -> None:
    s = m.mlperf_score([10.0, None, 14.0, 12.0])
    assert s.valid and s.value_s == pytest.approx(13.0)   # 12 and 14; 10 and the failure out
    assert 1 in s.dropped and "counts as the slowest" in s.reason


def test_two_runs_that_never_converge_make_it_invalid() -> None:
    s = m.mlperf_score([10.0, None, 14.0, None, 12.0])
    assert not s.valid and s.value_s is None and "invalid" in s.reason
    assert (s.min_s, s.max_s) == (10.0, 14.0)


def test_fewer_than_three_runs_are_not_scored() -> None:
    s = m.mlperf_score([10.0, 12.0])
    assert not s.valid and "at least 3" in s.reason


@given(st.lists(st.floats(min_value=0.1, max_value=1e4), min_size=3, max_size=20))
def test_the_score_lies_within_the_spread(times: list[float]) -> None:
    s = m.mlperf_score(times)
    assert s.value_s is not None and min(times) <= s.value_s <= max(times)


def test_first_reaching_in_log_order() -> None:
    log = RunLog("x", "jsonl", evals=[Eval(5, 1.0, loss=2.0), Eval(10, 2.0, loss=1.7),
                                      Eval(15, 3.0, loss=1.5)])
    r = m.first_reaching(log, QualityTarget(max_eval_loss=1.8))
    assert r is not None and (r.step, r.t_s) == (10, 2.0)
    assert m.first_reaching(log, QualityTarget(max_eval_loss=1.0)) is None
    acc = RunLog("x", "jsonl", evals=[Eval(5, 1.0, accuracy=0.5), Eval(9, 4.0, accuracy=0.9)])
    r = m.first_reaching(acc, QualityTarget(min_accuracy=0.9))
    assert r is not None and r.step == 9


def test_a_spike_is_judged_against_its_own_past() -> None:
    steps = [Step(i, float(i), loss=1.0 + 0.01 * (i % 2)) for i in range(30)]
    steps[25].loss = 5.0
    spikes = m.rolling_spikes(steps, "loss", z=4.0, window=20)
    assert [s.step for s in spikes] == [25] and spikes[0].z > 4.0
    assert m.rolling_spikes(steps, "loss", z=1e6, window=20) == []


def test_nan_steps_and_divergence() -> None:
    rising = [Step(i, loss=1.0 + i * 0.1) for i in range(10)]
    st_ = m.stability(rising, z=4.0, window=3)
    assert st_.diverged and "last 3" in st_.divergence
    falling = [Step(i, loss=2.0 - i * 0.1) for i in range(10)] + [Step(10, loss=math.nan)]
    st_ = m.stability(falling, z=4.0, window=3)
    assert st_.nan_steps == 1 and st_.diverged     # it ended on a NaN


def test_restarts_find_the_work_lost_since_the_checkpoint() -> None:
    log = read_log(FIXTURES / "steps.jsonl", None, Columns())
    rs = m.restarts(log)
    (it,) = rs.interruptions
    assert (it.checkpoint_step, it.reached_step, it.lost_steps) == (6, 8, 2)
    assert it.lost_s == pytest.approx(1.6 - 1.25)
    assert it.time_to_resume_s == pytest.approx(2.1 - 1.6)    # step 7 again
    # past step 8: step 10 (step 9's line is not understood: its loss is not a number)
    assert it.time_to_recover_s == pytest.approx(2.5 - 1.6)
    assert (rs.checkpoint_saves, rs.checkpoint_restores) == (1, 1)
    kept = m.preserved_steps(log, rs)
    assert [s.step for s in kept] == [1, 2, 3, 4, 5, 6, 7, 8, 10]


def test_goodput_splits_the_whole_wall_time() -> None:
    log = read_log(FIXTURES / "steps.jsonl", None, Columns())
    g = m.goodput(log, m.restarts(log))
    assert g is not None and g.wall_s == 2.7
    # 9 preserved steps (1-6, then 7, 8 and 10 after the restart) of 0.1 s, 0.01 s of it data
    assert g.productive_s == pytest.approx(0.9 - 0.09)
    assert g.badput_s["startup"] == pytest.approx(0.8)
    assert g.badput_s["checkpoint_restore"] == pytest.approx(0.1)
    assert g.productive_s + sum(g.badput_s.values()) == pytest.approx(g.wall_s)
    assert g.goodput == pytest.approx(g.productive_s / 2.7)


def test_flops_per_token_and_mfu() -> None:
    # PaLM: 6N + 12·L·H·Q·T
    assert m.flops_per_token(1e6, layers=2, heads=4, head_dim=8, seq_len=16) == 6e6 + 12 * 1024
    assert m.flops_per_token(1e6) == 6e6
    assert m.flops_per_token(1e6, layers=2, heads=4, head_dim=8, seq_len=16,
                             recompute=True) == 8e6 + 16 * 1024
    assert m.mfu(6e9, 1000.0, 1e13, chips=2) == pytest.approx(0.3)


def test_the_temporal_breakdown_and_overlap() -> None:
    s = split_step((0.0, 100_000.0), compute=[(0.0, 50_000.0), (40_000.0, 60_000.0)],
                   comm=[(50_000.0, 80_000.0)])
    assert s.compute_ms == 60.0 and s.communication_ms == 30.0
    assert s.overlap_ms == 10.0 and s.idle_ms == 20.0
    sat = m.saturation([s], input_share=0.05)
    assert sat is not None and sat.bound == "compute-bound"
    assert sat.exposed_communication_share == pytest.approx(0.2)
    comm_heavy = split_step((0.0, 100.0), compute=[(0.0, 20.0)], comm=[(20.0, 90.0)])
    sat = m.saturation([comm_heavy], input_share=None)
    assert sat is not None and sat.bound == "communication-bound"
    starved = split_step((0.0, 100.0), compute=[(0.0, 30.0)], comm=[])
    sat = m.saturation([starved], input_share=0.5)
    assert sat is not None and sat.bound == "input-bound"


def test_tokens_per_s_over_the_steps_own_time() -> None:
    steps = [Step(1, tokens=100, step_s=0.5), Step(2, tokens=300, step_s=1.5), Step(3)]
    assert m.tokens_per_s(steps) == pytest.approx(200.0)
    assert m.tokens_per_s([Step(1)]) is None


def test_an_event_without_a_time_is_not_an_interruption() -> None:
    log = RunLog("x", "jsonl", events=[Event("interruption")])
    assert m.restarts(log).count == 0
