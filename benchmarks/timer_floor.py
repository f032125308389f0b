"""This host's floor for schedule lag: how late an idle process wakes for Poisson arrivals.

No server, no requests: a process that only waits for each arrival time, so whatever lag it
sees, a load generator on this host sees too, before it does any work. Three ways:

1. the runner's own waker (``make_waker``: a timerfd plus its short spin), calling back at
   each due time as the runner's open loop does, on the runner's
   event loop;
2. plain ``time.sleep`` to each arrival;
3. a busy spin for ``--seconds``, counting the gaps between two clock reads: each gap over
   0.2 ms is a time the process was not running (another process, the hypervisor);
4. what one block costs with nothing to wait for: ``time.sleep(0)`` (the thread gives up its
   core and is woken at once, one voluntary context switch) against a system call that does
   not block (``getppid``), in CPU per call. An open loop sleeps between arrivals where a
   closed loop sends from the wake-up that read an answer; this is the price of each extra
   sleep on this host (``openloop.py``'s equal-load ratio);
5. what one wake-up costs by what wakes the process, in its CPU per wake-up: another process
   on the same CPU (a pipe ping-pong: a plain context switch), a process on another CPU (the
   same ping-pong across CPUs: the wake-up comes as an interrupt from the other CPU), and a
   timer (0.5 ms waits), the latter with the CPU otherwise idle and with it kept busy by a
   ``SCHED_IDLE`` spinner (which runs only when nothing else wants the CPU, so the CPU never
   halts). An open loop's extra wake-ups are timer wake-ups; a closed loop's are answers
   from the server's CPU.

If (1) already has a p99 over 1 ms, no client on this host can hold a 1 ms schedule-lag
p99, and the figure to compare against is this one. Each way runs once per round, A B C A B C.

    python benchmarks/timer_floor.py [--rate 1500] [--arrivals 6000] [--rounds 2]
                                     [--seconds 3] [--cpu N]

``--cpu N`` pins the process to one CPU first (as ``taskset -c N``). Prints a Markdown table
and writes ``benchmarks/out/timer-floor-<UTC>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


def _stats(lags_ns: list[int]) -> dict[str, float]:
    a = np.asarray(lags_ns, dtype=np.float64) / 1e6
    return {"p50_ms": float(np.percentile(a, 50)), "p99_ms": float(np.percentile(a, 99)),
            "p999_ms": float(np.percentile(a, 99.9)), "max_ms": float(a.max()),
            "over_1ms": float((a > 1.0).mean())}


def _gaps(rate: float, n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(g) for g in rng.exponential(1e9 / rate, n)]


def waker(rate: float, n: int, seed: int) -> dict[str, float]:
    from acceval.loadgen._timer import make_waker
    from acceval.loadgen.runner import new_event_loop

    async def go() -> list[int]:
        # As the runner's open loop waits: the waker calls back at each due time.
        w = make_waker(asyncio.get_running_loop())
        lags: list[int] = []
        gaps = iter(_gaps(rate, n, seed))
        done = asyncio.get_running_loop().create_future()
        due = time.perf_counter_ns() + 1_000_000

        def arm() -> None:
            nonlocal due
            g = next(gaps, None)
            if g is None:
                done.set_result(None)
                return
            due += g
            w.call_at(due, arrive)

        def arrive() -> None:
            lags.append(time.perf_counter_ns() - due)
            arm()

        try:
            arm()
            await done
        finally:
            w.close()
        return lags

    loop = new_event_loop()
    try:
        cpu0 = time.process_time()
        lags = loop.run_until_complete(go())
        cpu = time.process_time() - cpu0
    finally:
        loop.close()
    return {**_stats(lags), "cpu_us_per_wait": cpu / n * 1e6}


def sleeper(rate: float, n: int, seed: int) -> dict[str, float]:
    lags = []
    cpu0 = time.process_time()
    due = time.perf_counter_ns() + 1_000_000
    for g in _gaps(rate, n, seed):
        due += g
        ahead = due - time.perf_counter_ns()
        if ahead > 0:
            time.sleep(ahead / 1e9)
        lags.append(time.perf_counter_ns() - due)
    cpu = time.process_time() - cpu0
    return {**_stats(lags), "cpu_us_per_wait": cpu / n * 1e6}


def spin(seconds: float) -> dict[str, float]:
    now = prev = time.perf_counter_ns()
    end = now + int(seconds * 1e9)
    gaps = []
    while prev < end:
        now = time.perf_counter_ns()
        if now - prev > 200_000:
            gaps.append(now - prev)
        prev = now
    g = np.asarray(gaps, dtype=np.float64) / 1e6
    return {"gaps_over_0_2ms": int(g.size), "gaps_over_1ms": int((g > 1).sum()),
            "max_gap_ms": float(g.max()) if g.size else 0.0,
            "time_away_fraction": float(g.sum() / 1e3 / seconds)}


def _per_call(fn: Any, n: int) -> tuple[float, float]:
    """This process's CPU (us) and voluntary context switches per call of ``fn``, n calls."""
    import resource

    v0 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    c0 = time.process_time()
    for _ in range(n):
        fn()
    cpu = time.process_time() - c0
    return cpu / n * 1e6, (resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - v0) / n


def block(n: int) -> dict[str, float]:
    """CPU per zero-length sleep and per non-blocking system call, and the sleep's context
    switches per call."""
    block_us, switches = _per_call(lambda: time.sleep(0), n)
    syscall_us, _ = _per_call(os.getppid, n)
    return {"block_cpu_us": block_us, "switches_per_block": switches,
            "syscall_cpu_us": syscall_us}


