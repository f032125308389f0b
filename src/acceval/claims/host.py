"""This host's peak FLOPS and memory bandwidth, measured in well under two seconds.

A float32 matrix product (numpy's BLAS, all its threads) gives the compute peak and a copy
between two arrays much larger than any cache gives the memory bandwidth (bytes read plus
bytes written). The best of a few repeats is kept: a bound wants the host's best, not its
average. The planner labels these figures measured.
"""

from __future__ import annotations

import os
import time

import numpy as np

from acceval.results.runlog import HostBenchLog

MATMUL_N = 512
COPY_BYTES = 64 * 2**20
BUDGET_S = 1.0


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _best_rate(work: float, run: object, seconds: float, least: int = 3) -> float:
    """The best of repeated timings of ``run`` (work units per second) within ``seconds``."""
    assert callable(run)
    best = 0.0
    end = time.perf_counter() + seconds
    done = 0
    while done < least or time.perf_counter() < end:
        t0 = time.perf_counter_ns()
        run()
        dt = (time.perf_counter_ns() - t0) / 1e9
        best = max(best, work / dt if dt > 0 else 0.0)
        done += 1
        if done >= 50:
            break
    return best


def measure_host(budget_s: float = BUDGET_S) -> HostBenchLog:
    """Peak FP32 FLOP/s and memory bytes/s of this host, within about ``budget_s``."""
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    a = rng.random((MATMUL_N, MATMUL_N), dtype=np.float32)
    b = rng.random((MATMUL_N, MATMUL_N), dtype=np.float32)
    out = np.empty_like(a)
    flops = _best_rate(2.0 * MATMUL_N**3, lambda: np.matmul(a, b, out=out), budget_s * 0.4)
    src = np.ones(COPY_BYTES // 4, dtype=np.float32)
    dst = np.empty_like(src)
    bw = _best_rate(2.0 * COPY_BYTES, lambda: np.copyto(dst, src), budget_s * 0.4)
    return HostBenchLog(peak_fp32_tflops=flops / 1e12, memory_bandwidth_tbs=bw / 1e12,
                        matmul_n=MATMUL_N, copy_bytes=COPY_BYTES,
                        seconds=time.perf_counter() - t0,
                        method=f"numpy float32 matmul {MATMUL_N}x{MATMUL_N}, copy of "
                               f"{COPY_BYTES // 2**20} MiB; best of repeats",
                        memory_bytes=_physical_memory())


__all__ = ["measure_host"]
