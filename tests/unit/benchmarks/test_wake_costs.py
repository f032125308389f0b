"""The benchmarks' account of wake-ups: what one costs by its cause (``timer_floor.wakes``)
and how many interrupts a load window took (``openloop._interrupts``)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import openloop
import timer_floor

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="/proc/interrupts is Linux's")


@linux_only
def test_interrupt_counts_grow_with_timer_wake_ups() -> None:
    before = openloop._interrupts()
    assert before is not None and before["timer"] > 0
    for _ in range(200):          # 200 timer wake-ups of this process alone
        time.sleep(0.0005)
    after = openloop._interrupts()
    assert after is not None
    assert after["timer"] - before["timer"] >= 100
    assert after["ipi"] >= before["ipi"]


def test_interrupts_read_as_none_without_a_linux_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(self: Path) -> str:
        raise FileNotFoundError(self)

    monkeypatch.setattr(Path, "read_text", missing)
    assert openloop._interrupts() is None


@linux_only
def test_wake_costs_are_measured_for_every_cause_and_the_affinity_is_given_back() -> None:
    cpus = os.sched_getaffinity(0)
    costs = timer_floor.wakes(50)
    assert os.sched_getaffinity(0) == cpus
    assert costs["same_cpu_us"] is not None and costs["same_cpu_us"] > 0
    assert costs["timer_idle_us"] is not None and costs["timer_idle_us"] > 0
    assert costs["timer_busy_us"] is not None and costs["timer_busy_us"] > 0
    if len(cpus) > 1:
        assert costs["other_cpu_us"] is not None and costs["other_cpu_us"] > 0
    else:
        assert costs["other_cpu_us"] is None


@linux_only
def test_one_allowed_cpu_measures_no_wake_from_another() -> None:
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    try:
        costs = timer_floor.wakes(20)
        assert costs["other_cpu_us"] is None
        assert os.sched_getaffinity(0) == {min(cpus)}
    finally:
        os.sched_setaffinity(0, cpus)


def test_a_benchmark_points_record_folder_is_removed_when_its_process_exits(
        tmp_path: Path) -> None:
    import subprocess

    code = ("import sys; sys.path.insert(0, sys.argv[1]); import scaleout; "
            "import os; w = scaleout._writer(); print(w.run_dir, os.path.isdir(w.run_dir))")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code, str(Path(openloop.__file__).parent)],
                         capture_output=True, text=True, env=env, check=True, timeout=60)
    folder, existed = out.stdout.split()
    assert folder.startswith(str(tmp_path)) and existed == "True"
    assert list(tmp_path.iterdir()) == []


def test_no_op_wake_ups_fire_their_drawn_schedule_and_then_stop() -> None:
    import asyncio

    from acceval.loadgen.runner import run

    ticks = openloop._Ticks(rate=100_000.0, seconds=0.001)   # 1,150 gaps, ~12 ms of them

    async def go() -> tuple[int, int]:
        ticks.start()
        for _ in range(1000):            # until the schedule runs out (or 10 s)
            await asyncio.sleep(0.01)
            if ticks.fired >= 1150:
                break
        await asyncio.sleep(0.02)        # nothing more fires past the schedule
        return ticks.fired, ticks.stop()

    fired, stopped = run(go())
    assert fired == stopped == 1150
