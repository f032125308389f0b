"""A load point against servers that fail in every way: each request is one classified Record."""

from __future__ import annotations

import socket
from collections import Counter

from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.results.records import Record
from acceval.study import Endpoint
from acceval.targets import OpenAITarget
from helpers.sse_server import ServerConfig, SSEServer

EXPECTED = {
    "ok": None,
    "fault:http500": "http",
    "fault:http429": "http",
    "fault:malformed": "malformed",
    "fault:badshape": "malformed",
    "fault:reset": "stream_cut",
    "fault:nodone": "stream_cut",
    "fault:errorevent": "stream_cut",
    "fault:close": "connect",
    "fault:hang": "timeout",
}
PROMPTS = [Prompt(text, prompt=text, max_tokens=4) for text in EXPECTED]


def _point(n: int, kind: str = "concurrency", level: float = 4) -> PointSpec:
    return PointSpec(index=0, label="faults", kind=kind, level=level,  # type: ignore[arg-type]
                     min_requests=n, max_duration_s=10.0)


async def _against(base_url: str, spec: PointSpec) -> tuple[PointRun, list[Record]]:
    recs: list[Record] = []
    target = OpenAITarget("t", Endpoint(base_url=base_url, model="m", timeout_s=0.3,
                                        connect_timeout_s=0.5))
    await target.start()
    try:
        res = await run_point(target, PROMPTS, spec, recs.append, t0_ns=0)
    finally:
        await target.close()
    return res, recs


def _check(res: PointRun, recs: list[Record]) -> None:
    assert len(recs) == res.sent == 2 * len(PROMPTS)
    for r in recs:
        assert r.error_kind == EXPECTED[r.task_id], (r.task_id, r.error_kind, r.error_detail)
        assert r.done_ns is not None
    assert res.errors == sum(v is not None for v in EXPECTED.values()) * 2


def test_every_fault_is_a_classified_record_closed_loop() -> None:
    async def go() -> tuple[PointRun, list[Record]]:
        async with SSEServer(ServerConfig(tokens=4)) as srv:
            return await _against(srv.base_url, _point(2 * len(PROMPTS)))

    _check(*run(go()))


def test_every_fault_is_a_classified_record_open_loop() -> None:
    async def go() -> tuple[PointRun, list[Record]]:
        async with SSEServer(ServerConfig(tokens=4, itl_s=0.001)) as srv:
            return await _against(srv.base_url, _point(2 * len(PROMPTS), "poisson", 200.0))

    _check(*run(go()))


def test_a_closed_port_makes_every_request_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        res, recs = run(_against(url, _point(25, "constant", 500.0)))
    assert len(recs) == res.sent == 25 and res.completed == 0
    assert Counter(r.error_kind for r in recs) == {"connect": 25}
