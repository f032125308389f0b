import json
import os
from pathlib import Path

import pytest

from acceval.probes import NeuronMonitorProbe, NeuronSysfsProbe, parse_monitor_report
from acceval.probes.neuron import parse_power_utilization

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "probes"
LINES = (FIXTURES / "neuron_power_utilization.txt").read_text().splitlines()


def test_power_file_format_percent_of_max() -> None:
    r = parse_power_utilization(LINES[0])
    assert r is not None
    assert (r.min_pct, r.max_pct, r.avg_pct) == (31.25, 58.5, 44.75)
    assert parse_power_utilization(LINES[1]) is None       # NO_DATA
    assert parse_power_utilization(LINES[2]) is None       # INVALID
    assert parse_power_utilization("garbage") is None


def _device(root: Path, n: int, text: str) -> Path:
    f = root / f"neuron{n}" / "stats" / "power" / "utilization"
    f.parent.mkdir(parents=True)
    f.write_text(text + "\n")
    return f


def test_sysfs_probe_reports_percent_and_only_estimates_watts_when_declared(
        tmp_path: Path) -> None:
    _device(tmp_path, 0, LINES[0])
    _device(tmp_path, 1, LINES[1])
    bare = NeuronSysfsProbe(tmp_path)
    assert bare.available() == (True, "")
    bare.start(0)
    got = bare.sample()
    assert [(s.device, s.metric, s.value) for s in got] == [
        ("neuron0", "power_pct_of_max", 44.75)]             # neuron1 NO_DATA: no sample
    watts = NeuronSysfsProbe(tmp_path, max_power_w=500.0)
    watts.start(0)
    first = watts.sample()
    w = next(s for s in first if s.metric == "power_w")
    assert w.value == pytest.approx(223.75) and w.estimated
    second = watts.sample()
    assert next(s for s in second if s.metric == "energy_j").estimated


def test_sysfs_probe_without_driver(tmp_path: Path) -> None:
    ok, why = NeuronSysfsProbe(tmp_path / "none").available()
    assert not ok and "no Neuron power files" in why


def test_monitor_report_becomes_samples() -> None:
    report = json.loads((FIXTURES / "neuron_monitor_report.json").read_text())
    samples = parse_monitor_report(report, 123)
    by = {(s.metric, s.device): s.value for s in samples}
    assert by[("neuroncore_util_pct", "vllm/nc0")] == 87.5
    assert by[("flops", "vllm/nc1")] == 3.98e14
    assert by[("memory_used_bytes_neuron_device", "vllm")] == 68719476736
    assert by[("executions_completed", "vllm")] == 120
    assert by[("device_latency_p50_s", "vllm")] == 0.0121
    assert by[("host_memory_used_bytes", "host")] == 85899345920
    assert not [s for s in samples if "power" in s.metric]   # neuron-monitor has none
    assert all(s.t_ns == 123 for s in samples)


def test_monitor_probe_tails_a_jsonl_file(tmp_path: Path) -> None:
    report = json.loads((FIXTURES / "neuron_monitor_report.json").read_text())
    src = tmp_path / "monitor.jsonl"
    src.write_text(json.dumps(report) + "\n" + json.dumps(report)[:50])   # 2nd half-written
    probe = NeuronMonitorProbe(source=src)
    assert probe.available() == (True, "")
    probe.start(0)
    assert len({s.t_ns for s in probe.sample()}) == 1 and probe.sample() == []
    with src.open("a") as f:
        f.write(json.dumps(report)[50:] + "\n")
    assert any(s.metric == "flops" for s in probe.stop())
    ok, why = NeuronMonitorProbe(command=("no-such-neuron-monitor",)).available()
    assert not ok and "not on PATH" in why
    assert os.path.exists(src)
