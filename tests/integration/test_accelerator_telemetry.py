"""Accelerator telemetry through the real path: recorded exporter pages (neuron-monitor's
Prometheus companion and JSON report, dcgm-exporter; tests/fixtures/exporters/README.md) are
served on loopback as targets' ``telemetry.exporter_url``; acceval scrapes them during a run,
analyses and renders, and the numbers match those worked out by hand from the pages."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.report import render
from acceval.run_result import RunResult
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

FIXTURES = Path(__file__).parents[1] / "fixtures"
PAGES = {
    "/inf1/metrics": FIXTURES / "exporters" / "neuron-monitor-prometheus-inf1.txt",
    "/inf1/report": FIXTURES / "exporters" / "neuron-monitor-report-inf1.json",
    "/h100/metrics": FIXTURES / "exporters" / "dcgm-exporter-h100x8-sampled.txt",
    # vllm-neuron serves vLLM's own /metrics (vLLM's documented names).
    "/vllm/metrics": FIXTURES / "metrics" / "vllm.txt",
}


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = PAGES.get(self.path)
        if path is None:
            self.send_error(404)
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if path.suffix == ".json"
                         else "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _target(name: str, telemetry: dict[str, object]) -> dict[str, object]:
    return {"name": name, "serve": {"engine": "mock", "options": {
        "ttft_ms": 10, "itl_ms": 3, "output_tokens": 8}},
        "telemetry": {"interval_s": 0.2, **telemetry}, "price": {"usd_per_hour": 1.0}}


@pytest.fixture(scope="module")
def run(base: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    tmp = tmp_path_factory.mktemp("accel")
    study = study_from_dict({
        "name": "accelerators",
        "tasks": {"source": "builtin:arithmetic", "count": 40, "seed": 1, "max_tokens": 8},
        "targets": [
            _target("trn", {"metrics_url": f"{base}/vllm/metrics",
                            "exporter_url": f"{base}/inf1/metrics"}),
            _target("trn-json", {"exporter_url": f"{base}/inf1/report"}),
            _target("h100", {"exporter_url": f"{base}/h100/metrics"}),
        ],
        "load": [{"concurrency": [2], "min_duration_s": 1.5, "max_duration_s": 2.5}],
    })
    return execute(study, base_dir=tmp, out_dir=tmp / "runs", progress=False)


def test_neuroncore_utilization_and_memory_per_point(run: tuple[RunResult, Path]) -> None:
    result, _ = run
    acc = result.target("trn").accelerator
    assert acc is not None and acc.source == "neuron" and acc.interval_s == 0.2
    assert acc.devices == [f"neuroncore{i}" for i in range(4)]
    p = acc.points[0]
    assert p.scrapes >= 2
    # Billed as four cores: one at 86.33 %, three idle.
    assert p.util_mean == pytest.approx(0.8633101879976985 / 4)
    assert p.util_p95 == pytest.approx(0.8633101879976985 / 4)
    assert p.devices[0].util_mean == pytest.approx(0.8633101879976985)
    assert p.devices[1].util_p95 == 0.0
    assert p.memory_used_bytes_mean == 63118912           # memory_location="neuron_device"
    assert p.power_w_total_mean is None                    # neuron-monitor has no power
    # The same endpoint's server telemetry maps vLLM's names (vllm-neuron uses them).
    tel = result.target("trn").telemetry
    assert tel is not None and tel.source == "vllm"
    assert tel.points[0].metrics["running"].mean == 12


def test_the_json_report_form_reads_the_same_way(run: tuple[RunResult, Path]) -> None:
    acc = run[0].target("trn-json").accelerator
    assert acc is not None and acc.source == "neuron"
    p = acc.points[0]
    assert p.util_mean == pytest.approx(0.8901827638996558 / 4)
    # Per core from the breakdown: core 0 holds it all (constants + code + runtime).
    assert p.devices[0].memory_used_bytes_mean == 61766864 + 1308832 + 43216
    assert p.memory_used_bytes_mean == 63118912


def test_gpu_power_per_device_and_total(run: tuple[RunResult, Path]) -> None:
    acc = run[0].target("h100").accelerator
    assert acc is not None and acc.source == "dcgm" and len(acc.devices) == 8
    p = acc.points[0]
    watts = [67.268, 67.616, 66.477, 69.523, 66.297, 66.324, 115.22, 69.424]
    assert p.power_w_total_mean == pytest.approx(sum(watts))   # 588.149 W
    assert [d.power_w_mean for d in p.devices] == pytest.approx(watts)
    assert p.util_mean == 0.0 and p.memory_used_bytes_mean is None


def test_every_format_shows_them(run: tuple[RunResult, Path]) -> None:
    result, run_dir = run
    md = render(result, "md", run_dir=run_dir)
    assert "## Accelerators" in md
    assert "| trn | concurrency 2 |" in md and "21.6%" in md    # 0.8633 / 4
    assert "588 / 588" in md                                   # the 8 GPUs' total W (3 digits)
    assert "neuron-monitor has no power" in md and "every 0.2 s" in md
    html = (run_dir / "report.html").read_text()
    assert 'id="accelerators"' in html and "588 / 588" in html
    data = json.loads((run_dir / "result.json").read_text())
    h100 = next(t for t in data["targets"] if t["name"] == "h100")
    assert h100["accelerator"]["points"][0]["power_w_total_mean"] == pytest.approx(588.149)
    console = render(result, "console", run_dir=run_dir)
    assert "Accelerators" in console and "21.6%" in console
