"""Server telemetry and remote energy, end to end: a run scrapes its local server's own
/metrics, and a GPU's energy read from a DCGM exporter over HTTP reaches the energy boundary
with its provenance. The exporter here is a small HTTP server publishing DCGM's documented
names with an energy counter that grows at a known power."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.probes.prometheus import DcgmProbe, TelemetryProbe
from acceval.report import render
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

WATTS = 300.0


class _Exporter(http.server.BaseHTTPRequestHandler):
    started = time.monotonic()

    def do_GET(self) -> None:
        if self.path != "/metrics":
            self.send_error(404)
            return
        mj = 5e9 + (time.monotonic() - self.started) * WATTS * 1000
        body = ("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
                "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
                f'DCGM_FI_DEV_POWER_USAGE{{gpu="0",modelName="NVIDIA H200"}} {WATTS}\n'
                "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy since boot (in mJ).\n"
                "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
                f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",modelName="NVIDIA H200"}} '
                f"{mj:.0f}\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def exporter() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/metrics"
    finally:
        srv.shutdown()
        srv.server_close()


def _study(**energy: object) -> dict[str, object]:
    return {
        "name": "telemetry",
        "tasks": {"source": "builtin:arithmetic", "count": 100, "seed": 1, "max_tokens": 8},
        "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
            "ttft_ms": 20, "itl_ms": 5, "output_tokens": 8}}, "energy": energy or {},
            "price": {"usd_per_hour": 10.0}}],
        "load": [{"concurrency": [2, 6], "min_duration_s": 2.5, "max_duration_s": 3.5}],
    }


def test_a_run_scrapes_its_local_servers_metrics_and_reports_them(tmp_path: Path) -> None:
    result, run_dir = execute(study_from_dict(_study()), base_dir=tmp_path,
                              out_dir=tmp_path / "runs", progress=False)
    tel = result.target("m").telemetry
    assert tel is not None and tel.source == "acceval" and tel.failures == 0
    assert tel.scrapes >= 4
    by_label = {p.label: p for p in tel.points}
    for level in (2, 6):
        p = by_label[f"concurrency {level}"]
        # A closed loop of N keeps N requests running on a server that queues nothing.
        assert p.metrics["running"].mean == pytest.approx(level, abs=1.0)
        assert p.metrics["waiting"].max == 0
        # The server's token counter agrees with the client's count within a scrape's worth.
        assert p.server_over_client_tokens == pytest.approx(1.0, abs=0.25)
    assert tel.series["running"]
    md = render(result, "md", run_dir=run_dir)
    assert "## Server telemetry" in md and "| m | concurrency 6 |" in md
    html = (run_dir / "report.html").read_text()
    assert 'id="telemetry"' in html and "chart-telemetry" in html


def test_gpu_energy_from_a_dcgm_exporter_reaches_the_energy_boundary(tmp_path: Path,
                                                                     exporter: str) -> None:
    study = study_from_dict(_study(probe="dcgm", exporter_url=exporter, boundary="device"))
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    energy = result.target("m").energy
    assert energy is not None and energy.origin == "measured"
    point = next(p for p in result.target("m").points if p.label == energy.load_label)
    duration = point.summary.duration_s
    assert duration is not None and energy.joules is not None
    # 300 W for the point's window, read from scrapes a second apart.
    assert energy.joules == pytest.approx(WATTS * duration, rel=0.35)
    assert exporter in str(energy.provenance.model_dump())
    # The same exporter is shown as the target's accelerator telemetry, not only as energy.
    acc = result.target("m").accelerator
    assert acc is not None and acc.source == "dcgm" and acc.url == exporter
    assert acc.devices == ["gpu0"]
    assert all(p.power_w_total_mean == pytest.approx(WATTS) for p in acc.points
               if p.power_w_total_mean is not None)
    assert any(p.power_w_total_mean is not None for p in acc.points)


def test_probes_say_why_they_cannot_read(exporter: str) -> None:
    dead = "http://127.0.0.1:9/metrics"
    ok, why = TelemetryProbe(dead).available()
    assert not ok and "did not answer" in why
    assert DcgmProbe(exporter).available() == (True, "")
    # A server's /metrics that carries no energy is no energy probe.
    text = (Path(__file__).parents[1] / "fixtures" / "metrics" / "vllm.txt").read_bytes()

    class _Vllm(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def log_message(self, *args: object) -> None:
            return

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Vllm)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        ok, why = DcgmProbe(f"http://127.0.0.1:{srv.server_address[1]}/metrics").available()
    finally:
        srv.shutdown()
        srv.server_close()
    assert not ok and "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in why
    with pytest.raises(ValueError):
        TelemetryProbe("ftp://x/metrics")


def test_an_energy_probe_dcgm_needs_its_exporter_url() -> None:
    from acceval.errors import StudyError

    with pytest.raises(StudyError) as err:
        study_from_dict(_study(probe="dcgm"))
    assert "exporter_url" in str(err.value)
