"""Telemetry costs the measurement nothing: a study against the mock, with its telemetry
scraping a vLLM-sized ``/metrics`` page (the reconstructed v1 page of tests/fixtures/metrics,
~60 KB, served by a separate process) every 0.25 s, has every point trusted, and the scrapes
read the page's vLLM families."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.probes.prometheus import fetch
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

PAGE = Path(__file__).parents[1] / "fixtures" / "metrics" / "vllm-v1-page.txt"


@pytest.fixture
def vllm_page(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "metrics").write_text(PAGE.read_text())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        for _ in range(200):
            try:
                fetch(url, 1.0)
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait()


@pytest.mark.timing
def test_a_study_scraping_a_vllm_page_has_every_point_trusted(tmp_path: Path,
                                                              vllm_page: str) -> None:
    study = study_from_dict({
        "name": "telemetry-on",
        "tasks": {"source": "text:Count to sixteen.", "count": 80, "max_tokens": 16},
        "targets": [{"name": "mock",
                     "serve": {"engine": "mock", "options": {"ttft_ms": 20, "itl_ms": 4,
                                                             "output_tokens": 16, "seed": 1}},
                     "telemetry": {"metrics_url": vllm_page, "interval_s": 0.25}}],
        "load": [{"concurrency": [1, 4], "warmup_requests": 3}],
    })
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    t = result.targets[0]
    reasons = {p.label: p.summary.untrusted_reason for p in t.points}
    assert all(p.summary.trusted for p in t.points), reasons
    assert all(p.summary.loop_lag_ms.count > 0 for p in t.points)  # the loop was watched
    assert t.telemetry is not None and t.telemetry.source == "vllm"
    assert t.telemetry.scrapes >= 8 and t.telemetry.failures == 0
    assert "http_request_duration_highr_seconds" in t.telemetry.unmapped  # sieved, named
