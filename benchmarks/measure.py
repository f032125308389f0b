"""Measurement parts shared by every tool in the client benchmark.

- :class:`MockServer`: ``python -m acceval.serve mock`` as a separate process (optionally
  pinned with taskset), with its ground-truth log (CLOCK_MONOTONIC ns stamps per request).
- :class:`TreeCpu`: user+sys CPU of a client process and all its descendants, sampled from
  /proc (psutil) every 20 ms, so a window's CPU can be read off afterwards.
- :func:`join`: pairs client requests with server log lines (by request id when the client
  sent one, else by send order on the shared monotonic clock).
- :func:`summarize`: the numbers the benchmark reports for one measurement.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from peers import ClientReq

_now = time.perf_counter_ns


def wall_minus_mono_ns() -> int:
    """CLOCK_REALTIME - CLOCK_MONOTONIC, read as a tight pair (converts peers' wall stamps)."""
    best = None
    for _ in range(5):
        a = time.perf_counter_ns()
        w = time.time_ns()
        b = time.perf_counter_ns()
        if best is None or b - a < best[0]:
            best = (b - a, w - (a + b) // 2)
    assert best is not None
    return best[1]


class MockServer:
    """The mock as ``workers`` processes sharing one port (``serve --workers``), all of them
    pinned to ``cpu`` (a taskset list) when given: the group's CPU is sampled as one tree."""

    def __init__(self, port: int, options: dict[str, Any], log: Path, cpu: str | None,
                 env: dict[str, str] | None = None, workers: int = 1) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.workers = workers
        cmd = [sys.executable, "-m", "acceval.serve", "mock", "--port", str(port),
               "--log", str(log), "--workers", str(workers)]
        for k, v in options.items():
            cmd += ["--option", f"{k}={v}"]
        if cpu is not None:
            cmd = ["taskset", "-c", cpu, *cmd]
        for old in self.logs():
            old.unlink()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(self.url + "/v1/models", timeout=1) as r:
                    r.read()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"mock server did not start: {err}") from None
                time.sleep(0.1)
        self.cpu = TreeCpu(self.proc.pid, period_s=0.1)

    def logs(self) -> list[Path]:
        """The log and, with ``--workers``, each other worker's (``PATH.workerK``)."""
        return [p for p in (self.log, *self.log.parent.glob(self.log.name + ".worker*"))
                if p.exists()]

    def stop(self) -> list[dict[str, Any]]:
        """Stop the server (its workers flush their logs on SIGTERM); every worker's lines."""
        self.cpu.stop()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return [json.loads(x) for p in self.logs() for x in p.read_text().splitlines()
                if x.strip()]


class TreeCpu:
    """Samples a process tree's cumulative CPU seconds; ``cpu_between`` interpolates.

    The CPU of the tree's processes is read every ``period_s``; the tree itself is listed
    again every ``list_every_s`` (and at the end). Listing it reads every process on the host
    (``children(recursive=True)``): about 2 ms a time here, so listing it at every 20-ms sample
    took 9 % of a core (2.6 % now), in bursts beside the measured client. ``loadgen.py``'s
    fast half-max point, 12-s runs at about 10,500 req/s: schedule-lag p99 1.31-1.37 ms
    before, 0.58-0.84 ms after; a 22-s run at 11,550 req/s in the sitting after still gave
    1.34 ms (docs/benchmarks.md). A process that starts and ends between two listings is
    missed: a client's helpers live as long as its run."""

    list_every_s = 0.25

    def __init__(self, pid: int, period_s: float = 0.02) -> None:
        self.root = psutil.Process(pid)
        self.period_s = period_s
        self.last: dict[int, float] = {}
        self.series: list[tuple[int, float]] = []
        self._procs: list[psutil.Process] = []
        self._listed_ns = 0
        self.listings = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _sample(self, *, relist: bool = False) -> None:
        now = _now()
        if relist or not self._procs or now - self._listed_ns >= self.list_every_s * 1e9:
            self._listed_ns = now
            self.listings += 1
            try:
                self._procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                self._procs = []
        for p in self._procs:
            try:
                t = p.cpu_times()
                # A dead process keeps its last sample; reaped children are then not counted
                # twice through the parent's children_* fields, which are left out.
                self.last[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        self.series.append((_now(), sum(self.last.values())))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.period_s)

    def stop(self) -> None:
        self._sample(relist=True)
        self._stop.set()
        self._thread.join()

    def cpu_between(self, a_ns: int, b_ns: int) -> float:
        ts = [t for t, _ in self.series]
        vs = [v for _, v in self.series]
        return float(np.interp(b_ns, ts, vs) - np.interp(a_ns, ts, vs))


@dataclass(slots=True)
class Joined:
    client_ttft_ms: list[float]
    server_ttft_ms: list[float]
    method: str
    unmatched: int
    send_to_recv_ms: list[float]
    # The server's first write to the client's first-token stamp: the read side of the TTFT
    # error (the rest is send to receive). A client that stamps when it reads shows its own
    # delay here; one that stamps with the kernel's receive time, only the loopback's.
    write_to_read_ms: list[float]


def _server_ok(line: dict[str, Any], tokens: int) -> bool:
    return (line.get("status") == 200 and line.get("error") is None
            and line.get("output_tokens") == tokens and line.get("first_chunk_ns") is not None)


def join(reqs: list[ClientReq], log: list[dict[str, Any]], tokens: int) -> Joined:
    """Pair client requests with server lines. Ids when present, else send order.

    Without ids: both sides are sorted on CLOCK_MONOTONIC (client send stamp, server receive
    stamp) and paired in order, skipping a server line that arrived before the client's send
    (minus 1 ms of tolerance). Two sends closer together than the loopback delay can swap;
    with the mock's fixed TTFT that changes a pair's error by at most their send gap.
    """
    client = [r for r in reqs if r.ok and r.ttft_ms is not None and r.send_ns is not None]
    ok_lines = [x for x in log if _server_ok(x, tokens)]
    out = Joined([], [], "", 0, [], [])
    ids = [r.request_id for r in client if r.request_id is not None]
    if ids and len(ids) == len(client):
        by_id = {str(x["request_id"]): x for x in ok_lines}
        out.method = "X-Request-Id"
        for r in client:
            line = by_id.get(str(r.request_id))
            if line is None:
                out.unmatched += 1
                continue
            _add(out, r, line)
        return out
    out.method = "send order on CLOCK_MONOTONIC"
    client.sort(key=lambda r: r.send_ns or 0)
    ok_lines.sort(key=lambda x: x["recv_ns"])
    recv = [x["recv_ns"] for x in ok_lines]
    j = 0
    for r in client:
        assert r.send_ns is not None
        j = max(j, bisect.bisect_left(recv, r.send_ns - 1_000_000, lo=j))
        if j >= len(ok_lines):
            out.unmatched += 1
            continue
        _add(out, r, ok_lines[j])
        j += 1
    return out


def _add(out: Joined, r: ClientReq, line: dict[str, Any]) -> None:
    assert r.ttft_ms is not None
    out.client_ttft_ms.append(r.ttft_ms)
    out.server_ttft_ms.append((line["first_chunk_ns"] - line["recv_ns"]) / 1e6)
    if r.send_ns is not None:
        out.send_to_recv_ms.append((line["recv_ns"] - r.send_ns) / 1e6)
        out.write_to_read_ms.append((r.send_ns - line["first_chunk_ns"]) / 1e6 + r.ttft_ms)


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def summarize(tool: str, reqs: list[ClientReq], log: list[dict[str, Any]], tokens: int,
              cpu: TreeCpu | None, cpu_s_override: float | None = None,
              lag_p50_ms: float | None = None, lag_p99_ms: float | None = None
              ) -> dict[str, Any]:
    """Rate and CPU over the server-observed load window; TTFT error and lag per request."""
    ok_lines = [x for x in log if _server_ok(x, tokens)]
    res: dict[str, Any] = {"tool": tool, "client_ok": sum(r.ok for r in reqs),
                           "client_total": len(reqs), "server_ok": len(ok_lines),
                           "server_total": len(log)}
    if not ok_lines:
        return res
    a = min(x["recv_ns"] for x in log)
    b = max(x["done_ns"] or x["recv_ns"] for x in log)
    window_s = (b - a) / 1e9
    res["window_s"] = window_s
    res["rate_rps"] = len(ok_lines) / window_s if window_s > 0 else None
    # The rate the server saw requests arrive at (first to last receive): the load offered,
    # which an open loop's schedule sets; rate_rps also holds the last request's latency.
    recv = [x["recv_ns"] for x in log]
    span_s = (max(recv) - min(recv)) / 1e9
    res["offered_rps"] = (len(recv) - 1) / span_s if span_s > 0 else None
    cpu_s = cpu_s_override if cpu_s_override is not None else (
        cpu.cpu_between(a, b) if cpu is not None else None)
    res["cpu_s"] = cpu_s
    res["cpu_ms_per_req"] = cpu_s * 1e3 / len(ok_lines) if cpu_s is not None else None
    if cpu is not None and cpu.series:
        # The whole process tree's life: start-up, data generation, the run, the report.
        res["cpu_total_s"] = cpu.series[-1][1]
        res["cpu_total_ms_per_req"] = cpu.series[-1][1] * 1e3 / len(ok_lines)
    j = join(reqs, log, tokens)
    err = [c - s for c, s in zip(j.client_ttft_ms, j.server_ttft_ms, strict=True)]
    res.update({
        "join": j.method, "joined": len(err), "unmatched": j.unmatched,
        "ttft_client_p50_ms": pct(j.client_ttft_ms, 50),
        "ttft_server_p50_ms": pct(j.server_ttft_ms, 50),
        "ttft_err_p50_ms": pct(err, 50), "ttft_err_p99_ms": pct(err, 99),
        "send_to_recv_p99_ms": pct(j.send_to_recv_ms, 99),
        "write_to_read_p50_ms": pct(j.write_to_read_ms, 50),
        "write_to_read_p99_ms": pct(j.write_to_read_ms, 99),
    })
    if j.method == "X-Request-Id":
        # Self-check of the id-less join the other peers need: the same pairs by send order.
        anon = [ClientReq(r.send_ns, r.ttft_ms, r.lag_ms, None, r.ok) for r in reqs]
        k = join(anon, log, tokens)
        res["ttft_err_p99_ms_order_join"] = pct(
            [c - s for c, s in zip(k.client_ttft_ms, k.server_ttft_ms, strict=True)], 99)
    lags = [r.lag_ms for r in reqs if r.lag_ms is not None]
    res["lag_p50_ms"] = pct(lags, 50) if lags else lag_p50_ms
    res["lag_p99_ms"] = pct(lags, 99) if lags else lag_p99_ms
    return res


def run_client(cmd: list[str], log_path: Path, timeout_s: float,
               env: dict[str, str] | None = None) -> tuple[int, TreeCpu]:
    """Run a client command to completion while sampling its process tree's CPU."""
    (log_path.parent / "command.txt").write_text(shlex.join(cmd) + "\n")
    with log_path.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, start_new_session=True)
        cpu = TreeCpu(proc.pid)
        try:
            rc = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        finally:
            cpu.stop()
        # Daemons a client leaves behind (AIPerf's services) must not run into the next tool.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return rc, cpu