def _ping_pong(here: int, there: int, n: int) -> float:
    """This process's CPU per round trip with a child pinned to ``there``: it writes one
    byte, blocks reading the child's answer, and is woken by it."""
    to_child, from_child = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:  # the child answers each byte
        try:
            os.close(to_child[1])
            os.close(from_child[0])
            os.sched_setaffinity(0, {there})
            for _ in range(n):
                os.read(to_child[0], 1)
                os.write(from_child[1], b"x")
        finally:
            os._exit(0)
    os.close(to_child[0])
    os.close(from_child[1])
    try:
        os.write(to_child[1], b"x")   # one untimed round trip: both sides are running
        if os.read(from_child[0], 1) != b"x":   # the child is gone (could not be pinned)
            raise RuntimeError(f"the ping-pong child on CPU {there} did not answer")
        c0 = time.process_time()
        for _ in range(n - 1):
            os.write(to_child[1], b"x")
            os.read(from_child[0], 1)
        return (time.process_time() - c0) / (n - 1) * 1e6
    finally:
        os.close(to_child[1])
        os.close(from_child[0])
        os.waitpid(pid, 0)


def _timer_waits(n: int, wait_s: float = 0.0005) -> float:
    """CPU per timer wait of ``wait_s`` with nothing else to wake the process."""
    import select

    return _per_call(lambda: select.select([], [], [], wait_s), n)[0]


def _idle_spinner(cpu: int) -> int:
    """A child spinning at ``SCHED_IDLE`` on ``cpu``: the CPU stays busy but gives way at once."""
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setaffinity(0, {cpu})
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            while True:
                pass
        finally:
            os._exit(0)
    return pid


def wakes(n: int) -> dict[str, float | None]:
    """CPU per wake-up by its cause (see the module's docstring, 5.), on the CPUs this
    process may use; ``None`` where it may use one CPU only."""
    import signal

    cpus = sorted(os.sched_getaffinity(0))
    here = cpus[0]
    other = cpus[1] if len(cpus) > 1 else None
    os.sched_setaffinity(0, {here})
    try:
        out: dict[str, float | None] = {
            "same_cpu_us": _ping_pong(here, here, n),
            "other_cpu_us": _ping_pong(here, other, n) if other is not None else None,
            "timer_idle_us": _timer_waits(n)}
        spinner = _idle_spinner(here)
        try:
            time.sleep(0.05)
            out["timer_busy_us"] = _timer_waits(n)
        finally:
            os.kill(spinner, signal.SIGKILL)
            os.waitpid(spinner, 0)
    finally:
        os.sched_setaffinity(0, set(cpus))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=1500.0, help="Poisson arrivals per second")
    ap.add_argument("--arrivals", type=int, default=6000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of the busy spin")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this CPU first")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    out: dict[str, Any] = {"host": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                    "load_avg_start": os.getloadavg()},
                           "rate": args.rate, "arrivals": args.arrivals, "cpu": args.cpu,
                           "rounds": []}
    for rnd in range(args.rounds):
        out["rounds"].append({"waker": waker(args.rate, args.arrivals, rnd),
                              "sleep": sleeper(args.rate, args.arrivals, rnd),
                              "spin": spin(args.seconds),
                              "block": block(3000),
                              "wakes": wakes(3000)})
    out["host"]["load_avg_end"] = os.getloadavg()
    print("| round | way | lag p50 / p99 / p99.9 / max ms | share over 1 ms | CPU µs per wait |"
          "\n|---|---|---|---:|---:|")
    for k, r in enumerate(out["rounds"]):
        for way in ("waker", "sleep"):
            f = r[way]
            print(f"| {k} | {way} | {f['p50_ms']:.3f} / {f['p99_ms']:.2f} / {f['p999_ms']:.2f} "
                  f"/ {f['max_ms']:.2f} | {f['over_1ms']:.2%} | {f['cpu_us_per_wait']:.0f} |")
    print()
    for k, r in enumerate(out["rounds"]):
        s = r["spin"]
        print(f"round {k}, busy spin {args.seconds:g} s: {s['gaps_over_0_2ms']} times away "
              f"> 0.2 ms, {s['gaps_over_1ms']} > 1 ms, longest {s['max_gap_ms']:.2f} ms, "
              f"{s['time_away_fraction']:.2%} of the time away")
    for k, r in enumerate(out["rounds"]):
        b = r["block"]
        print(f"round {k}: one block with nothing to wait for (time.sleep(0), "
              f"{b['switches_per_block']:.2f} context switches a call) costs "
              f"{b['block_cpu_us']:.1f} us of CPU; a system call that does not block "
              f"{b['syscall_cpu_us']:.2f} us")
    for k, r in enumerate(out["rounds"]):
        w = r["wakes"]
        other = (f"{w['other_cpu_us']:.1f}" if w["other_cpu_us"] is not None
                 else "(one CPU allowed: not measured)")
        print(f"round {k}: CPU per wake-up, woken by a process on the same CPU "
              f"{w['same_cpu_us']:.1f} us, on another CPU {other} us, by a timer "
              f"{w['timer_idle_us']:.1f} us (the CPU kept busy by an idle-priority spinner: "
              f"{w['timer_busy_us']:.1f} us)")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    (HERE / "out").mkdir(exist_ok=True)
    path = HERE / "out" / f"timer-floor-{stamp}.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"\nload average {out['host']['load_avg_start'][0]:.2f} -> "
          f"{out['host']['load_avg_end'][0]:.2f}\n{path}")


if __name__ == "__main__":
    main()
