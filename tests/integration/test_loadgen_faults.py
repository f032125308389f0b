"""A load point against servers that fail in every way: each request is one classified Record,
and none prints a traceback."""

from __future__ import annotations

import logging
import socket
import tracemalloc
from collections import Counter

import pytest

from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.results.records import Record
from acceval.study import Endpoint
from acceval.targets import OpenAITarget
from acceval.targets.transport import TRANSPORTS
from helpers.sse_server import FAULT_KINDS, ServerConfig, SSEServer

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

# The conformance suite covers the others (a late bad chunk, answers without usage or SSE).
_ELSEWHERE = {"fault:badchunk_late", "fault:nousage", "fault:json"}
EXPECTED = {k: v for k, v in FAULT_KINDS.items() if k not in _ELSEWHERE}
LIMIT = 2**20
PROMPTS = [Prompt(text, prompt=text, max_tokens=4) for text in EXPECTED]


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def _point(n: int, kind: str = "concurrency", level: float = 4) -> PointSpec:
    return PointSpec(index=0, label="faults", kind=kind, level=level,  # type: ignore[arg-type]
                     min_requests=n, max_duration_s=10.0)


async def _against(base_url: str, spec: PointSpec, transport: str
                   ) -> tuple[PointRun, list[Record]]:
    recs: list[Record] = []
    # 1 s: the hangs wait for it; it leaves the others room for a long test session's
    # garbage collection (0.3 s seen), which would otherwise time them out.
    target = OpenAITarget("t", Endpoint(base_url=base_url, model="m", timeout_s=1.0,
                                        connect_timeout_s=0.5, max_response_bytes=LIMIT,
                                        transport=transport))
    await target.start()
    try:
        res = await run_point(target, PROMPTS, spec, recs.append, t0_ns=0)
    finally:
        await target.close()
    return res, recs


def _check(res: PointRun, recs: list[Record], caplog: pytest.LogCaptureFixture,
           capfd: pytest.CaptureFixture[str]) -> None:
    # A protocol callback that raises is logged by the event loop ("Fatal error ...").
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "Traceback" not in capfd.readouterr().err
    assert len(recs) == res.sent == 2 * len(PROMPTS)
    for r in recs:
        assert r.error_kind == EXPECTED[r.task_id], (r.task_id, r.error_kind, r.error_detail)
        assert r.done_ns is not None
        assert (r.retry_after_s is not None) == (r.task_id in ("fault:http429", "fault:http503"))
    assert res.errors == sum(v is not None for v in EXPECTED.values()) * 2


def test_every_fault_is_a_classified_record_closed_loop(
        transport: str, caplog: pytest.LogCaptureFixture,
        capfd: pytest.CaptureFixture[str]) -> None:
    async def go() -> tuple[PointRun, list[Record]]:
        async with SSEServer(ServerConfig(tokens=4)) as srv:
            return await _against(srv.base_url, _point(2 * len(PROMPTS)), transport)

    _check(*run(go()), caplog, capfd)


def test_every_fault_is_a_classified_record_open_loop(
        transport: str, caplog: pytest.LogCaptureFixture,
        capfd: pytest.CaptureFixture[str]) -> None:
    async def go() -> tuple[PointRun, list[Record]]:
        async with SSEServer(ServerConfig(tokens=4, itl_s=0.001)) as srv:
            return await _against(srv.base_url, _point(2 * len(PROMPTS), "poisson", 200.0),
                                  transport)

    _check(*run(go()), caplog, capfd)


@pytest.mark.parametrize("fault", ["big", "biglength"])
def test_a_100_mib_body_stops_at_the_limit_and_memory_stays_bounded(transport: str,
                                                                     fault: str) -> None:
    async def go() -> Record:
        async with SSEServer(ServerConfig(fault=fault, big_bytes=100 * 2**20)) as srv:
            target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m",
                                                max_response_bytes=LIMIT, transport=transport))
            rec = Record("t", 0, "p", 1, "task")
            try:
                await target.send(Prompt("task", prompt="x", max_tokens=4), rec, 0)
            finally:
                await target.close()
            return rec

    tracemalloc.start()
    try:
        rec = run(go())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rec.error_kind == "too_large", rec.error_detail
    # Without the limit the client kept the whole 100 MiB body, several times over.
    assert peak < 8 * LIMIT, f"{peak / 2**20:.1f} MiB traced"


def test_a_closed_port_makes_every_request_a_connect_error(transport: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        res, recs = run(_against(url, _point(25, "constant", 500.0), transport))
    assert len(recs) == res.sent == 25 and res.completed == 0
    assert Counter(r.error_kind for r in recs) == {"connect": 25}
