"""Wakers never return before the due time, on both loops, and clean up their fd."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest

from acceval.loadgen._timer import LoopMonitor, SpinWaker, TimerFdWaker, Waker, make_waker
from acceval.loadgen.runner import new_event_loop

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase


async def _until(waker: Waker, due_ns: int) -> None:
    """Wait for ``waker`` to call back at ``due_ns``, as the open loop's dispatcher is."""
    woken = asyncio.get_running_loop().create_future()
    waker.call_at(due_ns, lambda: woken.set_result(None))
    await woken


async def _never_early(waker: Waker) -> list[int]:
    early = []
    for delay_us in (0, 30, 200, 1500, 3000):
        due = time.perf_counter_ns() + delay_us * 1000
        await _until(waker, due)
        early.append(min(0, time.perf_counter_ns() - due))
    # A due time in the past comes on the next loop pass.
    await _until(waker, time.perf_counter_ns() - 10**9)
    return early


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, new_event_loop])
def test_wakers_never_wake_early(loop_factory: object) -> None:
    async def go() -> tuple[list[int], list[int], type]:
        loop = asyncio.get_running_loop()
        w = make_waker(loop)
        try:
            a = await _never_early(w)
        finally:
            w.close()
        b = await _never_early(SpinWaker())
        return a, b, type(w)

    with asyncio.Runner(loop_factory=loop_factory) as r:  # type: ignore[arg-type]
        a, b, kind = r.run(go())
    assert a == [0] * 5 and b == [0] * 5
    assert kind is (TimerFdWaker if sys.platform == "linux" else SpinWaker)


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, new_event_loop])
@pytest.mark.parametrize("kind", ["made", "spin"])
def test_call_at_runs_once_never_early_and_not_when_replaced_or_cancelled(
        loop_factory: object, kind: str) -> None:
    async def go() -> list[tuple[str, int]]:
        w = make_waker(asyncio.get_running_loop()) if kind == "made" else SpinWaker()
        calls: list[tuple[str, int]] = []
        now = time.perf_counter_ns

        def at(name: str, due: int) -> None:
            w.call_at(due, lambda: calls.append((name, now() - due)))

        try:
            t = now()
            at("replaced", t + 300_000)
            at("replaced too", t + 2_000_000)  # each call replaces the pending one
            at("cancelled", t + 1_000_000)
            w.cancel()
            await asyncio.sleep(0.005)
            t = now()
            at("short", t + 5_000)             # inside the spin window from the start
            await asyncio.sleep(0.003)
            at("past", now() - 10**9)          # already due: the next loop pass
            await asyncio.sleep(0.002)
            at("dropped", now() + 3_000_000)
        finally:
            w.close()                          # a pending call dies with the waker
        await asyncio.sleep(0.006)
        return calls

    with asyncio.Runner(loop_factory=loop_factory) as r:  # type: ignore[arg-type]
        calls = r.run(go())
    assert [name for name, _ in calls] == ["short", "past"]
    assert min(late for _, late in calls) >= 0


@pytest.mark.skipif(sys.platform != "linux", reason="timerfd is Linux-only; SpinWaker elsewhere")
def test_timerfd_waker_closes_its_fd() -> None:
    async def go() -> int:
        w = make_waker(asyncio.get_running_loop())
        assert isinstance(w, TimerFdWaker)
        fd = w._fd
        await _until(w, time.perf_counter_ns() + 500_000)
        w.close()
        return fd

    fd = asyncio.run(go())
    with pytest.raises(OSError):
        os.fstat(fd)


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, new_event_loop])
def test_loop_monitor_sees_one_stall_as_one_late_tick(loop_factory: object) -> None:
    async def go() -> list[int]:
        mon = LoopMonitor(asyncio.get_running_loop(), tick_ms=5.0)
        mon.start()
        await asyncio.sleep(0.05)
        time.sleep(0.08)               # the loop is blocked for 80 ms
        await asyncio.sleep(0.05)
        lags = mon.stop()
        assert mon.stop() is lags      # stopping twice changes nothing
        return lags

    with asyncio.Runner(loop_factory=loop_factory) as r:  # type: ignore[arg-type]
        lags = r.run(go())
    assert len(lags) >= 8 and min(lags) >= 0
    late = [x for x in lags if x > 20_000_000]
    assert len(late) == 1 and late[0] >= 70_000_000   # re-armed from when it ran: no burst


def test_loop_monitor_counts_a_stall_still_going_on_at_stop() -> None:
    async def go() -> list[int]:
        mon = LoopMonitor(asyncio.get_running_loop(), tick_ms=5.0)
        mon.start()
        time.sleep(0.03)
        return mon.stop()

    lags = asyncio.run(go())
    assert len(lags) == 1 and lags[0] >= 20_000_000


def _feed(w: TimerFdWaker, late_ns: int, times: int) -> list[int]:
    windows = []
    for _ in range(times):
        w.adapt(late_ns)
        windows.append(w.spin_ns)
    return windows


@pytest.mark.skipif(sys.platform != "linux", reason="timerfd is Linux-only; SpinWaker elsewhere")
def test_spin_window_follows_the_wake_up_delay_within_its_bounds() -> None:
    async def go() -> None:
        w = make_waker(asyncio.get_running_loop())
        assert isinstance(w, TimerFdWaker)
        try:
            lo, hi = w.spin_min_ns, w.spin_max_ns
            assert w.spin_ns == hi                   # nothing known yet: the widest window
            _feed(w, 0, 200)
            assert w.spin_ns == lo                   # punctual wake-ups: the floor
            _feed(w, 3_000, 200)                     # 3 us late: twice that plus 10 us
            assert abs(w.spin_ns - 16_000) <= 1_000
            assert max(_feed(w, 10**9, 200)) == hi   # very late: capped, never above
        finally:
            w.close()

    asyncio.run(go())


@pytest.mark.skipif(sys.platform != "linux", reason="timerfd is Linux-only; SpinWaker elsewhere")
def test_one_preemption_widens_the_window_only_for_a_few_wake_ups() -> None:
    async def go() -> None:
        w = make_waker(asyncio.get_running_loop())
        assert isinstance(w, TimerFdWaker)
        try:
            _feed(w, 2_000, 200)
            settled = w.spin_ns
            w.adapt(20_000_000)                      # one 20 ms stall
            assert settled < w.spin_ns <= w.spin_max_ns
            after = _feed(w, 2_000, 30)
            assert after[-1] <= settled + 1_000      # back to where it was
            assert after == sorted(after, reverse=True)
        finally:
            w.close()

    asyncio.run(go())
