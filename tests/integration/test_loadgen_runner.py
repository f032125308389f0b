"""run_point against a real SSE server on 127.0.0.1: counts, warm-up, stop rules, accounting."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest

from acceval.loadgen.arrivals import arrivals_seed
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.loadgen.spec import Concurrency, PoissonRate, schedule
from acceval.results.records import Record
from acceval.targets import OpenAITarget
from acceval.targets.spec import Endpoint
from helpers.sse_server import ServerConfig, SSEServer

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

PROMPTS = [Prompt(f"task-{i}", prompt=f"question {i}", max_tokens=4) for i in range(10)]


def _spec(**kw: Any) -> PointSpec:
    base: dict[str, Any] = {"index": 0, "label": "p", "kind": "concurrency", "level": 4,
                            "max_duration_s": 10.0}
    base.update(kw)
    return PointSpec(**base)


async def _run(spec: PointSpec, cfg: ServerConfig | None = None, prompts: list[Prompt] = PROMPTS,
               timeout_s: float = 5.0, **kw: Any) -> tuple[PointRun, list[Record]]:
    recs: list[Record] = []
    async with SSEServer(cfg or ServerConfig(tokens=4)) as srv:
        target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m",
                                            timeout_s=timeout_s))
        await target.start()
        try:
            res = await run_point(target, prompts, spec, recs.append,
                                  t0_ns=time.perf_counter_ns(), **kw)
        finally:
            await target.close()
    return res, recs


def _accounted(res: PointRun, recs: list[Record]) -> None:
    """Every request issued is exactly one finished record."""
    assert len(recs) == res.sent
    assert sorted(r.request_id for r in recs) == list(range(res.sent))
    assert all(r.done_ns is not None for r in recs)
    assert res.completed + res.errors == res.sent
    assert sum(r.error_kind is None for r in recs) == res.completed


def test_closed_loop_sends_exactly_min_requests_after_warmup() -> None:
    spec = _spec(level=4, warmup_requests=3, min_requests=40)
    res, recs = run(_run(spec))
    _accounted(res, recs)
    assert res.stopped_by == "min_satisfied" and res.requested_rate_rps is None
    assert res.sent == 43 and res.warmup == 3 and res.errors == 0
    by_id = sorted(recs, key=lambda r: r.request_id)
    assert [r.warmup for r in by_id[:3]] == [True] * 3
    measured = [r for r in by_id if not r.warmup]
    # Measured request i uses prompt i % n as attempt i // n: every task 4 times, once each.
    assert Counter((r.task_id, r.attempt) for r in measured) == Counter(
        (f"task-{i}", a) for i in range(10) for a in range(4))
    assert all(r.scheduled_ns is None for r in recs)
    # Never more than `level` requests in flight.
    events = sorted([(r.sent_ns, 1) for r in recs] + [(r.done_ns, -1) for r in recs],
                    key=lambda e: (e[0], e[1]))
    depth = np.cumsum([d for _, d in events])
    assert depth.max() <= 4


def test_open_loop_follows_the_seeded_schedule() -> None:
    spec = _spec(kind="poisson", level=400.0, seed=5, index=2, min_requests=60,
                 max_duration_s=5.0)
    res, recs = run(_run(spec))
    _accounted(res, recs)
    assert res.stopped_by == "min_satisfied" and res.requested_rate_rps == 400.0
    assert res.seeds["arrivals"]["spawn_key"] == [0, 2]
    expected = schedule("poisson", 400.0, 5.0, rng=np.random.default_rng(arrivals_seed(5, 2)))
    by_id = sorted(recs, key=lambda r: r.request_id)
    offsets = [r.scheduled_ns - res.started_ns for r in by_id]  # type: ignore[operator]
    assert offsets == expected[: res.sent].tolist()
    assert all(r.sent_ns >= r.scheduled_ns for r in by_id)  # type: ignore[operator]
    assert res.lag_p99_ms is not None and res.lag_p99_ms >= 0


def test_open_loop_min_duration_keeps_sending() -> None:
    spec = _spec(kind="constant", level=100.0, min_requests=1, min_duration_s=0.25)
    res, recs = run(_run(spec))
    _accounted(res, recs)
    assert res.stopped_by == "min_satisfied"
    assert res.sent == 25  # offsets 0, 10, ..., 240 ms; the one at 250 ms is past the rule


def test_warmup_seconds_mark_scheduled_requests() -> None:
    spec = _spec(kind="constant", level=100.0, warmup_s=0.1, min_requests=20)
    res, recs = run(_run(spec))
    _accounted(res, recs)
    assert res.warmup == 10 and res.sent == 30
    by_id = sorted(recs, key=lambda r: r.request_id)
    assert [r.warmup for r in by_id] == [True] * 10 + [False] * 20
    assert [r.task_id for r in by_id[10:20]] == [p.task_id for p in PROMPTS]


def test_max_duration_stops_a_point_that_would_run_on() -> None:
    spec = _spec(level=2, min_requests=10**9, max_duration_s=0.3)
    res, recs = run(_run(spec, ServerConfig(tokens=4, itl_s=0.002)))
    _accounted(res, recs)
    assert res.stopped_by == "max_duration" and res.sent > 4


def test_from_study_defaults_min_requests_to_every_task_attempt() -> None:
    load = PoissonRate(poisson_rps=[2.0, 5.0], burstiness=1.0, warmup_requests=2)
    spec = PointSpec.from_study(load, 5.0, 3, 99, n_prompts=10, attempts=3)
    assert (spec.kind, spec.level, spec.index, spec.seed) == ("poisson", 5.0, 3, 99)
    assert spec.min_requests == 30 and spec.warmup_requests == 2
    assert spec.label == "poisson 5 rps"
    closed = PointSpec.from_study(Concurrency(concurrency=[8], min_requests=7), 8, 0, 0, 10, 1)
    assert closed.label == "concurrency 8" and closed.min_requests == 7


def test_stop_event_interrupts_and_records_in_flight() -> None:
    recs: list[Record] = []

    async def go() -> PointRun:
        stop = asyncio.Event()
        async with SSEServer(ServerConfig(fault="hang")) as srv:

            async def stop_after_ten() -> None:
                while srv.stats.requests < 10:
                    await asyncio.sleep(0.005)
                stop.set()

            target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m"))
            stopper = asyncio.ensure_future(stop_after_ten())
            try:
                return await run_point(target, PROMPTS, _spec(kind="constant", level=200.0,
                                                              min_requests=10**6),
                                       recs.append, t0_ns=0, stop=stop)
            finally:
                stopper.cancel()
                await target.close()

    res = run(go())
    _accounted(res, recs)
    assert res.stopped_by == "interrupted" and res.sent >= 10
    assert {(r.error_kind, r.error_detail) for r in recs} == {("client", "interrupted")}


def test_cancelling_the_point_still_records_every_request() -> None:
    recs: list[Record] = []

    async def go() -> None:
        async with SSEServer(ServerConfig(fault="hang")) as srv:
            target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m"))
            task = asyncio.ensure_future(run_point(target, PROMPTS, _spec(level=3,
                                                   min_requests=100), recs.append, t0_ns=0))
            while srv.stats.requests < 3:   # all three workers have a request out
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await target.close()

    run(go())
    assert len(recs) == 3
    assert all(r.error_kind == "client" and r.error_detail == "interrupted" for r in recs)


def test_max_in_flight_holds_sends_back_without_dropping_them() -> None:
    spec = _spec(kind="constant", level=200.0, max_in_flight=3, min_requests=12,
                 max_duration_s=5.0)
    res, recs = run(_run(spec, ServerConfig(tokens=4, ttft_s=0.05)))
    _accounted(res, recs)
    assert res.held_by_cap > 0 and res.sent == 12 and res.errors == 0
    # Held-back sends keep their intended time: the delay is visible as lag.
    lags = [r.sent_ns - r.scheduled_ns for r in recs]  # type: ignore[operator]
    assert max(lags) > 20_000_000


def test_drain_timeout_ends_stragglers_as_timeouts() -> None:
    spec = _spec(level=2, min_requests=2)
    res, recs = run(_run(spec, ServerConfig(fault="hang"), timeout_s=30.0,
                         drain_timeout_s=0.2))
    _accounted(res, recs)
    assert res.sent == 2
    assert all(r.error_kind == "timeout" and "still in flight" in str(r.error_detail)
               for r in recs)


class _BrokenTarget:
    name = "broken"
    timeout_s = 5.0

    def ready_to_send(self) -> bool:
        return False

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def send(self, prompt: Prompt, rec: Record, t0_ns: int) -> None:
        raise RuntimeError("bug in a plugin target")


def test_a_target_that_raises_becomes_client_errors() -> None:
    recs: list[Record] = []
    res = run(run_point(_BrokenTarget(), PROMPTS, _spec(level=2, min_requests=5), recs.append,
                        t0_ns=0))
    _accounted(res, recs)
    assert res.errors == 5 and {r.error_kind for r in recs} == {"client"}
    assert "bug in a plugin target" in str(recs[0].error_detail)


def test_progress_counts_without_a_terminal() -> None:
    prog = Progress()
    assert not prog.active  # pytest captures output: not a TTY
    res, _ = run(_run(_spec(level=2, min_requests=8), progress=prog))
    assert prog.done == res.sent == 8 and prog.errors == 0
    prog.close()


def test_collector_state_is_restored_after_a_point() -> None:
    assert gc.isenabled()
    run(_run(_spec(level=1, min_requests=2)))
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_failing_sink_stops_the_point_and_is_raised() -> None:
    seen: list[Record] = []

    def sink(rec: Record) -> None:
        seen.append(rec)
        if len(seen) == 3:
            raise OSError(28, "No space left on device")

    async def go() -> None:
        async with SSEServer(ServerConfig(tokens=2)) as srv:
            target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m"))
            try:
                await run_point(target, PROMPTS, _spec(kind="constant", level=200.0,
                                                       min_requests=10**6), sink, t0_ns=0)
            finally:
                await target.close()

    with pytest.raises(OSError, match="No space left"):
        run(go())
    assert 3 <= len(seen) < 100
    assert len({r.request_id for r in seen}) == len(seen)


async def _stall_once(after_s: float, block_s: float) -> None:
    await asyncio.sleep(after_s)
    time.sleep(block_s)  # a blocking call on the client's loop: what the monitor must catch


def test_the_event_loop_monitor_ticks_through_a_quiet_point() -> None:
    spec = _spec(level=2, min_requests=10**9, min_duration_s=0.3, max_duration_s=0.3)
    res, _ = run(_run(spec, ServerConfig(tokens=4, itl_s=0.002)))
    lag = res.loop_lag_ms
    assert lag is not None and lag.count >= 10       # 10 ms ticks over >= 0.3 s
    assert lag.min is not None and lag.min >= 0.0


def test_a_stalled_client_loop_is_stamped_on_the_closed_loop_point() -> None:
    from acceval.metrics import DEGRADED_LOOP_STALL_MS, summarize_point
    from acceval.results.records import records_to_table
    from acceval.study import SLO

    async def go() -> tuple[PointRun, list[Record]]:
        stall = asyncio.get_running_loop().create_task(_stall_once(0.1, 0.25))
        try:
            return await _run(_spec(level=2, min_requests=10**9, min_duration_s=0.5,
                                    max_duration_s=0.5), ServerConfig(tokens=4, itl_s=0.002))
        finally:
            await stall

    res, recs = run(go())
    _accounted(res, recs)
    lag = res.loop_lag_ms
    assert lag is not None and lag.max is not None and lag.max >= 240
    s = summarize_point(records_to_table(recs), slo=SLO(ttft_ms=1000),
                        requested_rate_rps=None, loop_lag_ms=lag)
    assert s.degraded is True and s.trusted is False
    assert any(f"> {DEGRADED_LOOP_STALL_MS:g} ms" in r for r in s.degraded_reasons)
