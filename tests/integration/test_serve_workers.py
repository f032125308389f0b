"""`acceval serve --workers N`: N processes share one port, and all go when the first does."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase


def test_workers_share_the_port_and_leave_with_the_server(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval.serve", "mock", "--port", "0", "--workers", "3",
         "--option", "ttft_ms=1", "--option", "output_tokens=2", "--log", str(log)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        port = int(re.search(r":(\d+)/v1", line).group(1))  # type: ignore[union-attr]
        workers = psutil.Process(proc.pid).children()
        assert len(workers) == 2
        listening = {c.pid for c in psutil.net_connections("tcp")
                     if c.status == "LISTEN" and c.laddr.port == port}
        assert listening == {proc.pid, *(w.pid for w in workers)}
        body = json.dumps({"model": "mock", "prompt": "hi", "max_tokens": 2})
        for _ in range(60):  # a new connection each time: the kernel spreads them
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", "/v1/completions", body,
                         {"Content-Type": "application/json", "Connection": "close"})
            assert conn.getresponse().status == 200
            conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()
    logs = [log, Path(f"{log}.worker1"), Path(f"{log}.worker2")]
    served = [len(p.read_text().splitlines()) if p.exists() else 0 for p in logs]
    assert sum(served) == 60
    assert sum(1 for n in served if n > 0) >= 2      # more than one process answered
    deadline = time.monotonic() + 10
    while any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers):
        assert time.monotonic() < deadline, "a worker outlived the server"
        time.sleep(0.1)
