"""Client-side TTFT and TPOT agree with the mock server's own send log (issue acceptance).

The server logs ``perf_counter_ns`` (CLOCK_MONOTONIC, shared across processes on Linux) when it
received each request and wrote each chunk; the client's records use the same clock.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from acceval.metrics import derive
from acceval.pipeline import execute
from acceval.results.store import read_records
from acceval.serve import spawn_server
from acceval.study import study_from_dict
from acceval.targets.transport import TRANSPORTS

# Live timings bounded to 2-3 ms against the server's stamps: run alone, before anything else
# starts beside the timing phase (tools/test-phases.sh).
pytestmark = [pytest.mark.timing, pytest.mark.quiet]

# The native transport stamps in the network callback. aiohttp hands data over one coroutine
# wake-up later, when another thread (the records writer, a probe) may hold the interpreter
# (docs/transports.md).
P99_MS = {"native": 2.0, "aiohttp": 3.0}
# Requests measured: enough that the p99 is a p99. Over 60, numpy's p99 lies 41 % of the way
# from the second-largest value to the largest, so one stamp a host's preemption made late
# by 3 ms failed the 2 ms bound (seen once in a clean-clone `make test`); over 200 it lies
# between the third- and second-largest.
N = 200


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_ttft_and_tpot_match_server_log_within_2ms(tmp_path: Path, transport: str) -> None:
    log = tmp_path / "server.jsonl"
    # N + 3 requests one at a time, 40 ms each: the delays are short enough for a quick test
    # (nothing else runs beside it) and long enough that a stamp late by a scheduling slice
    # shows against them
    opts = {"ttft_ms": 10, "itl_ms": 2, "output_tokens": 16, "seed": 1}
    with spawn_server("mock", options=opts, log_path=str(log)) as server:
        study = study_from_dict({
            "name": "truth",
            "tasks": {"source": "text:Count to sixteen.", "count": N, "max_tokens": 16},
            "targets": [{"name": "mock",
                         "endpoint": {"base_url": server.base_url, "model": "mock",
                                      "transport": transport}}],
            "load": [{"concurrency": [1], "warmup_requests": 3}],
        })
        t_start = time.perf_counter_ns()
        _, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    table = read_records(run_dir)
    table = table.filter(pc.invert(table["warmup"]))
    assert table.num_rows == N
    d = derive(table)
    assert d.ok.all()

    result = json.loads((run_dir / "result.json").read_text())
    assert result["targets"][0]["points"][0]["summary"]["ok"] == N
    assert result["targets"][0]["endpoint"]["transport"] == transport  # who measured
    server_lines = [json.loads(line) for line in log.read_text().splitlines()]
    by_id = {str(e["request_id"]): e for e in server_lines}
    s_ttft, s_tpot = [], []
    for rid in table["request_id"].to_pylist():
        e = by_id[str(rid)]
        assert e["recv_ns"] >= t_start
        s_ttft.append((e["first_chunk_ns"] - e["recv_ns"]) / 1e6)
        chunks = e["chunk_ns"]
        s_tpot.append((chunks[-1] - chunks[0]) / 1e6 / (e["output_tokens"] - 1))
    c_ttft = d.ttft_ms[d.measured]
    c_tpot = d.tpot_ms[d.measured]
    for q in (50, 95, 99):
        bound = P99_MS[transport] if q == 99 else 2.0
        assert abs(np.percentile(c_ttft, q) - np.percentile(s_ttft, q)) <= bound
        assert abs(np.percentile(c_tpot, q) - np.percentile(s_tpot, q)) <= bound
    # Request by request too, the typical disagreement is well under a millisecond.
    assert float(np.median(np.abs(c_ttft - np.array(s_ttft)))) < 1.0
    # The server's delays are the configured ones (client numbers are not just self-consistent).
    assert 9.0 <= float(np.median(s_ttft)) <= 13.0
    assert 1.7 <= float(np.median(s_tpot)) <= 3.0
