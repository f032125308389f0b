"""The client benchmark's own logic: the client/server join, the summary, the tokenizer."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import loadgen
from measure import join, summarize
from peers import PEERS, ClientReq, Job, build_tokenizer

MS = 1_000_000


def _line(rid: str | None, recv_ms: float, ttft_ms: float, tokens: int = 16) -> dict:
    recv = int(recv_ms * MS)
    first = recv + int(ttft_ms * MS)
    return {"request_id": rid, "recv_ns": recv, "first_chunk_ns": first, "done_ns": first + MS,
            "status": 200, "error": None, "output_tokens": tokens}


def test_join_by_id_pairs_each_request_with_its_own_line() -> None:
    log = [_line("a", 0.0, 5.0), _line("b", 0.1, 50.0)]
    reqs = [ClientReq(0, 51.0, None, "b", True), ClientReq(0, 6.0, None, "a", True)]
    j = join(reqs, log, 16)
    assert j.method == "X-Request-Id"
    assert sorted(c - s for c, s in zip(j.client_ttft_ms, j.server_ttft_ms, strict=True)) == \
        pytest.approx([1.0, 1.0])


def test_join_by_send_order_skips_lines_received_before_the_send() -> None:
    # A stray server line (another client's request) 10 ms before the first send.
    log = [_line(None, 0.0, 1.0), _line(None, 10.2, 3.0), _line(None, 20.3, 4.0)]
    reqs = [ClientReq(int(20 * MS), 4.5, None, None, True),
            ClientReq(int(10 * MS), 3.5, None, None, True)]
    j = join(reqs, log, 16)
    assert j.method.startswith("send order")
    assert j.server_ttft_ms == pytest.approx([3.0, 4.0])
    assert j.unmatched == 0


def test_summary_counts_only_complete_server_responses() -> None:
    log = [_line("1", 0.0, 1.0), _line("2", 1000.0, 1.0), _line("3", 500.0, 1.0, tokens=3)]
    reqs = [ClientReq(0, 1.5, 0.2, "1", True), ClientReq(int(1000 * MS), 2.0, 0.4, "2", True)]
    res = summarize("t", reqs, log, 16, None)
    assert res["server_ok"] == 2
    assert res["rate_rps"] == pytest.approx(2 / 1.002)
    assert res["offered_rps"] == pytest.approx(2 / 1.0)  # 3 arrivals over 1 s
    assert res["ttft_err_p50_ms"] == pytest.approx(0.75)
    assert res["ttft_err_p99_ms_order_join"] == pytest.approx(res["ttft_err_p99_ms"])
    assert res["lag_p50_ms"] == pytest.approx(0.3)


def test_tiny_tokenizer_round_trips_any_text(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(build_tokenizer(tmp_path / "tok") / "tokenizer.json"))
    text = "Ünïcode, digits 123 and the quick brown fox"
    assert tok.decode(tok.encode(text).ids) == text


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_commands_name_the_server_and_the_tokenizer(name: str, tmp_path: Path) -> None:
    job = Job(url="http://127.0.0.1:9", out=tmp_path, tokenizer=tmp_path / "tok",
              output_tokens=16, requests=10, rate_rps=50.0)
    cmd = PEERS[name](tmp_path).command(job)
    text = " ".join(cmd) + "".join(p.read_text() for p in tmp_path.glob("*.yml"))
    assert "127.0.0.1:9" in text and str(tmp_path / "tok") in text


RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "peers" / "vllm-bench-serve"


def test_vllm_bench_detailed_result_joins_the_server_log_by_id(tmp_path: Path) -> None:
    import json
    import shutil

    from peers import VllmBench

    shutil.copy(RECORDED / "bench.json", tmp_path / "bench.json")
    job = Job(url="http://127.0.0.1:9", out=tmp_path, tokenizer=tmp_path, output_tokens=16,
              requests=12, rate_rps=20.0)
    run = VllmBench(tmp_path).parse(job, wall_minus_mono_ns=0)
    assert [r.request_id for r in run.reqs] == [f"vb-{i}" for i in range(12)]
    log = [json.loads(x) for x in (RECORDED / "server.jsonl").read_text().splitlines()]
    res = summarize("vllm-bench", run.reqs, log, 16, None)
    assert res["join"] == "X-Request-Id" and res["joined"] == 12 and res["unmatched"] == 0
    # Each client TTFT holds the server's plus the loopback: never below it.
    assert res["ttft_err_p50_ms"] > 0
    # Its per-request send stamps and the server's receive stamps are one clock.
    assert 0 < res["send_to_recv_p99_ms"] < 1000
    # The error splits exactly into send-to-receive and write-to-read, request by request.
    j = join(run.reqs, log, 16)
    for c, srv, a, b in zip(j.client_ttft_ms, j.server_ttft_ms, j.send_to_recv_ms,
                            j.write_to_read_ms, strict=True):
        assert c - srv == pytest.approx(a + b, abs=1e-6)
    assert res["write_to_read_p50_ms"] == pytest.approx(
        float(np.percentile(j.write_to_read_ms, 50)))
    assert all(r.lag_ms is not None and r.lag_ms >= 0 for r in run.reqs)


def test_vllm_bench_closed_loop_queue_time_is_not_a_schedule_lag(tmp_path: Path) -> None:
    import shutil

    from peers import VllmBench

    shutil.copy(RECORDED / "bench.json", tmp_path / "bench.json")
    job = Job(url="http://127.0.0.1:9", out=tmp_path, tokenizer=tmp_path, output_tokens=16,
              requests=12, concurrency=4)
    assert all(r.lag_ms is None for r in VllmBench(tmp_path).parse(job, 0).reqs)
    cmd = VllmBench(tmp_path).command(job)
    assert cmd[cmd.index("--max-concurrency") + 1] == "4" and "--save-detailed" in cmd


def test_the_server_log_goes_to_memory_by_default_and_where_asked_otherwise(
        tmp_path: Path) -> None:
    auto = loadgen.server_log_dir("auto")
    if os.path.isdir("/dev/shm"):
        assert auto is None or auto == Path("/dev/shm")
    assert loadgen.server_log_dir("") is None            # the output folder itself
    assert loadgen.server_log_dir(str(tmp_path)) == tmp_path


def test_the_worker_keeps_five_numbers_a_record_across_blocks() -> None:
    kept = loadgen._Kept()
    kept.BLOCK = 4   # three blocks for ten records
    for i in range(10):
        failed = i in (3, 7)   # 7 never left
        kept.add(SimpleNamespace(
            sent_ns=None if i == 7 else 1_000 * i, request_id=100 + i,
            first_token_ns=None if failed else 1_000 * i + 2_500_000,
            scheduled_ns=None if i % 2 else 1_000 * i - 500_000,
            error_kind="connect" if failed else None))
    rows = kept.rows(t0=10**9)
    assert [r["request_id"] for r in rows] == [str(100 + i) for i in range(10)]
    assert rows[0] == {"send_ns": 10**9, "ttft_ms": 2.5, "lag_ms": 0.5, "request_id": "100",
                       "ok": True}
    assert rows[1]["lag_ms"] is None                      # sent without a schedule
    assert rows[3]["ok"] is False and rows[3]["ttft_ms"] is None
    assert rows[7]["send_ns"] is None and rows[7]["lag_ms"] is None and not rows[7]["ok"]
    assert loadgen._Kept().rows(0) == []
