"""The queueing case, through the real path: capacity comes from trusted points only.

A mock server with 2 slots (``acceval serve mock`` in its own process, requests queue for a
slot) is measured by the real runner at 10, 20, 40 and 100 req/s. At 20 req/s the client's
own event loop is stalled (a blocking call every 0.4 s): the point's response time fails
the SLO, but that says nothing about the server, and the self-check flags it. Every point is
a real ``PointResult`` from ``summarize_point`` over the records the runner wrote; the
capacity stage must then give at least 40 req/s and say the 20 req/s point was not trusted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from acceval.capacity import capacity_for, curve_from_points, max_rate_under_slo
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.metrics import summarize_point
from acceval.results.records import Record, records_to_table
from acceval.results.section import PointResult
from acceval.run_result import TargetResult
from acceval.serve import spawn_server
from acceval.study import SLO, Endpoint, Study
from acceval.targets import OpenAITarget

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

# A request holds a slot for ~10 + 7 x 2 = 24 ms: two slots serve ~80 req/s at most, so
# 40 req/s queues a little (utilization ~0.5) and 100 req/s overloads the server.
MOCK = {"slots": 2, "ttft_ms": 10, "itl_ms": 2, "output_tokens": 8}
SLO_SPEC = {"ttft_ms": 120.0, "e2e_ms": 150.0, "percentile": 95.0}
RATES = (10.0, 20.0, 40.0, 100.0)
STALLED = 20.0
PROMPTS = [Prompt(f"t{i}", prompt=f"what is {i} + 1?", max_tokens=8) for i in range(10)]
POINT_S = 2.0
CLEAN_TRIES = 3  # a clean point that a noisy host degraded anyway is measured again


async def _stall_client(stop: asyncio.Event, every_s: float = 0.4, block_s: float = 0.25) -> None:
    while not stop.is_set():
        await asyncio.sleep(every_s - block_s)
        time.sleep(block_s)  # blocks the client's loop: sends and reads wait


def _result(run_: PointRun, recs: list[Record], slo: SLO) -> PointResult:
    s = run_.spec
    summary = summarize_point(records_to_table(recs), slo=slo,
                              requested_rate_rps=run_.requested_rate_rps,
                              loop_lag_ms=run_.loop_lag_ms)
    return PointResult(index=s.index, label=s.label, kind=s.kind, level=s.level,
                       requested_rate_rps=run_.requested_rate_rps, stopped_by=run_.stopped_by,
                       sent=run_.sent, completed=run_.completed, started_ns=run_.started_ns,
                       ended_ns=run_.ended_ns, seeds=dict(run_.seeds), summary=summary)


async def _point(target: OpenAITarget, index: int, rate: float, *, stall: bool, t0: int,
                 first_id: int, slo: SLO) -> PointResult:
    spec = PointSpec(index=index, label=f"poisson {rate:g} rps", kind="poisson", level=rate,
                     seed=11, warmup_requests=3, min_duration_s=POINT_S, min_requests=1,
                     max_duration_s=POINT_S)
    recs: list[Record] = []
    stop = asyncio.Event()
    staller = asyncio.get_running_loop().create_task(_stall_client(stop)) if stall else None
    try:
        res = await run_point(target, PROMPTS, spec, recs.append, t0_ns=t0,
                              first_request_id=first_id)
    finally:
        stop.set()
        if staller is not None:
            await staller
    return _result(res, recs, slo)


async def _measure(base_url: str, slo: SLO) -> list[PointResult]:
    target = OpenAITarget("mock", Endpoint(base_url=base_url, model="mock", api="completions",
                                           timeout_s=30))
    await target.start()
    t0 = time.perf_counter_ns()
    points: list[PointResult] = []
    try:
        for rate in RATES:
            tries = 1 if rate in (STALLED, RATES[-1]) else CLEAN_TRIES
            for _ in range(tries):
                p = await _point(target, len(points), rate, stall=rate == STALLED, t0=t0,
                                 first_id=sum(q.sent for q in points), slo=slo)
                points.append(p)
                if p.summary.trusted:
                    break
    finally:
        await target.close()
    return points


@pytest.fixture(scope="module")
def measured() -> list[PointResult]:
    slo = SLO(**SLO_SPEC)  # type: ignore[arg-type]
    with spawn_server("mock", options=MOCK) as server:
        return run(_measure(server.base_url, slo))


def _study() -> Study:
    return Study.model_validate({
        "name": "queueing", "seed": 3,
        "targets": [{"name": "mock", "endpoint": {"base_url": "http://127.0.0.1:1/v1",
                                                    "model": "mock"}}],
        "slo": SLO_SPEC, "demand": {"profile": "builtin:flat", "peak_rps": 40}})


def _at(points: list[PointResult], rate: float) -> list[PointResult]:
    return [p for p in points if p.requested_rate_rps == rate]


def test_the_stalled_point_is_measured_failing_and_flagged_not_trusted(
        measured: list[PointResult]) -> None:
    [stalled] = _at(measured, STALLED)
    s = stalled.summary
    assert s.latency_basis == "response"
    # From the intended send the user waited out the client's stalls: the SLO fails...
    assert s.meets_slo is False
    assert s.response_e2e_ms.p95 is not None and s.response_e2e_ms.p95 > SLO_SPEC["e2e_ms"]
    # ... and the self-check says why the number describes the client, not the server.
    assert s.degraded is True and s.trusted is False and s.untrusted_reason
    assert "schedule lag" in s.untrusted_reason or "event loop" in s.untrusted_reason
    assert s.loop_lag_ms.max is not None and s.loop_lag_ms.max >= 200


def test_clean_points_meet_the_slo_on_response_time(measured: list[PointResult]) -> None:
    for rate in (10.0, 40.0):
        p = _at(measured, rate)[-1]
        assert p.summary.trusted, (rate, p.summary.untrusted_reason)
        assert p.summary.meets_slo is True, (rate, p.summary.slo_values_ms)
        assert p.summary.response_ttft_ms.count == p.summary.ttft_ms.count > 0
    # The server really queues: at 100 req/s two slots cannot keep up.
    assert _at(measured, 100.0)[-1].summary.meets_slo is False


def test_capacity_is_at_least_40_rps_and_names_the_untrusted_point(
        measured: list[PointResult]) -> None:
    target = TargetResult(name="mock", endpoint=None, platform={}, points=measured)
    cap = capacity_for(_study(), target, simulate=False)
    assert cap is not None
    mr = cap.max_rate
    assert mr.rate_rps is not None and mr.rate_rps >= 40.0, mr.note
    assert mr.low_rps is not None and mr.low_rps >= 40.0
    excluded = {e.label: e for e in mr.excluded}
    assert "poisson 20 rps" in excluded and excluded["poisson 20 rps"].rate_rps == STALLED
    assert "not trusted and left out: " in mr.note and "poisson 20 rps" in mr.note
    assert cap.plan is not None and cap.plan.per_replica_rps == pytest.approx(mr.rate_rps)
    # Had the stalled point been trusted it would be the "first failure" and capacity would
    # sit below 20 req/s: the defect this guards against.
    naive = max_rate_under_slo([dataclasses.replace(c, trusted=True)
                                for c in curve_from_points(measured)])
    assert naive.rate_rps is not None and naive.rate_rps < STALLED
