"""Fallback parsers on recorded tool output (real where this machine can produce it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acceval.errors import UsageError
from acceval.portability import (
    parse_fallback,
    parse_neuron_log,
    parse_ort_log,
    parse_torch_trace,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "portability"


def test_real_cpu_torch_trace_has_no_accelerator_so_nothing_fell_back() -> None:
    rep = parse_fallback(FIX / "torch_profiler_cpu_trace.json")
    assert rep.source == "torch_trace"
    assert rep.accelerator is None and not rep.accelerator_seen
    assert rep.fallback_count == 0
    assert rep.placements["CPU"] > 10  # leaf compute ops of a real forward pass
    assert "no accelerator activity" in rep.notes[0]


def test_cuda_trace_finds_cpu_ops_and_transfers() -> None:
    rep = parse_fallback(FIX / "torch_profiler_cuda_trace_documented.json")
    assert rep.accelerator == "NVIDIA H200"
    assert [o.op for o in rep.ops] == ["aten::sort", "aten::nonzero"]  # by CPU time
    assert rep.ops[0].time_us == 300.0
    # addmm, two copies and the softmax kernel launched device work; views are ignored
    assert rep.placements == {"accelerator": 4, "CPU": 2}
    assert rep.transfers == 2


def test_torch_trace_launch_found_by_time_when_external_id_is_missing() -> None:
    trace = {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 3},
        {"ph": "X", "cat": "cpu_op", "name": "aten::topk", "pid": 1, "tid": 1, "ts": 20,
         "dur": 5},
    ]}
    rep = parse_torch_trace(trace)
    assert [o.op for o in rep.ops] == ["aten::topk"]


def test_real_ort_cpu_log_places_every_node_on_cpu() -> None:
    rep = parse_fallback(FIX / "ort_verbose_cpu.log")
    assert rep.source == "ort_log"
    assert rep.placements == {"CPUExecutionProvider": 49}
    assert rep.accelerator is None and rep.fallback_count == 0


def test_ort_cuda_log_lists_cpu_nodes_by_op_type() -> None:
    rep = parse_fallback(FIX / "ort_verbose_cuda_documented.log")
    assert rep.accelerator == "CUDAExecutionProvider"
    assert rep.placements == {"CUDAExecutionProvider": 5, "CPUExecutionProvider": 3}
    assert {o.op: o.count for o in rep.ops} == {
        "DynamicQuantizeLinear": 1, "MatMulInteger": 1, "Shape": 1}
    assert rep.transfers == 2
    assert any("MatMulInteger" in n for n in rep.notes)


def test_ort_count_only_block_reports_unlisted_nodes() -> None:
    text = ("[V:onnxruntime:, session_state.cc:1 VerifyEachNodeIsAssignedToAnEp] Node placements\n"
            "[V:onnxruntime:, session_state.cc:2 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed "
            "on [CUDAExecutionProvider]. Number of nodes: 40\n"
            "[V:onnxruntime:, session_state.cc:2 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed "
            "on [CPUExecutionProvider]. Number of nodes: 2\n")
    rep = parse_ort_log(text)
    assert rep.fallback_count == 2 and rep.ops[0].op == "(unlisted)"


def test_ort_log_without_placements_says_how_to_get_them() -> None:
    with pytest.raises(UsageError, match="log_severity_level"):
        parse_ort_log("2026 [I:onnxruntime:, x.cc:1 f] Session successfully initialized.\n")


def test_neuron_analyze_report() -> None:
    rep = parse_fallback(FIX / "neuron_analyze_report_documented.json")
    assert rep.source == "neuron" and rep.accelerator == "neuron"
    assert rep.support_percentage == 60.0
    assert [(o.op, o.count) for o in rep.ops] == [("aten::mul", 1)]
    assert "test2_unsup.py 24" in (rep.ops[0].detail or "")
    assert rep.placements == {"neuron": 3, "unsupported": 1}


def test_neuron_log_partitioned_and_unsupported_ops_and_compiler_binding() -> None:
    rep = parse_fallback(FIX / "neuron_compile_documented.log")
    where = {o.op: o.where for o in rep.ops}
    assert where["aten::sort"] == "CPU (partitioner)"
    assert where["aten::_unique2"].startswith("unsupported")
    assert rep.fallback_count == 3
    assert "neuronx-cc 2.8.0.25+a3ad0f342" in rep.notes[0]
    # header comments naming ops do not count
    assert parse_neuron_log("# aten::sort is not supported\n").fallback_count == 0


def test_bad_inputs_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such"):
        parse_fallback(tmp_path / "missing.json")
    bad = tmp_path / "t.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        parse_fallback(bad, "torch_trace")
    weird = tmp_path / "w.json"
    weird.write_text(json.dumps({"traceEvents": 3}))
    with pytest.raises(UsageError, match="not a Chrome trace"):
        parse_fallback(weird)
