"""Recorded accelerator-exporter pages (tests/fixtures/exporters/README.md) map to the
canonical per-device names, and a target's devices reduce per point as they are billed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from acceval.probes.base import Sample, samples_to_table
from acceval.results.runlog import TelemetryLog
from acceval.telemetry.accelerator import accelerator_section
from acceval.telemetry.parse import parse_page

FIXTURES = Path(__file__).parents[2] / "fixtures" / "exporters"


def _read(name: str) -> dict[tuple[str, str], float]:
    scrape = parse_page((FIXTURES / name).read_text())
    assert scrape.error is None
    return {(r.metric, r.device): r.value for r in scrape.readings}


def test_neuron_monitor_prometheus_page_recorded_on_inf1() -> None:
    got = _read("neuron-monitor-prometheus-inf1.txt")
    assert parse_page((FIXTURES / "neuron-monitor-prometheus-inf1.txt").read_text()).source \
        == "neuron"
    assert got == pytest.approx({
        ("accelerator_util", "neuroncore0"): 0.8633101879976985,
        ("accelerator_util", "neuroncore1"): 0.0, ("accelerator_util", "neuroncore2"): 0.0,
        ("accelerator_util", "neuroncore3"): 0.0,
        # memory_location="neuron_device" only: the host's 1.13 GB is not device memory
        ("device_memory_used_bytes", ""): 63118912.0,
        ("execution_errors", ""): 0.0, ("ecc_events", ""): 0.0})


def test_neuron_monitor_json_report_from_the_same_runtime() -> None:
    got = _read("neuron-monitor-report-inf1.json")
    # Core 0's memory parts (constants + model code + runtime) add up to the runtime's total.
    assert got == pytest.approx({
        ("accelerator_util", "neuroncore0"): 0.8901827638996558,
        ("accelerator_util", "neuroncore1"): 0.0, ("accelerator_util", "neuroncore2"): 0.0,
        ("accelerator_util", "neuroncore3"): 0.0,
        ("device_memory_used_bytes", ""): 63118912.0,
        ("device_memory_used_bytes", "neuroncore0"): 61766864 + 1308832 + 43216,
        ("device_memory_used_bytes", "neuroncore1"): 0.0,
        ("device_memory_used_bytes", "neuroncore2"): 0.0,
        ("device_memory_used_bytes", "neuroncore3"): 0.0})


def test_the_documented_trn2_report_and_the_otel_fixture() -> None:
    got = _read("neuron-monitor-report-trn2-docs.json")
    assert got[("accelerator_util", "neuroncore0")] == pytest.approx(0.4201)
    assert got[("accelerator_util", "neuroncore1")] == pytest.approx(0.4202)
    assert got[("device_memory_used_bytes", "")] == 12519788544
    assert got[("device_memory_used_bytes", "neuroncore1")] == 193986816 + 176285056 + 20971520
    otel = _read("neuron-monitor-prometheus-trn1n-otel.txt")
    # Host memory only on this page, so no device memory; the untyped ECC counter is read.
    assert otel == pytest.approx({("accelerator_util", "neuroncore0"): 0.1,
                                  ("ecc_events", ""): 864.0})


def test_dcgm_pages_recorded_on_l4_t4_and_eight_h100() -> None:
    l4 = _read("dcgm-exporter-l4.txt")
    assert l4 == pytest.approx({
        ("power_w", "gpu0"): 16.365, ("energy_j", "gpu0"): 4742.776,
        ("accelerator_util", "gpu0"): 0.0, ("device_memory_used_bytes", "gpu0"): 0.0,
        ("device_memory_free_bytes", "gpu0"): 22563 * 2**20})
    t4 = _read("dcgm-exporter-t4.txt")
    # Reason 0x1 is "GPU idle": clocks low, not throttled.
    assert t4[("throttled", "gpu0")] == 0.0 and t4[("xid_last", "gpu0")] == 0.0
    h100 = _read("dcgm-exporter-h100x8-sampled.txt")
    power = [h100[("power_w", f"gpu{i}")] for i in range(8)]
    assert power == pytest.approx([67.268, 67.616, 66.477, 69.523, 66.297, 66.324, 115.22,
                                   69.424])


def test_a_throttle_bit_reads_as_throttled() -> None:
    text = ('# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge\n'
            'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0"} 1\n'
            'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="1"} 68\n')  # 0x40 HW thermal + 0x4 power
    got = {(r.metric, r.device): r.value for r in parse_page(text).readings}
    assert got == {("throttled", "gpu0"): 0.0, ("throttled", "gpu1"): 1.0}


def test_json_that_is_no_neuron_report_is_an_error_not_a_reading() -> None:
    scrape = parse_page('{"hello": 1}')
    assert scrape.readings == [] and scrape.error is not None
    assert "neuron_runtime_data" in scrape.error


@dataclass(frozen=True)
class _Point:
    index: int
    label: str
    started_ns: int
    ended_ns: int


def _point(index: int, start_s: float, end_s: float) -> _Point:
    return _Point(index, f"p{index}", int(start_s * 1e9), int(end_s * 1e9))


def test_devices_reduce_per_point_by_mean_p95_and_sum() -> None:
    # Two GPUs scraped five times in point 0 (t = 1..5 s), three in point 1 (t = 11..13 s).
    util0 = [0.2, 0.4, 0.6, 0.8, 1.0]
    util1 = [0.0, 0.0, 0.0, 0.0, 0.5]
    rows = []
    for k, t in enumerate([1, 2, 3, 4, 5, 11, 12, 13]):
        ns = int(t * 1e9)
        a = util0[k] if k < 5 else 0.5
        b = util1[k] if k < 5 else 0.5
        rows += [Sample(ns, "exporter", "telemetry.accelerator_util", a, "ratio", "gpu0"),
                 Sample(ns, "exporter", "telemetry.accelerator_util", b, "ratio", "gpu1"),
                 Sample(ns, "exporter", "telemetry.power_w", 100.0 + 10 * k, "W", "gpu0"),
                 Sample(ns, "exporter", "telemetry.power_w", 50.0, "W", "gpu1"),
                 Sample(ns, "exporter", "telemetry.device_memory_used_bytes", 2.0**30, "bytes",
                        "gpu0"),
                 Sample(ns, "exporter", "telemetry.device_memory_used_bytes", 3 * 2.0**30,
                        "bytes", "gpu1")]
    log = TelemetryLog(url="http://x/metrics", source="dcgm", scrapes=8, first_ns=int(1e9),
                       last_ns=int(13e9), interval_s=1.0)
    acc = accelerator_section(None, log, [_point(0, 0.5, 5.5), _point(1, 10.5, 13.5)],
                              samples_to_table(rows))
    assert acc is not None and acc.devices == ["gpu0", "gpu1"] and acc.interval_s == 1.0
    p0 = acc.points[0]
    g0, g1 = p0.devices
    assert g0.util_mean == pytest.approx(0.6)
    assert g0.util_p95 == pytest.approx(float(np.percentile(util0, 95)))  # 0.96
    assert g1.util_p95 == pytest.approx(0.4)    # 0.0 0.0 0.0 0.0 0.5: the 95th of five
    across = [(a + b) / 2 for a, b in zip(util0, util1, strict=True)]
    assert p0.util_mean == pytest.approx(sum(across) / 5)
    assert p0.util_p95 == pytest.approx(float(np.percentile(across, 95)))
    assert p0.power_w_total_mean == pytest.approx(50 + 100 + 20)   # 100..140 W mean 120
    assert p0.power_w_total_max == pytest.approx(190)
    assert p0.memory_used_bytes_mean == pytest.approx(4 * 2.0**30)
    assert p0.scrapes == 5 and acc.points[1].scrapes == 3
    assert acc.points[1].util_mean == pytest.approx(0.5)


def test_one_scrape_in_a_point_is_not_measured() -> None:
    rows = [Sample(int(1e9), "exporter", "telemetry.accelerator_util", 0.5, "ratio", "nc0")]
    log = TelemetryLog(url="u", source="neuron", scrapes=1, first_ns=int(1e9),
                       last_ns=int(1e9))
    acc = accelerator_section(None, log, [_point(0, 0, 2)], samples_to_table(rows))
    assert acc is not None
    assert acc.points[0].util_mean is None and acc.points[0].devices[0].util_mean is None


def test_a_server_url_pointed_at_an_exporter_is_read_the_same_way() -> None:
    # telemetry.metrics_url set to neuron-monitor's page: its readings are under "metrics".
    rows = [Sample(int(t * 1e9), "metrics", "telemetry.accelerator_util", v, "ratio", dev)
            for t in (1, 2, 3) for dev, v in (("neuroncore0", 0.8), ("neuroncore1", 0.2))]
    log = TelemetryLog(url="http://trn/metrics", source="neuron", scrapes=3,
                       first_ns=int(1e9), last_ns=int(3e9), interval_s=1.0)
    acc = accelerator_section(log, None, [_point(0, 0.5, 3.5)], samples_to_table(rows))
    assert acc is not None and acc.url == "http://trn/metrics"
    assert acc.points[0].util_mean == pytest.approx(0.5)
    # No exporter and nothing accelerator-like: no section at all.
    assert accelerator_section(log, None, [_point(0, 0.5, 3.5)], samples_to_table([])) is None
