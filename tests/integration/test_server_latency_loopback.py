"""Server-side latency end to end: a loopback OpenAI server that publishes two /metrics pages
recorded from a real vLLM (the one before a load point until half the point's answers are
written, the one after it from then on), scraped by a real run, analysed and rendered: the
report sets the client's means beside the server's exact ones in every format."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.report import render
from acceval.study import study_from_dict
from helpers.sse_server import ServerConfig, SSEServer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "metrics"
BEFORE = (FIXTURES / "vllm-before.txt").read_text()
AFTER = (FIXTURES / "vllm-after.txt").read_text()
REQUESTS = 80


def _delta_mean_ms(family: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    def total(text: str, name: str) -> float:
        return sum(float(s.value) for f in text_string_to_metric_families(text)
                   for s in f.samples if s.name == name)
    n = total(AFTER, f"{family}_count") - total(BEFORE, f"{family}_count")
    return (total(AFTER, f"{family}_sum") - total(BEFORE, f"{family}_sum")) / n * 1e3


@pytest.fixture
def server() -> Iterator[SSEServer]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    cfg = ServerConfig(tokens=5, ttft_s=0.01, itl_s=0.004, model="tiny",
                       metrics=lambda answered: BEFORE if answered < REQUESTS // 2 else AFTER)
    srv = asyncio.run_coroutine_threadsafe(SSEServer(cfg).start(), loop).result()
    try:
        yield srv
    finally:
        asyncio.run_coroutine_threadsafe(srv.close(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_the_report_sets_the_servers_latency_beside_the_clients(tmp_path: Path,
                                                                server: SSEServer) -> None:
    study = study_from_dict({
        "name": "server-latency",
        "tasks": {"source": "builtin:arithmetic", "count": REQUESTS, "seed": 1,
                  "max_tokens": 8},
        "targets": [{"name": "v", "endpoint": {"base_url": server.base_url, "model": "tiny",
                                               "api": "completions"},
                     "telemetry": {"metrics_url": f"http://127.0.0.1:{server.port}/metrics",
                                   "interval_s": 0.1}}],
        "load": [{"concurrency": [2], "warmup_requests": 0}],
    })
    result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs",
                              progress=False)
    tel = result.target("v").telemetry
    assert tel is not None and tel.source == "vllm" and tel.failures == 0
    (point,) = tel.points
    lat = point.server_latency
    assert lat is not None
    # The two recorded pages' increases, exactly: the mean does not depend on the window.
    assert lat.ttft.server_ms == pytest.approx(_delta_mean_ms("vllm:time_to_first_token_seconds"))
    assert lat.e2e.server_ms == pytest.approx(_delta_mean_ms("vllm:e2e_request_latency_seconds"))
    assert lat.queue_ms == pytest.approx(_delta_mean_ms("vllm:request_queue_time_seconds"))
    assert lat.prefill_ms == pytest.approx(_delta_mean_ms("vllm:request_prefill_time_seconds"))
    assert lat.decode_ms == pytest.approx(_delta_mean_ms("vllm:request_decode_time_seconds"))
    summary = result.target("v").points[0].summary
    assert lat.ttft.client_ms == summary.ttft_ms.mean
    assert lat.ttft.outside_ms == pytest.approx(summary.ttft_ms.mean - lat.ttft.server_ms)
    assert tel.unmapped and tel.unmapped[0].startswith("vllm:")

    from acceval.report._fmt import num

    server_ttft = num(lat.ttft.server_ms, 2)   # as the report writes it
    md = render(result, "md", run_dir=run_dir)
    assert "### Server-side latency beside the client's" in md
    row = next(line for line in md.splitlines() if line.startswith("| v | concurrency 2 |")
               and server_ttft in line)
    assert num(lat.ttft.outside_ms, 2) in row
    html = (run_dir / "report.html").read_text()
    assert "Server-side latency beside the client" in html and server_ttft in html
    assert "server-side v/concurrency 2: TTFT" in render(result, "console")
    saved = json.loads((run_dir / "result.json").read_text())
    saved_lat = saved["targets"][0]["telemetry"]["points"][0]["server_latency"]
    assert saved_lat["ttft"]["server_ms"] == pytest.approx(lat.ttft.server_ms)
