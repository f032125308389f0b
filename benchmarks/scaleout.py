"""Scale-out benchmark: the local runner against load generators on Ray, in one sitting.

Against one ``acceval serve --engine mock --workers W`` process group on this host:

1. ``fast`` (no delays, 16 tokens), closed loop: the highest rate and the client's CPU per
   request, locally (``run_point`` in this process) and through Ray with one load generator
   (the same ``run_point`` in an actor; CPU read by the actor itself).
2. Open loop (Poisson) at half of the local closed-loop maximum: schedule-lag p99 with one
   client process (local) and with two load generators on Ray.
3. ``paced`` (50 ms TTFT, 5 ms per token, 64 tokens), closed loop at high concurrency: the rate
   one local process reaches and the rate two load generators on Ray reach.

    python benchmarks/scaleout.py [--seconds 4] [--workers 2] [--pairs 6] [--only-same]

The same-rate comparison runs ``--pairs`` local-then-Ray pairs at ``--same-rate``; their
ratios' median is the figure, since one pair on a shared host moves by tens of per cent.

Writes ``benchmarks/out/scaleout-<UTC>.json`` and prints a Markdown table (docs/benchmarks.md).
CPU per request is the client's user+sys time over completed requests; on this 2-core host the
mock's workers share the cores with the clients, which caps every rate here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {"ttft_ms": 0, "itl_ms": 0, "output_tokens": 16},
    "paced": {"ttft_ms": 50, "itl_ms": 5, "output_tokens": 64},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mock:
    def __init__(self, options: dict[str, Any], workers: int) -> None:
        cmd = [sys.executable, "-m", "acceval.serve", "mock", "--port", "0",
               "--workers", str(workers), "--idle-timeout", "600"]
        for k, v in options.items():
            cmd += ["--option", f"{k}={v}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        match = re.search(r"(http://[^ ]+/v1)", line)
        if match is None:
            raise RuntimeError(f"mock did not start: {line!r}")
        self.base_url = match.group(1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _prompts(n_out: int) -> list[Any]:
    from acceval.loadgen.protocol import Prompt

    return [Prompt(task_id=str(i), prompt=f"r{i:05d} the quick brown fox jumps over",
                   max_tokens=n_out) for i in range(1024)]


def _spec(kind: str, level: float, seconds: float) -> Any:
    from acceval.loadgen.runner import PointSpec

    return PointSpec(index=0, label=f"{kind} {level:g}", kind=kind, level=float(level),
                     seed=3, warmup_s=0.5, min_duration_s=seconds, min_requests=1,
                     max_duration_s=seconds + 0.5, max_in_flight=4096)


def _figures(run: Any, cpu_s: float, wall_s: float) -> dict[str, Any]:
    done = run.completed
    return {"completed": done, "errors": run.errors, "rate_rps": done / wall_s,
            "cpu_us_per_req": cpu_s / max(done, 1) * 1e6, "lag_p99_ms": run.lag_p99_ms,
            "loop_p99_ms": run.loop_lag_ms.p99 if run.loop_lag_ms is not None else None}


def _writer() -> Any:
    """What a run does with each record: the run's single writer (Parquet parts), into a
    scratch folder removed when the process exits (the points run in processes of their own;
    left behind, a sitting's parts came to gigabytes)."""
    import atexit
    import shutil
    import tempfile

    from acceval.results.store import RecordWriter

    folder = Path(tempfile.mkdtemp(prefix="acceval-bench-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return RecordWriter(folder)


def local_point(base_url: str, kind: str, level: float, n_out: int,
                seconds: float) -> dict[str, Any]:
    from acceval.loadgen.runner import run, run_point
    from acceval.targets import make_target
    from acceval.targets.spec import Endpoint

    async def go() -> dict[str, Any]:
        target = make_target("mock", Endpoint(base_url=base_url, model="mock"))
        await target.start()
        writer = _writer()
        try:
            t0 = time.perf_counter_ns()
            cpu0, w0 = time.process_time(), time.perf_counter()
            r = await run_point(target, _prompts(n_out), _spec(kind, level, seconds),
                                writer.add, t0_ns=t0)
            wall = time.perf_counter() - w0
            writer.flush()
            writer.wait()
            return _figures(r, time.process_time() - cpu0, wall)
        finally:
            await target.close()

    return run(go())


def ray_point(base_url: str, kind: str, level: float, n_out: int, seconds: float,
              clients: int) -> dict[str, Any]:
    from acceval.loadgen.runner import run
    from acceval.scaleout.ray_backend import RemoteClients
    from acceval.scaleout.spec import Placement
    from acceval.targets.spec import Endpoint

    async def go() -> dict[str, Any]:
        rc = RemoteClients("mock", Endpoint(base_url=base_url, model="mock"),
                           clients=clients,
                           placement=Placement(target="mock", num_cpus=0.5),
                           t0_ns=time.perf_counter_ns())
        await rc.start()
        writer = _writer()
        try:
            w0, cpu0 = time.perf_counter(), time.process_time()
            r = await rc.run_point(_spec(kind, level, seconds), _prompts(n_out), writer.add,
                                   progress=None, first_request_id=0)
            writer.flush()
            writer.wait()
            driver = time.process_time() - cpu0
            # The generators' own CPU plus the driver's (receiving and writing); the wall
            # time without the common start's margin.
            from acceval.scaleout.ray_backend import START_MARGIN_S
            wall = time.perf_counter() - w0 - START_MARGIN_S
            gens = rc.last_cpu_s or 0.0
            return {**_figures(r, gens + driver, wall), "clients": clients,
                    "generator_cpu_us_per_req": gens / max(r.completed, 1) * 1e6,
                    "driver_cpu_us_per_req": driver / max(r.completed, 1) * 1e6}
        finally:
            rc.close()

    return run(go())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--workers", type=int, default=2, help="mock processes sharing the port")
    ap.add_argument("--same-rate", type=float, default=1000.0,
                    help="the Poisson rate at which CPU per request is compared")
    ap.add_argument("--pairs", type=int, default=2,
                    help="local-then-Ray pairs at the same rate (their ratios' median is "
                         "the comparison)")
    ap.add_argument("--only-same", action="store_true",
                    help="only the highest rates and the same-rate pairs")
    args = ap.parse_args()
    import ray

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    out: dict[str, Any] = {"host": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                    "ray": ray.__version__}, "seconds": args.seconds,
                           "mock_workers": args.workers}
    try:
        fast = Mock(SETTINGS["fast"], args.workers)
        try:
            n = SETTINGS["fast"]["output_tokens"]
            out["fast_local"] = local_point(fast.base_url, "concurrency", 64, n, args.seconds)
            out["fast_ray1"] = ray_point(fast.base_url, "concurrency", 64, n, args.seconds, 1)
            # The same rate both ways, for CPU per request at equal load (A, B, A, B, ...).
            same = args.same_rate
            out["same_rate_rps"] = same
            out["same_pairs"] = [
                {"local": local_point(fast.base_url, "poisson", same, n, args.seconds),
                 "ray1": ray_point(fast.base_url, "poisson", same, n, args.seconds, 1)}
                for _ in range(args.pairs)]
            if not args.only_same:
                half = 0.5 * out["fast_local"]["rate_rps"]
                out["half_rate_rps"] = half
                out["open_local"] = local_point(fast.base_url, "poisson", half, n,
                                                args.seconds)
                out["open_ray2"] = ray_point(fast.base_url, "poisson", half, n, args.seconds,
                                             2)
        finally:
            fast.stop()
        if not args.only_same:
            paced = Mock(SETTINGS["paced"], args.workers)
            try:
                n = SETTINGS["paced"]["output_tokens"]
                out["paced_local"] = local_point(paced.base_url, "concurrency", 1024, n,
                                                 args.seconds)
                out["paced_ray2"] = ray_point(paced.base_url, "concurrency", 1024, n,
                                              args.seconds, 2)
            finally:
                paced.stop()
    finally:
        ray.shutdown()
    _report(out)


def _report(out: dict[str, Any]) -> None:
    same = out["same_rate_rps"]
    rows = [("fast, closed loop 64, local", out["fast_local"]),
            ("fast, closed loop 64, Ray 1 generator", out["fast_ray1"])]
    for k, pair in enumerate(out["same_pairs"]):
        again = f" (pair {k + 1})" if k else ""
        rows += [(f"Poisson {same:g} req/s, local{again}", pair["local"]),
                 (f"Poisson {same:g} req/s, Ray 1 generator{again}", pair["ray1"])]
    if "open_local" in out:
        rows += [(f"Poisson {out['half_rate_rps']:.0f} req/s, local", out["open_local"]),
                 (f"Poisson {out['half_rate_rps']:.0f} req/s, Ray 2 generators",
                  out["open_ray2"]),
                 ("paced, closed loop 1024, local", out["paced_local"]),
                 ("paced, closed loop 1024, Ray 2 generators", out["paced_ray2"])]
    print("| setting | req/s | CPU µs/req | schedule lag p99 ms | loop lag p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, f in rows:
        lag = "—" if f["lag_p99_ms"] is None else f"{f['lag_p99_ms']:.2f}"
        loop = "—" if f["loop_p99_ms"] is None else f"{f['loop_p99_ms']:.2f}"
        print(f"| {name} | {f['rate_rps']:.0f} | {f['cpu_us_per_req']:.0f} | {lag} | {loop} |")
    ratios = [p["ray1"]["cpu_us_per_req"] / p["local"]["cpu_us_per_req"]
              for p in out["same_pairs"]]
    median = statistics.median(ratios)
    out["ray_over_local"] = {"ratios": ratios, "median": median}
    driver = [p["ray1"]["driver_cpu_us_per_req"] for p in out["same_pairs"]]
    print(f"\nRay over local, CPU per request at {same:g} req/s, pair by pair: "
          + ", ".join(f"{r:.2f}x" for r in ratios)
          + f"; median {median:.2f}x (the driver's share {min(driver):.0f}-{max(driver):.0f}"
          " us a request)")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    (HERE / "out").mkdir(exist_ok=True)
    path = HERE / "out" / f"scaleout-{stamp}.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"\n{path}")


if __name__ == "__main__":
    main()
