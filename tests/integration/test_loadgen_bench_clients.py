"""The client benchmark's many-core parts on loopback: acceval's point split over client
processes (``loadgen.py worker --clients``), against the mock with ``--workers``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from measure import MockServer, join  # noqa: E402
from peers import ClientReq  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(url: str, out: Path, *load: str) -> dict:
    subprocess.run([sys.executable, str(BENCH / "loadgen.py"), "worker", "--url", url,
                    "--out", str(out), "--output-tokens", "4", "--duration", "1",
                    "--clients", "2", *load], check=True, timeout=120)
    return dict(json.loads(out.read_text()))


def test_two_client_processes_share_a_closed_loop_and_every_request_reaches_the_log(
        tmp_path: Path) -> None:
    server = MockServer(_port(), {"output_tokens": 4, "ttft_ms": 1}, tmp_path / "log.jsonl",
                        None, workers=2)
    try:
        data = _worker(server.url, tmp_path / "out.json", "--concurrency", "4")
    finally:
        log = server.stop()
    rows = [ClientReq(**r) for r in data["rows"]]
    ids = [int(r.request_id or -1) for r in rows]
    assert len(ids) == len(set(ids)) > 0
    # split_point interleaves the ids: client k sends k, k + 2, k + 4, ...
    assert {i % 2 for i in ids} == {0, 1}
    # Both workers' logs are read: every request the clients sent has its server line.
    assert len(log) == len(rows)
    j = join(rows, log, 4)
    assert j.method == "X-Request-Id" and j.unmatched == 0 and len(j.client_ttft_ms) == len(rows)
    assert data["dispatch_lag_p99_ms"] is None  # a closed loop has no schedule


def test_two_client_processes_share_one_open_loop_schedule(tmp_path: Path) -> None:
    server = MockServer(_port(), {"output_tokens": 4}, tmp_path / "log.jsonl", None)
    try:
        data = _worker(server.url, tmp_path / "out.json", "--rate", "100")
    finally:
        log = server.stop()
    ids = [int(r["request_id"]) for r in data["rows"]]
    # One Poisson schedule of about 100 arrivals in the second, every other one sent by each
    # client (two schedules at the full rate would send about 200).
    assert len(ids) == len(set(ids)) and {i % 2 for i in ids} == {0, 1}
    assert 20 < len(ids) < 160
    assert len(log) == len(ids)
    assert data["dispatch_lag_p50_ms"] is not None
