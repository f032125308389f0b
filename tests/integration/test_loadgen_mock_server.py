"""The load generator against the real ``acceval serve`` mock engine, checked with its log.

The server stamps the same clock (CLOCK_MONOTONIC): what it saw of each request must sit
inside what the client saw, request by request, joined on X-Request-Id.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from acceval.engines.base import load_engine
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.results.records import Record
from acceval.serve import start_server
from acceval.study import Endpoint
from acceval.targets import OpenAITarget

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

PROMPTS = [Prompt(f"t{i}", prompt=f"what is {i} + 1?", max_tokens=8) for i in range(5)]


async def _measure(log: Path, api: str, spec: PointSpec) -> tuple[PointRun, list[Record], int]:
    handle = await start_server(load_engine("mock", output_tokens=8, ttft_ms=2, itl_ms=1),
                                log_path=str(log))
    recs: list[Record] = []
    t0 = time.perf_counter_ns()
    target = OpenAITarget("mock", Endpoint(base_url=handle.base_url, model="mock", api=api))
    try:
        await target.start()
        res = await run_point(target, PROMPTS, spec, recs.append, t0_ns=t0)
    finally:
        await target.close()
        await handle.close()
    return res, recs, t0


@pytest.mark.parametrize(("api", "kind", "level"), [("completions", "concurrency", 4),
                                                     ("chat", "poisson", 200.0)])
def test_client_stamps_contain_the_server_ground_truth(tmp_path: Path, api: str, kind: str,
                                                      level: float) -> None:
    log = tmp_path / "truth.jsonl"
    spec = PointSpec(index=0, label="p", kind=kind, level=level,  # type: ignore[arg-type]
                     min_requests=30, warmup_requests=2)
    res, recs, t0 = run(_measure(log, api, spec))
    assert len(recs) == res.sent == 32 and res.errors == 0
    truth = {e["request_id"]: e for e in map(json.loads, log.read_text().splitlines())}
    for r in recs:
        e = truth[str(r.request_id)]
        assert r.sent_ns is not None and r.first_token_ns is not None and r.done_ns is not None
        assert t0 + r.sent_ns <= e["recv_ns"]                 # sent before the server got it
        assert e["first_chunk_ns"] <= t0 + r.first_token_ns   # written before we read it
        assert e["done_ns"] <= t0 + r.done_ns
        assert r.output_tokens == e["output_tokens"] == 8 and r.tokens_from == "usage"
        assert len(r.chunk_ns) <= len(e["chunk_ns"])          # reads may merge chunks
