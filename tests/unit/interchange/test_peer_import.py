"""Each peer's recorded (GuideLLM, AIPerf) or schema-built (vLLM) file into a run folder
through the real importer and the real analyze, rendered by the real report."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from acceval.errors import UsageError
from acceval.interchange import import_files
from acceval.report import render
from acceval.run_result import RunResult

PEERS = Path(__file__).resolve().parents[2] / "fixtures" / "peers"


def _imported(tmp_path: Path, fmt: str, *names: str) -> tuple[RunResult, Path]:
    return import_files([PEERS / n for n in names], fmt, out_dir=tmp_path)


def test_aiperf_lines_become_records_and_match_aiperf_percentiles(tmp_path: Path) -> None:
    result, run_dir = _imported(tmp_path, "aiperf", "aiperf-profile_export.jsonl")
    (t,) = result.targets
    (p,) = t.points
    assert p.label == "concurrency 2" and p.kind == "concurrency" and p.level == 2
    assert p.summary.requests == 12 and p.summary.errors == 0
    assert pq.read_table(run_dir / "records.parquet").num_rows == 12
    assert p.peer is not None and p.peer.tool == "aiperf" and p.peer.version == "0.13.0"
    # The same stamps and the same (linear) percentile: acceval's TTFT is AIPerf's.
    assert p.summary.ttft_ms.p50 == pytest.approx(p.peer.figures["time_to_first_token.p50"])
    assert p.summary.ttft_ms.p99 == pytest.approx(p.peer.figures["time_to_first_token.p99"])
    imp = result.log.imported
    assert imp is not None and imp.requests == 12
    assert imp.unmapped["metrics.http_req_blocked"] == 12  # counted, not dropped
    assert any("not mapped" in w for w in result.warnings)


def test_guidellm_benchmark_becomes_a_point_with_guidellm_figures(tmp_path: Path) -> None:
    result, _ = _imported(tmp_path, "guidellm", "guidellm-benchmarks.json")
    (p,) = result.target("mock").points
    assert p.label == "concurrent 2 (concurrency)" and p.summary.ok == 12
    assert p.peer is not None and p.peer.version == "0.8.1"
    fig = p.peer.figures
    # GuideLLM's TTFT is first token iteration - request start, as acceval's from the stamps.
    assert p.summary.ttft_ms.mean == pytest.approx(
        fig["time_to_first_token_ms.successful.mean"], rel=1e-6)
    # GuideLLM's inter_token_latency_ms is (last token - first token) / (n - 1); acceval's
    # TPOT ends at request_end (E2E, as GuideLLM's request_latency), a little after the last
    # token: slightly larger, never smaller (docs/metrics.md).
    itl = fig["inter_token_latency_ms.successful.mean"]
    assert itl is not None and itl <= p.summary.tpot_ms.mean <= itl * 1.02
    assert result.log.imported is not None
    assert result.log.imported.unmapped["benchmarks[].requests[].info.conversation_id"] == 12


def test_vllm_detailed_file_matches_vllm_statistics(tmp_path: Path) -> None:
    result, _ = _imported(tmp_path, "vllm", "vllm-detailed.json")
    (t,) = result.targets
    (p,) = t.points
    data = json.loads((PEERS / "vllm-detailed.json").read_text())
    assert p.kind == "poisson" and p.requested_rate_rps == 4.0
    assert p.summary.ok == data["completed"] and p.summary.errors == data["failed"]
    assert p.summary.errors_by_kind == {"peer": 1}
    for ours, theirs in (("ttft_ms", "ttft"), ("tpot_ms", "tpot")):
        dist = getattr(p.summary, ours)
        assert dist.mean == pytest.approx(data[f"mean_{theirs}_ms"], rel=1e-6)
        assert dist.p99 == pytest.approx(data[f"p99_{theirs}_ms"], rel=1e-6)
    assert p.summary.itl_ms.mean == pytest.approx(data["mean_itl_ms"], rel=1e-6)


def test_vllm_summary_only_is_marked_peer_computed(tmp_path: Path) -> None:
    result, _ = _imported(tmp_path, "vllm", "vllm-detailed.json", "vllm-summary.json")
    detailed, summary = result.targets[0].points
    assert summary.peer is not None and summary.peer.summary_only
    assert summary.summary.requests == 0  # acceval measured nothing of it
    assert summary.peer.figures["mean_ttft_ms"] == pytest.approx(
        detailed.summary.ttft_ms.mean, rel=1e-6)
    assert summary.label != detailed.label
    assert result.log.imported is not None and result.log.imported.unmapped == {"tp": 1}
    md = render(result, "md")
    assert "peer-computed" in md and "summary only" in md


@pytest.mark.parametrize(("fmt", "name"), [("aiperf", "aiperf-profile_export.jsonl"),
                                           ("guidellm", "guidellm-benchmarks.json"),
                                           ("vllm", "vllm-detailed.json")])
def test_every_import_renders_as_a_report(tmp_path: Path, fmt: str, name: str) -> None:
    result, run_dir = _imported(tmp_path, fmt, name)
    html = (run_dir / "report.html").read_text()
    assert result.run_id in html and "peer-computed" in html
    assert RunResult.load(run_dir).targets[0].points[0].peer is not None


def test_a_study_prices_imported_points(tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(
        "name: priced\nslo: {ttft_ms: 100, percentile: 95}\n"
        "targets:\n  - name: h200\n    endpoint: {base_url: 'http://127.0.0.1:9/v1', model: m}\n"
        "    price: {usd_per_hour: 10.0, source: test}\n")
    result, _ = import_files([PEERS / "aiperf-profile_export.jsonl"], "aiperf",
                             study_path=study, out_dir=tmp_path, target="h200")
    t = result.target("h200")
    assert t.economics is not None
    bill = t.economics.points[0].bill
    assert bill.total_usd > 0 and bill.requests == 12
    assert t.points[0].summary.meets_slo is True


def test_wrong_format_and_unknown_target_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--format"):
        import_files([PEERS / "guidellm-benchmarks.json"], "vllm", out_dir=tmp_path)
    study = tmp_path / "s.yaml"
    study.write_text("name: s\ntargets:\n  - name: other\n    endpoint: "
                     "{base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    with pytest.raises(UsageError, match="--target NAME"):
        import_files([PEERS / "vllm-detailed.json"], "vllm", study_path=study,
                     out_dir=tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    result, _ = import_files([bad, PEERS / "aiperf-profile_export.jsonl"], "aiperf",
                             out_dir=tmp_path)
    assert result.log.imported is not None
    assert result.log.imported.unmapped["line 1 (not JSON: not imported)"] == 1
