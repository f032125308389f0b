"""The load generator's own acceptance numbers, against a fast local SSE server.

Four checks (the client runs in this process, the server in a child process; both can be
pinned to one core each with ``--pin``):

1. closed-loop throughput and client CPU per streamed request (16 tokens/request);
2. the open-loop rate the client sustains (constant arrivals at ``--open-rate``);
3. TTFT error vs the server's ground truth at 50 req/s Poisson (server TTFT 20 ms, ITL 5 ms):
   client ``first_token_ns - sent_ns`` minus server ``first write - request arrival``;
4. schedule lag (``sent_ns - scheduled_ns``) at half the sustained closed-loop rate, Poisson.

CPU is ``getrusage(RUSAGE_SELF)`` user+sys over the point, divided by requests sent.

    python benchmarks/loadgen_acceptance.py            # about 40 s
    python benchmarks/loadgen_acceptance.py --quick    # about 12 s
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from acceval.loadgen.protocol import Prompt  # noqa: E402
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point  # noqa: E402
from acceval.results.records import Record  # noqa: E402
from acceval.targets import OpenAITarget  # noqa: E402
from acceval.targets.spec import Endpoint  # noqa: E402

PROMPTS = [Prompt(f"t{i}", prompt=f"What is {i} + {i}?", max_tokens=16) for i in range(100)]


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Server:
    def __init__(self, *args: str, cpu: int | None) -> None:
        cmd = [sys.executable, str(ROOT / "tests/helpers/sse_server.py"), "--tokens", "16", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                                     preexec_fn=(lambda: os.sched_setaffinity(0, {cpu}))
                                     if cpu is not None else None)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def truth(self) -> dict[str, list[int | None]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_truth", timeout=30) as r:
            data: dict[str, list[int | None]] = json.loads(r.read())
        return data

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _point(base_url: str, spec: PointSpec, t0: int) -> tuple[PointRun, list[Record], float]:
    recs: list[Record] = []
    target = OpenAITarget("bench", Endpoint(base_url=base_url, model="m"))
    await target.start()
    try:
        c0 = _cpu_s()
        res = await run_point(target, PROMPTS, spec, recs.append, t0_ns=t0)
        cpu = _cpu_s() - c0
    finally:
        await target.close()
    return res, recs, cpu


def _spec(kind: str, level: float, seconds: float, warmup_s: float = 0.5) -> PointSpec:
    return PointSpec(index=0, label=f"{kind} {level:g}", kind=kind, level=level,  # type: ignore[arg-type]
                     warmup_s=warmup_s, min_requests=10**9, max_duration_s=seconds)


def _rate(res: PointRun, recs: list[Record]) -> float:
    m = [r for r in recs if not r.warmup and r.error_kind is None]
    if len(m) < 2:
        return 0.0
    lo = min(r.sent_ns for r in m if r.sent_ns is not None)
    hi = max(r.done_ns for r in m if r.done_ns is not None)
    return len(m) / ((hi - lo) / 1e9)


def _pct(a: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(a, dtype=np.float64), q)) if a else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pin", action="store_true", help="client on CPU 0, server on CPU 1")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--open-rate", type=float, default=2000.0)
    args = ap.parse_args()
    secs = 3.0 if args.quick else 8.0
    if args.pin:
        os.sched_setaffinity(0, {0})
    cpu = 1 if args.pin else None
    out: dict[str, Any] = {"load_avg_before": os.getloadavg()}
    t0 = time.perf_counter_ns()

    # 1. closed loop throughput and CPU/request (events written one by one, unpaced).
    for label, sargs in (("fast", ()), ("paced_itl_1ms", ("--itl-ms", "1"))):
        srv = Server("--no-truth", *sargs, cpu=cpu)
        try:
            res, recs, cpu_s = run(_point(srv.base_url, _spec("concurrency", args.concurrency,
                                                               secs), t0))
        finally:
            srv.stop()
        out[f"closed_{label}"] = {
            "rate_rps": round(_rate(res, recs), 1), "sent": res.sent, "errors": res.errors,
            "cpu_ms_per_request": round(cpu_s / res.sent * 1e3, 4),
            "tokens_per_request": float(np.mean([r.output_tokens or 0 for r in recs])),
        }
    max_rate = out["closed_fast"]["rate_rps"]

    # 2. open loop at a fixed rate.
    srv = Server("--no-truth", cpu=cpu)
    try:
        res, recs, cpu_s = run(_point(srv.base_url, _spec("constant", args.open_rate, secs), t0))
    finally:
        srv.stop()
    lags = [(r.sent_ns - r.scheduled_ns) / 1e6 for r in recs if not r.warmup]  # type: ignore[operator]
    out["open_constant"] = {
        "requested_rps": args.open_rate, "rate_rps": round(_rate(res, recs), 1),
        "errors": res.errors, "cpu_ms_per_request": round(cpu_s / res.sent * 1e3, 4),
        "lag_p50_ms": round(_pct(lags, 50), 4), "lag_p99_ms": round(_pct(lags, 99), 4),
    }

    # 3. TTFT error vs server ground truth, 50 req/s Poisson.
    srv = Server("--ttft-ms", "20", "--itl-ms", "5", cpu=cpu)
    try:
        res, recs, _ = run(_point(srv.base_url, _spec("poisson", 50.0, 2 * secs), t0))
        truth = srv.truth()
    finally:
        srv.stop()
    errs, up, down = [], [], []
    for r in recs:
        tr = truth.get(str(r.request_id))
        if r.warmup or tr is None or tr[1] is None or r.first_token_ns is None:
            continue
        assert r.sent_ns is not None and tr[0] is not None
        client = r.first_token_ns - r.sent_ns
        server = tr[1] - tr[0]
        errs.append((client - server) / 1e6)
        up.append((tr[0] - (t0 + r.sent_ns)) / 1e6)
        down.append((t0 + r.first_token_ns - tr[1]) / 1e6)
    out["ttft_error_poisson_50"] = {
        "n": len(errs), "p50_ms": round(_pct(errs, 50), 4), "p99_ms": round(_pct(errs, 99), 4),
        "max_ms": round(max(errs), 4) if errs else None,
        "send_to_server_arrival_p99_ms": round(_pct(up, 99), 4),
        "server_write_to_client_stamp_p99_ms": round(_pct(down, 99), 4),
    }

    # 4. schedule lag at half the sustained rate.
    half = max(1.0, round(max_rate / 2))
    srv = Server("--no-truth", cpu=cpu)
    try:
        res, recs, cpu_s = run(_point(srv.base_url, _spec("poisson", half, secs), t0))
    finally:
        srv.stop()
    lags = [(r.sent_ns - r.scheduled_ns) / 1e6 for r in recs if not r.warmup]  # type: ignore[operator]
    out["lag_poisson_half_max"] = {
        "rate_rps": half, "achieved_rps": round(_rate(res, recs), 1), "errors": res.errors,
        "lag_p50_ms": round(_pct(lags, 50), 4), "lag_p99_ms": round(_pct(lags, 99), 4),
        "dispatch_lag_p99_ms": res.lag_p99_ms, "cpu_ms_per_request": round(cpu_s / res.sent
                                                                            * 1e3, 4),
    }
    out["load_avg_after"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
