"""Splitting a point over load generators gives the same load, and merging adds it up."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.loadgen.runner import PointRun, PointSpec, point_schedule
from acceval.metrics.distribution import Distribution
from acceval.results.records import Record
from acceval.scaleout.shard import Streamed, merge_runs, split_point
from acceval.scaleout.spec import Execution, Placement


def _closed(level: int, min_requests: int = 40, warmup: int = 3) -> PointSpec:
    return PointSpec(index=2, label=f"concurrency {level}", kind="concurrency",
                     level=float(level), min_requests=min_requests, warmup_requests=warmup,
                     max_in_flight=100)


def _open(rate: float = 50.0) -> PointSpec:
    return PointSpec(index=1, label=f"poisson {rate:g}", kind="poisson", level=rate, seed=11,
                     min_requests=30, max_duration_s=5.0, max_in_flight=9)


@settings(max_examples=80, deadline=None)
@given(level=st.integers(1, 40), clients=st.integers(1, 9), n_prompts=st.integers(1, 30),
       attempts=st.integers(1, 3), warmup=st.integers(0, 7))
def test_a_closed_loop_split_keeps_the_load_and_each_tasks_attempts(level, clients, n_prompts,
                                                                    attempts, warmup):
    spec = _closed(level, min_requests=n_prompts * attempts, warmup=warmup)
    shards, _ = split_point(spec, n_prompts, clients, first_request_id=100)
    assert len(shards) == min(clients, level)
    assert sum(int(s.spec.level) for s in shards) == level
    assert all(s.spec.level >= 1 for s in shards)
    assert sum(s.spec.warmup_requests for s in shards) == warmup
    if n_prompts >= len(shards):
        # Every task is in exactly one share, and its share sends it `attempts` times.
        owners = Counter(i for s in shards for i in s.prompts)
        assert owners == Counter(range(n_prompts))
        assert sum(s.spec.min_requests for s in shards) == n_prompts * attempts
        assert all(s.spec.min_requests == len(s.prompts) * attempts for s in shards)


@settings(max_examples=50, deadline=None)
@given(clients=st.integers(1, 8), issued=st.lists(st.integers(0, 50), min_size=8, max_size=8))
def test_request_ids_interleave_without_collisions(clients, issued):
    shards, _ = split_point(_closed(8), 10, clients, first_request_id=1000)
    ids = [s.first_request_id + i * s.request_id_step
           for s, n in zip(shards, issued, strict=False) for i in range(n)]
    assert len(ids) == len(set(ids))
    assert min(ids, default=1000) >= 1000


def test_an_open_loop_split_deals_out_the_one_schedule_a_process_would_send():
    spec = _open(50.0)
    whole, seeds = point_schedule(spec)
    shards, info = split_point(spec, 12, 3, first_request_id=0)
    assert info == {"arrivals": seeds}
    dealt = np.sort(np.concatenate([s.schedule_ns for s in shards]))
    assert np.array_equal(dealt, whole)
    assert [s.spec.level for s in shards] == pytest.approx([50 / 3] * 3)
    assert sum(s.spec.min_requests for s in shards) == 30
    assert all(s.spec.max_in_flight == 3 for s in shards)   # 9 shared, rounded up


def test_a_given_schedule_is_dealt_out_unchanged():
    given_ns = np.arange(0, 10_000_000, 1_000_000, dtype=np.int64)
    shards, info = split_point(_open(), 4, 2, first_request_id=0, schedule_ns=given_ns)
    assert info == {"arrivals": "given schedule"}
    assert shards[0].schedule_ns.tolist() == given_ns[0::2].tolist()
    assert shards[1].schedule_ns.tolist() == given_ns[1::2].tolist()


def _run(spec: PointSpec, sent: int, errors: int, stopped: str, start: int, end: int,
         loop_p99: float) -> PointRun:
    loop = Distribution.of(np.array([0.1, 0.2, loop_p99]))
    return PointRun(spec=spec, requested_rate_rps=spec.level, started_ns=start, ended_ns=end,
                    sent=sent, completed=sent - errors, errors=errors, stopped_by=stopped,
                    warmup=1, held_by_cap=2, loop_lag_ms=loop)


def test_merging_adds_counts_pools_raw_lags_and_keeps_the_worst_client_loop():
    spec = _open()
    runs = [_run(spec, 10, 1, "min_satisfied", 5, 90, 0.5),
            _run(spec, 12, 0, "max_duration", 3, 95, 7.0)]
    lags = [1_000_000] * 98 + [9_000_000, 20_000_000]
    merged = merge_runs(spec, runs, lags, {"arrivals": "x"})
    assert (merged.sent, merged.completed, merged.errors) == (22, 21, 1)
    assert (merged.started_ns, merged.ended_ns) == (3, 95)
    assert merged.stopped_by == "max_duration"
    assert merged.warmup == 2 and merged.held_by_cap == 4
    assert merged.lag_max_ms == pytest.approx(20.0)
    assert merged.lag_p99_ms == pytest.approx(float(np.percentile(np.array(lags) / 1e6, 99)))
    assert merged.loop_lag_ms is runs[1].loop_lag_ms
    assert merged.seeds == {"arrivals": "x", "load_generators": 2}
    lost = merge_runs(spec, runs[:1], lags, {}, lost=1)
    assert lost.stopped_by == "client_lost"
    assert lost.seeds["load_generators"] == 2


def test_a_lost_generator_counts_what_it_streamed_as_its_records_do():
    """Issue 30: the point said 800 sent while 1,053 records (253 from the lost generator)
    were kept and summarised."""
    spec = _open()
    streamed = Streamed()
    for i in range(253):
        streamed.add(Record(target="t", load_index=0, load_label="x", request_id=i,
                            task_id="k", warmup=i < 3, error_kind="http" if i % 50 == 0
                            else None))
    merged = merge_runs(spec, [_run(spec, 800, 4, "min_satisfied", 0, 9, 0.5)], [1], {},
                        lost=1, streamed=[streamed])
    assert (merged.sent, merged.completed, merged.errors) == (1053, 796 + 247, 4 + 6)
    assert merged.warmup == 1 + 3


def test_the_execution_section_refuses_what_the_local_backend_cannot_do():
    with pytest.raises(ValueError, match="needs backend: ray"):
        Execution(clients=2)
    with pytest.raises(ValueError, match="needs backend: ray"):
        Execution(placement=[Placement(target="a", resources={"east": 1})])
    with pytest.raises(ValueError, match="HOST:PORT"):
        Execution(backend="ray", address="nowhere")
    with pytest.raises(ValueError, match="not a custom resource"):
        Placement(target="a", resources={"CPU": 1})
    with pytest.raises(ValueError, match="label key"):
        Placement(target="a", labels={"bad key": "x"})
    ex = Execution(backend="ray", clients=2, address="127.0.0.1:6379",
                   placement=[Placement(target="b", clients=3)])
    assert ex.clients_for("a") == 2 and ex.clients_for("b") == 3
