"""The host micro-benchmark: positive figures, within its time budget."""

from __future__ import annotations

import pytest

from acceval.claims.host import measure_host


def test_the_host_benchmark_measures_flops_and_bandwidth() -> None:
    h = measure_host(budget_s=0.2)
    assert h.peak_fp32_tflops > 0 and h.memory_bandwidth_tbs > 0
    assert h.seconds > 0
    assert h.copy_bytes >= 64 * 2**20  # larger than any cache, so it reads memory
    assert "matmul" in h.method and "copy" in h.method


@pytest.mark.timing  # a wall-clock bound: a busy host stretches it
def test_the_host_benchmark_keeps_within_its_time_budget() -> None:
    assert measure_host(budget_s=0.2).seconds < 2.0
