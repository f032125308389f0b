"""Transports against the small client: rate and CPU per request, A B C A B C, one sitting.

Against one ``acceval serve --engine mock --workers W`` group (the ``fast`` setting: no
delays, 16 tokens), each round runs a closed loop of ``--concurrency`` streams for
``--seconds`` in a fresh process per client:

- ``native``: acceval's runner (``run_point``, records written as a run writes them) on the
  native transport;
- ``aiohttp``: the same on the aiohttp transport;
- ``small``: ``benchmarks/small_client.py``, an aiohttp + uvloop client that keeps nothing.

CPU per request is each client process's user+sys time over its completed requests (less
sensitive to the other work on a shared host than wall time); the 1-minute load average
before each run is kept beside it, and the mock's share of the cores during the load
(``server cores``, its CPU per request times the client's rate: with 2 workers on a 2-core
host, near 1 means the server, not the client, caps the rate). The figures are the
medians over the rounds.

Goals (issue 31): the native transport's rate at least 1.5x the small client's, and the
aiohttp transport's CPU per request within 1.2x the small client's (thresholds in
``goals.py``). The script exits 3 naming each goal it missed.

    python benchmarks/transports.py [--rounds 3] [--seconds 4] [--concurrency 64]

Writes ``benchmarks/out/transports-<UTC>.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from goals import AIOHTTP_CPU_GOAL, EXIT_GOAL_MISSED, NATIVE_RATE_GOAL  # noqa: E402
from scaleout import SETTINGS, Mock, _prompts, _spec, _writer  # noqa: E402

CLIENTS = ("native", "aiohttp", "small")


def acceval_point(base_url: str, transport: str, concurrency: int,
                  seconds: float) -> dict[str, Any]:
    """One closed-loop point through acceval's runner, in this process."""
    from acceval.loadgen.runner import run, run_point
    from acceval.targets import make_target
    from acceval.targets.spec import Endpoint

    n_out = SETTINGS["fast"]["output_tokens"]

    async def go() -> dict[str, Any]:
        target = make_target("mock", Endpoint(base_url=base_url, model="mock",
                                              transport=transport))
        await target.start()
        writer = _writer()
        try:
            cpu0, w0 = time.process_time(), time.perf_counter()
            r = await run_point(target, _prompts(n_out),
                                _spec("concurrency", concurrency, seconds), writer.add,
                                t0_ns=time.perf_counter_ns())
            wall = time.perf_counter() - w0
            writer.flush()
            writer.wait()
            cpu = time.process_time() - cpu0
        finally:
            await target.close()
        return {"completed": r.completed, "errors": r.errors, "rate_rps": r.completed / wall,
                "cpu_us_per_req": cpu / max(r.completed, 1) * 1e6}

    return run(go())


def server_cpu_s(mock: Mock) -> float:
    """User+sys seconds the mock's process group has used so far (its workers included)."""
    import psutil

    root = psutil.Process(mock.proc.pid)
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def _child(client: str, base_url: str, concurrency: int, seconds: float) -> dict[str, Any]:
    if client == "small":
        cmd = [sys.executable, str(HERE / "small_client.py"), base_url,
               "--concurrency", str(concurrency), "--seconds", str(seconds),
               "--tokens", str(SETTINGS["fast"]["output_tokens"])]
    else:
        cmd = [sys.executable, __file__, "--point", base_url, client, str(concurrency),
               str(seconds)]
    load = os.getloadavg()[0]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{client} failed: {res.stderr[-2000:]}")
    fig: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return {**fig, "client": client, "load_avg_1m": load}


