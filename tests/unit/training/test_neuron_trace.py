"""The Neuron profiler's JSON export: the compute / communication / idle split of its system
and device profiles, on fixtures built to the documented fields (tests/fixtures/training/
README.md). Expected values are worked out by hand from the fixtures' intervals."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from acceval.training import metrics as m
from acceval.training.trace import read_trace

FIXTURES = Path(__file__).parents[2] / "fixtures" / "training"
SYSTEM = FIXTURES / "neuron-system_profile.json"
DEVICE = FIXTURES / "neuron-device_profile.json"


def test_system_profile_split_per_profiler_step() -> None:
    """NeuronCore 0, times in ms from the first step's start:
    step 5 [0, 10]: nc_exec_running [1, 7], cc_running [5, 8]
      -> communication 3; compute outside collectives [1, 5] = 4; idle 10 - [1, 8] = 3
    step 6 [10, 20]: nc_exec_running [11, 15] + [16, 19], cc_exec_barrier [15, 16]
      -> communication 1; compute 7; idle 10 - 8 = 2.
    NeuronCore 1's nc_exec_running [0, 20] and rank 1's own ProfilerStep#5 [0.5, 10.5] are
    another core's and another process's: if either were used, these numbers would change."""
    tr = read_trace(SYSTEM)
    assert tr.kind == "neuron-system" and not tr.whole_span and not tr.overlap_known
    got = [v for s in tr.steps for v in (s.step, s.duration_ms, s.compute_ms,
                                         s.communication_ms, s.overlap_ms, s.idle_ms)]
    assert got == pytest.approx([5, 10.0, 4.0, 3.0, 0.0, 3.0, 6, 10.0, 7.0, 1.0, 0.0, 2.0])
    assert any("NeuronCore 0 of i-0f207fb2a99bd2d08 (2 core(s)" in n for n in tr.notes)
    assert any("overlap is not measured" in n for n in tr.notes)
    assert any("data loading is not marked" in n for n in tr.notes)


def test_system_profile_shares_say_overlap_is_not_measured() -> None:
    """Over 20 ms: compute 11 (55 %), communication 4 (20 %, all of it exposed), idle 5."""
    tr = read_trace(SYSTEM)
    sat = m.saturation(tr.steps, None, overlap_known=tr.overlap_known)
    assert sat is not None
    assert (sat.compute_share, sat.communication_share, sat.exposed_communication_share,
            sat.idle_share) == pytest.approx((0.55, 0.20, 0.20, 0.25))
    assert sat.overlap_share is None and "overlap with compute not measurable" in sat.evidence
    assert sat.bound == "compute-bound"


def test_system_profile_events_not_understood_are_counted() -> None:
    """15 trace_events + 2 entries of an undocumented top-level list (dma_events) = 17 seen;
    not understood: an event with no timestamp, one whose duration is "n/a", and the two
    dma_events. Runtime API calls, a framework operator, a sync point and the mem_usage /
    cpu_util samples are understood and not split."""
    tr = read_trace(SYSTEM)
    assert (tr.events, tr.unread.count) == (17, 4)
    assert sum("dma_events:" in x for x in tr.unread.examples) == 2
    assert any('"n/a"' in x for x in tr.unread.examples)


def test_device_profile_split_of_one_graph_execution() -> None:
    """Instructions in µs from the first: TensorMatrix [0, 400] + [500, 900], Vector
    [300, 600], Scalar [950, 1000], GpSimd [1300, 1400]: compute = [0, 900] + [950, 1000] +
    [1300, 1400] = 1050; CC-core [800, 1200]: communication 400, of which [800, 900] and
    [950, 1000] overlap compute (150); window [0, 1400]; busy [0, 1200] + [1300, 1400] = 1300,
    so idle 100."""
    tr = read_trace(DEVICE)
    assert tr.kind == "neuron-device" and tr.whole_span and tr.overlap_known
    (s,) = tr.steps
    assert (s.step, s.duration_ms, s.compute_ms, s.communication_ms, s.overlap_ms,
            s.idle_ms) == pytest.approx((0, 1.4, 1.05, 0.4, 0.15, 0.1))
    sat = m.saturation(tr.steps, None)
    assert sat is not None
    assert (sat.compute_share, sat.communication_share, sat.exposed_communication_share,
            sat.overlap_share, sat.idle_share) == pytest.approx(
        (1.05 / 1.4, 0.4 / 1.4, 0.25 / 1.4, 0.375, 0.1 / 1.4))
    assert any("no step boundaries" in n and "total_time 0.0014 s" in n for n in tr.notes)
    assert any("lists no DMA transfers" in n for n in tr.notes)
    assert any("host time" in n for n in tr.notes)


def test_device_profile_events_not_understood_are_counted() -> None:
    """8 instructions + 1 entry of an undocumented top-level list (dma); not understood: the
    instruction with no label, the one with a null duration, and the dma entry."""
    tr = read_trace(DEVICE)
    assert (tr.events, tr.unread.count) == (9, 3)
    assert any(x.startswith("dma:") for x in tr.unread.examples)


def test_a_system_profile_without_step_events_is_one_window(tmp_path: Path) -> None:
    """Without ProfilerStep#N the core's first to last hardware event, [1, 19] ms, is one
    window: compute 4 + 7 = 11, communication 4, idle 18 - 15 = 3."""
    data = json.loads(SYSTEM.read_text())
    data["trace_events"] = [e for e in data["trace_events"]
                            if not str(e.get("name", "")).startswith("ProfilerStep#")]
    path = tmp_path / "system_profile.json"
    path.write_text(json.dumps(data))
    tr = read_trace(path)
    assert tr.whole_span
    (s,) = tr.steps
    assert (s.step, s.duration_ms, s.compute_ms, s.communication_ms, s.idle_ms) == \
        pytest.approx((0, 18.0, 11.0, 4.0, 3.0))
    assert any("no ProfilerStep#N framework event" in n for n in tr.notes)


def test_the_declared_format_picks_the_reader(tmp_path: Path) -> None:
    assert read_trace(DEVICE, "neuron").kind == "neuron-device"
    with pytest.raises(ValueError, match=r"neuron-device_profile\.json: not a trace-event JSON"):
        read_trace(DEVICE, "kineto")
    with pytest.raises(ValueError, match="not a Neuron profiler JSON export"):
        read_trace(FIXTURES / "trace-ddp2.json.gz", "neuron")
    # gzip works for Neuron JSON as for Kineto
    gz = tmp_path / "device_profile_model_1.json.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(DEVICE.read_text())
    assert read_trace(gz).kind == "neuron-device"


@pytest.mark.parametrize(("name", "content", "message"), [
    ("system_profile.json", b'{"trace_events": [{"name": "nc_exec', "not valid JSON"),
    ("system_profile.json", b"\x0a\x8f\xff\x01\x12protobuf", "binary, not JSON"),
    ("system_profile.pftrace", b"\x0a\x8f\xff\x01", "--output-format json"),
    ("profile.json", b'{"trace_events": {"name": "x"}}', "trace_events is not a list"),
    ("profile.json", b'{"instruction": 3}', "instruction is not a list"),
    ("profile.json", b'{"summary": [], "metadata": {}}', "it has: metadata, summary"),
])
def test_a_malformed_file_names_the_file(tmp_path: Path, name: str, content: bytes,
                                         message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as info:
        read_trace(path)
    assert str(path) in str(info.value)


def test_a_pftrace_error_gives_the_export_commands(tmp_path: Path) -> None:
    path = tmp_path / "device_profile_model_7.pftrace"
    shutil.copy(DEVICE, path)  # even a JSON body: the name says protobuf, which is not read
    with pytest.raises(ValueError) as info:
        read_trace(path)
    text = str(info.value)
    assert "neuron-explorer view -d <profile dir> --output-format json" in text
    assert "neuron-profile view --output-format json --output-file profile.json" in text
