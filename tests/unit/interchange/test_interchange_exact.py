"""The vLLM-bench export read back leaves every statistic of a point as it was (a property
over random points), its ITL lists hold one gap per stamp after the first as `vllm bench`
writes them (the finish chunk included when the server counted that step), and the AIPerf
importer reads AIPerf's summary file alone and AIPerf 0.8's load settings."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.interchange import aiperf, import_files, vllm
from acceval.interchange._common import Unmapped
from acceval.metrics import summarize_point
from acceval.results.records import Record, records_to_table
from acceval.study import SLO

MS = 1_000_000
SLO_ = SLO(ttft_ms=40.0, tpot_ms=6.0, e2e_ms=120.0, percentile=90.0)
# Where the answer's token count came from does not travel: vLLM's file has usage only.
_NOT_CARRIED = {"tokens_from_usage_fraction", "tokens_from_chunks_fraction"}


@st.composite
def _request(draw: st.DrawFn, i: int) -> Record:
    sent = draw(st.integers(0, 2000)) * MS + draw(st.integers(0, 999_999))
    rec = Record("t", 0, "p", i, f"task{i}", sent_ns=sent, prompt_tokens=draw(
        st.one_of(st.none(), st.integers(1, 50))), tokens_from="usage")
    if draw(st.integers(0, 9)) == 0:  # an error
        rec.error_kind, rec.error_detail = "http", "HTTP 500"
        rec.done_ns = sent + draw(st.integers(1, 50)) * MS
        return rec
    if draw(st.integers(0, 9)) == 0:  # a JSON answer: no TTFT
        rec.done_ns = sent + draw(st.integers(1, 90)) * MS
        rec.output_tokens = draw(st.integers(1, 9))
        return rec
    at = sent + draw(st.integers(1, 60 * MS))
    chunks = [at]
    for _ in range(draw(st.integers(0, 6))):
        at += draw(st.sampled_from([0, 1, 7 * MS])) * draw(st.integers(0, 3 * MS))
        chunks.append(at)
    rec.first_token_ns, rec.chunk_ns = chunks[0], chunks
    eos = draw(st.booleans())
    per_chunk = draw(st.sampled_from([1, 1, 2]))
    rec.output_tokens = draw(st.one_of(st.none(), st.just(len(chunks) * per_chunk + eos)))
    rec.finish_reason = "stop" if eos else "length"
    rec.finish_ns = at + draw(st.integers(0, 5 * MS))
    rec.done_ns = rec.finish_ns + draw(st.integers(0, MS))
    return rec


@st.composite
def _point(draw: st.DrawFn) -> list[Record]:
    return [draw(_request(i)) for i in range(draw(st.integers(1, 25)))]


def _file(recs: list[Record]) -> dict[str, Any]:
    rows = records_to_table(recs).to_pylist()
    rows.sort(key=lambda r: (r["sent_ns"], r["request_id"]))
    return {"completed": sum(r.error_kind is None for r in recs), "acceval_kind": "concurrency",
            "acceval_level": "4", "acceval_target": "t", "acceval_load_label": "p",
            **vllm._lists(rows)}


def _same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            if k not in _NOT_CARRIED:
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, float) and isinstance(b, float) and not (math.isinf(a) or math.isinf(b)):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-9), path
    else:
        assert a == b, path


@settings(max_examples=150, deadline=None)
@given(_point())
def test_export_then_import_leaves_every_statistic_unchanged(recs: list[Record]) -> None:
    before = summarize_point(records_to_table(recs), slo=SLO_, requested_rate_rps=None)
    data = json.loads(vllm.dumps(_file(recs)))  # through JSON, as the file goes
    back = vllm.read(Path("point.json"), data, Unmapped())[0].records
    after = summarize_point(records_to_table(back), slo=SLO_, requested_rate_rps=None)
    _same(before.model_dump(), after.model_dump())


def test_itls_hold_one_gap_per_chunk_after_the_first_with_the_finish_chunk() -> None:
    # A 4-digit answer from vLLM: four text chunks 2 ms apart, the EOS finish chunk 2 ms
    # after the last, usage 5: `vllm bench` writes four gaps; so does the export.
    eos = Record("t", 0, "p", 0, "a", sent_ns=0, first_token_ns=10 * MS,
                 chunk_ns=[10 * MS, 12 * MS, 14 * MS, 16 * MS], output_tokens=5,
                 finish_reason="stop", finish_ns=18 * MS, done_ns=18 * MS, tokens_from="usage")
    length = Record("t", 0, "p", 1, "b", sent_ns=0, first_token_ns=10 * MS,
                    chunk_ns=[10 * MS, 12 * MS, 14 * MS, 16 * MS], output_tokens=4,
                    finish_reason="length", finish_ns=18 * MS, done_ns=18 * MS,
                    tokens_from="usage")
    cols = vllm._lists(records_to_table([eos, length]).to_pylist())
    assert cols["itls"][0] == pytest.approx([0.002] * 4)
    assert cols["itls"][1] == pytest.approx([0.002] * 3)  # no counted finish step
    assert cols["output_lens"] == [5, 4]


def test_the_aiperf_summary_alone_is_a_summary_point(tmp_path: Path) -> None:
    peers = Path(__file__).parents[2] / "fixtures" / "peers"
    path = tmp_path / aiperf.SUMMARY_FILE
    path.write_text((peers / "aiperf-profile_export_aiperf.json").read_text())
    [point] = aiperf.read(path, path.read_text(), Unmapped())
    assert point.peer.summary_only and point.records == []
    assert (point.kind, point.level, point.model) == ("concurrency", 2.0, "mock")
    assert point.peer.figures["time_to_first_token.avg"] is not None


def test_aiperf_0_8_load_settings_and_model_name_are_read(tmp_path: Path) -> None:
    # AIPerf 0.8's input_config: the load in `loadgen`, the model in `endpoint.model_names`
    # (aiperf/common/config/loadgen_config.py, endpoint_config.py).
    summary = {"aiperf_version": "0.8.0", "request_throughput": {"avg": 3.0},
               "input_config": {"endpoint": {"model_names": ["Qwen/Qwen3-0.6B"],
                                             "url": "http://host:8000"},
                                "loadgen": {"concurrency": 8, "request_count": 40}}}
    line = {"metadata": {"request_start_ns": 0, "request_end_ns": 30 * MS},
            "metrics": {"time_to_first_token": {"value": 10.0, "unit": "ms"},
                        "inter_chunk_latency": {"value": [5.0, 5.0], "unit": "ms"},
                        "output_sequence_length": {"value": 3, "unit": "tokens"}}}
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (tmp_path / aiperf.SUMMARY_FILE).write_text(json.dumps(summary))
    [point] = aiperf.read(path, path.read_text(), Unmapped())
    assert (point.kind, point.level, point.label) == ("concurrency", 8.0, "concurrency 8")
    assert point.model == point.target == "Qwen/Qwen3-0.6B"
    assert point.base_url == "http://host:8000/v1"
    rate = {**summary, "input_config": {**summary["input_config"], "loadgen": {
        "request_rate": 5.0, "request_rate_mode": "constant"}}}
    (tmp_path / aiperf.SUMMARY_FILE).write_text(json.dumps(rate))
    [point] = aiperf.read(path, path.read_text(), Unmapped())
    assert (point.kind, point.level, point.requested_rate_rps) == ("constant", 5.0, 5.0)


def test_the_exported_slo_keeps_request_goodput_through_import(tmp_path: Path) -> None:
    recs = [Record("t", 0, "p", i, f"task{i}", sent_ns=i * 5 * MS,
                   first_token_ns=i * 5 * MS + (10 + 20 * (i % 3)) * MS,
                   chunk_ns=[i * 5 * MS + (10 + 20 * (i % 3) + k * 4) * MS for k in range(3)],
                   output_tokens=3, finish_reason="length",
                   done_ns=i * 5 * MS + (20 + 20 * (i % 3)) * MS, tokens_from="usage")
            for i in range(12)]
    slo = SLO(ttft_ms=40.0, tpot_ms=6.0)
    expected = summarize_point(records_to_table(recs), slo=slo, requested_rate_rps=None)
    data = {**_file(recs), "acceval_slo": slo.model_dump(exclude_defaults=True),
            "request_goodput": expected.goodput_rps}
    path = tmp_path / "point.json"
    path.write_text(vllm.dumps(data))
    result, _ = import_files([path], "vllm", out_dir=tmp_path / "runs")
    (point,) = result.target("t").points
    assert expected.goodput_rps is not None and 0 < expected.good < len(recs)
    assert point.summary.goodput_rps == pytest.approx(expected.goodput_rps, rel=1e-12)
    assert point.summary.slo == slo
    assert result.log.notes[0].startswith("imported from vllm: 1 point(s), 12 request(s)")