def medians(points: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each client's median rate and CPU per request over its rounds."""
    return {c: {k: statistics.median(p[k] for p in points if p["client"] == c)
                for k in ("rate_rps", "cpu_us_per_req")} for c in CLIENTS}


def missed_goals(med: dict[str, dict[str, float]]) -> list[str]:
    """The goals of issue 31 these medians miss, each said in words."""
    small = med["small"]
    rate = med["native"]["rate_rps"] / small["rate_rps"]
    cpu = med["aiohttp"]["cpu_us_per_req"] / small["cpu_us_per_req"]
    out = []
    if rate < NATIVE_RATE_GOAL:
        out.append(f"native rate is {rate:.2f}x the small client's (goal >= "
                   f"{NATIVE_RATE_GOAL:g}x)")
    if cpu > AIOHTTP_CPU_GOAL:
        out.append(f"aiohttp transport CPU per request is {cpu:.2f}x the small client's "
                   f"(goal <= {AIOHTTP_CPU_GOAL:g}x)")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2, help="mock processes sharing the port")
    ap.add_argument("--point", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.point:
        url, transport, conc, seconds = args.point
        print(json.dumps(acceval_point(url, transport, int(conc), float(seconds))))
        return 0
    out: dict[str, Any] = {"host": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                    "load_avg_start": os.getloadavg()},
                           "seconds": args.seconds, "concurrency": args.concurrency,
                           "mock_workers": args.workers, "points": []}
    mock = Mock(SETTINGS["fast"], args.workers)
    try:
        for rnd in range(args.rounds):
            for client in CLIENTS:
                cpu0 = server_cpu_s(mock)
                fig = _child(client, mock.base_url, args.concurrency, args.seconds)
                # The server is idle while the client starts and ends, so its CPU per request
                # times the client's rate is its share of the cores during the load: near
                # one per mock worker, the server and not the client sets the rate.
                server_us = (server_cpu_s(mock) - cpu0) / max(fig["completed"], 1) * 1e6
                fig["server_cpu_us_per_req"] = server_us
                fig["server_cores"] = server_us * fig["rate_rps"] / 1e6
                out["points"].append({**fig, "round": rnd})
                print(json.dumps(out["points"][-1]), file=sys.stderr)
    finally:
        mock.stop()
    out["host"]["load_avg_end"] = os.getloadavg()
    med = out["medians"] = medians(out["points"])
    missed = out["missed"] = missed_goals(med)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    (HERE / "out").mkdir(exist_ok=True)
    path = HERE / "out" / f"transports-{stamp}.json"
    path.write_text(json.dumps(out, indent=2))
    print("| round | client | req/s | CPU µs/req | server cores | load |\n"
          "|---|---|---:|---:|---:|---:|")
    for f in out["points"]:
        print(f"| {f['round']} | {f['client']} | {f['rate_rps']:.0f} "
              f"| {f['cpu_us_per_req']:.0f} | {f['server_cores']:.2f} "
              f"| {f['load_avg_1m']:.2f} |")
    small = med["small"]
    print(f"\nmedians: native {med['native']['rate_rps']:.0f} req/s "
          f"({med['native']['rate_rps'] / small['rate_rps']:.2f}x the small client's rate), "
          f"aiohttp {med['aiohttp']['cpu_us_per_req']:.0f} µs/req "
          f"({med['aiohttp']['cpu_us_per_req'] / small['cpu_us_per_req']:.2f}x the small "
          f"client's CPU), small {small['rate_rps']:.0f} req/s at "
          f"{small['cpu_us_per_req']:.0f} µs/req")
    # What one core of client could drive (requests per CPU-second): the rate a client reaches
    # when it, and not the server or a share of a busy host, is the limit.
    print(f"capacity per client core: native {1e6 / med['native']['cpu_us_per_req']:.0f}, "
          f"aiohttp {1e6 / med['aiohttp']['cpu_us_per_req']:.0f}, small "
          f"{1e6 / small['cpu_us_per_req']:.0f} req/s (native "
          f"{small['cpu_us_per_req'] / med['native']['cpu_us_per_req']:.2f}x the small client)")
    for line in missed:
        print(f"GOAL MISSED: {line}")
    print(f"\n{path}")
    return EXIT_GOAL_MISSED if missed else 0


if __name__ == "__main__":
    sys.exit(main())
