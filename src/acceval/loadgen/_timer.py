"""Waiting until an absolute ``perf_counter_ns`` time with sub-millisecond precision, and
measuring how late the event loop runs a timer (:class:`LoopMonitor`, the runner's
event-loop self-check).

Event-loop timers (asyncio's and uvloop's) have millisecond granularity: a send scheduled
for t can leave anywhere in [t - 1 ms, t + 1 ms]. Two ways to do better:

- :class:`TimerFdWaker` (Linux): a ``timerfd`` armed at an absolute CLOCK_MONOTONIC time
  (the clock ``perf_counter_ns`` reads) and watched by the loop like a socket, armed a short
  adaptive window early (10-20 us); the loop is yielded to for the rest. A timerfd is not
  subject to the thread's timer slack (unlike ``nanosleep`` or an epoll timeout): measured
  with ``prctl(PR_SET_TIMERSLACK)`` at 1 ns and at the default 50 us, its wake-up delay was
  the same (median 63-70 us on the loaded 2-core VM), while ``time.sleep``'s fell from 97 to
  48 us. So the waker leaves the slack alone.
- :class:`SpinWaker` (anywhere): the loop's timer until 1 ms before, then one loop pass at a
  time (so I/O keeps flowing) until due. The spin costs up to a core
  at high rates (~35 % CPU at 1000 arrivals/s).

A busy loop wakes late for a timerfd too: its expiry is handled after the reads its loop
pass already holds. The native transport therefore looks at :class:`Dues` once a read and
runs a call already inside its window there (``Dues.run``). The aiohttp transport does not:
its send is a task of its own through aiohttp's request machinery, and a send dispatched
from a read's task step waited behind the steps that pass already held. At 4,000 req/s,
two A/B comparisons (3 + 3 and 5 + 5 runs): send-lag p99 medians 1.17 -> 1.79 and
1.31 -> 1.52 ms with the check in its reads, though the dispatch itself came earlier.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import sys
import time
import weakref
from collections.abc import Callable

_now = time.perf_counter_ns
_CLOCK_MONOTONIC = 1
_TFD_TIMER_ABSTIME = 1
_NS = 1_000_000_000

# The event-loop monitor's period: 100 callbacks a second cost nothing next to the requests
# (a few microseconds each), and a stall of a few tens of ms still lands on a tick.
LOOP_TICK_MS = 10.0


_NEVER = 1 << 62


class Dues:
    """The timed calls pending on one event loop, for the code that reads sockets to run
    when they fall due while the loop is busy (:meth:`run`).

    A timerfd wake-up is handled after the callbacks its loop pass already holds: at a high
    rate, a send due while dozens of responses are being read waits for all of them. The
    native transport calls ``run(now)`` once a read, when ``now >= next_ns`` (the earliest wake-up
    armed on this loop): the send leaves between two reads instead, never before its time
    (the waker spins the rest of its window), and the loop does not wake up for it again.

    Open loop at 11,550 req/s on 2 cores (fast mock on its own core, 6-s points, 8 + 8
    alternated, ``benchmarks/loadgen.py worker``): send-lag p50 / p99 medians 0.040 / 0.77
    -> 0.024 / 0.62 ms, CPU per request the same (72.7 / 73.0 us). One comparison costs the
    read a few tens of nanoseconds."""

    __slots__ = ("_wakers", "next_ns")

    def __init__(self) -> None:
        self.next_ns = _NEVER
        self._wakers: list[TimerFdWaker] = []

    def add(self, waker: TimerFdWaker) -> None:
        self._wakers.append(waker)
        self.moved()

    def remove(self, waker: TimerFdWaker) -> None:
        if waker in self._wakers:
            self._wakers.remove(waker)
            self.moved()

    def moved(self) -> None:
        """A waker was armed, disarmed, added or removed."""
        wakers = self._wakers
        self.next_ns = (wakers[0].wake_ns if len(wakers) == 1
                        else min((w.wake_ns for w in wakers), default=_NEVER))

    def run(self, now: int) -> None:
        """Run the calls whose wake-up is at or before ``now``. What one raises goes to the
        loop's exception handler, as from the timer's own callback, not into the read."""
        for w in tuple(self._wakers):
            if now >= w.wake_ns:
                try:
                    w.run_now()
                except Exception as exc:
                    asyncio.get_running_loop().call_exception_handler(
                        {"message": "a timed call raised", "exception": exc})


_DUES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Dues] = weakref.WeakKeyDictionary()


def dues(loop: asyncio.AbstractEventLoop | None = None) -> Dues:
    """The :class:`Dues` of ``loop`` (made on first use); by default the running loop's,
    or, outside any loop, one that nothing arms."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return Dues()
    d = _DUES.get(loop)
    if d is None:
        d = _DUES[loop] = Dues()
    return d


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class Waker:
    """Base: the event loop's own timer to ``spin_ns`` before due, then loop passes until due.

    :meth:`call_at` is what the runner's open loop uses: ``fn`` runs from the loop at the due
    time, never before, with no task or future per wait. One call is pending at a time; a new
    one replaces it, :meth:`cancel` drops it."""

    spin_ns = 1_000_000

    def __init__(self) -> None:
        self._handle: asyncio.Handle | None = None

    def call_at(self, due_ns: int, fn: Callable[[], None]) -> None:
        self.cancel()
        loop = asyncio.get_running_loop()
        ahead = due_ns - _now() - self.spin_ns
        self._handle = (loop.call_later(ahead / _NS, self._spin, due_ns, fn) if ahead > 0
                        else loop.call_soon(self._spin, due_ns, fn))

    def _spin(self, due_ns: int, fn: Callable[[], None]) -> None:
        if _now() < due_ns:   # one loop pass at a time, so that I/O keeps flowing
            self._handle = asyncio.get_running_loop().call_soon(self._spin, due_ns, fn)
            return
        self._handle = None
        fn()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def close(self) -> None:
        self.cancel()


class SpinWaker(Waker):
    pass


class TimerFdWaker(Waker):
    """A timerfd wake-up a short window before due, then a spin to the due time.

    The window follows a running mean of how late the kernel and the loop wake us (1/8
    weight per wake-up), twice that plus 10 us, within [``spin_min_ns``, ``spin_max_ns``]; a
    sample counts at most ``spin_max_ns``, so one preemption of several ms moves the window
    for a few wake-ups, not for the rest of the point. The window is all the spin costs per
    request. The old rule (twice the recent *worst* delay, capped at 500 us) sat near its cap
    on the busy 2-core VM: 100-190 us of CPU per request at 1000 arrivals/s, for a median lag
    of ~5 us instead of ~80 us without any spin, when the target is 1 ms. Measured on that VM
    (load average 4.8, 1,500 waits of 0.3-1.5 ms): window 0 -> 79 us CPU per wait, median lag
    75 us; 10 us -> 75 us, 60 us; 100 us -> 107 us, 3 us; 500 us -> 450 us, 3 us. A spin
    cannot beat a preemption: the p99 lag was the same with or without it there. On a host
    whose wake-ups come within ~45 us the window settles below the cap.

    The cap is 20 us since issue 31: on a loaded host the window sat at its 100 us cap, and
    the spin (ten loop passes a wait) was most of what the open loop paid over the closed
    loop. Waits alone, 1,500/s (``/tmp`` script as ``benchmarks/timer_floor.py``, load
    8.8-9.5, alternated): 68-70 us of CPU per wait with the 100 us cap, 34-40 us with 20 us,
    32-46 us with none; the median lag 0.001, 0.02 and 0.04 ms; the p99 set by preemption
    either way. The goal is a p99, which the spin never moved, so the median's last 20 us
    are not worth 30 us of CPU per request.
    """

    spin_min_ns = 10_000
    spin_max_ns = 20_000

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, libc: ctypes.CDLL) -> None:
        super().__init__()
        self._loop = loop
        self._fd = fd
        self._settime = libc.timerfd_settime
        self._spec = _Itimerspec()
        self._spec_ref = ctypes.byref(self._spec)
        self._due = 0
        self._armed_ns = 0
        self.wake_ns = _NEVER
        self._fn: Callable[[], None] | None = None
        self._dues = dues(loop)
        self._dues.add(self)
        self.spin_ns = self.spin_max_ns   # start wide: nothing is known of this host yet
        self._late_ns = self.spin_max_ns // 2
        loop.add_reader(fd, self._fired)

    def adapt(self, late_ns: int) -> None:
        """Update the spin window from one wake-up that came ``late_ns`` after it was armed
        for."""
        self._late_ns += (min(late_ns, self.spin_max_ns) - self._late_ns) // 8
        self.spin_ns = min(self.spin_max_ns, max(self.spin_min_ns, 2 * self._late_ns + 10_000))

    def call_at(self, due_ns: int, fn: Callable[[], None]) -> None:
        self.cancel()
        wake = due_ns - self.spin_ns
        if wake <= _now():    # inside the window already: a loop pass, then the spin
            super().call_at(due_ns, fn)
            return
        value = self._spec.it_value
        value.tv_sec, value.tv_nsec = divmod(wake, _NS)
        if self._settime(self._fd, _TFD_TIMER_ABSTIME, self._spec_ref, None) != 0:
            super().call_at(due_ns, fn)   # cannot arm: the loop's timer for this wait
            return
        self._due, self._armed_ns, self._fn = due_ns, wake, fn
        self.wake_ns = wake
        self._dues.moved()

    def _fired(self) -> None:
        try:
            os.read(self._fd, 8)
        except BlockingIOError:
            return
        fn = self._take()
        if fn is None:        # cancelled after the timer expired, or run from a read
            return
        now = _now()
        self.adapt(now - self._armed_ns)
        due = self._due
        while now < due:      # the window's few microseconds, here rather than in loop passes
            now = _now()
        fn()

    def run_now(self) -> None:
        """Run the pending call now (spinning to its due time), from inside a loop pass:
        what :meth:`_fired` does, without the wake-up. The timer is left armed: the call
        arms it again for its next wait (arming replaces the time and clears an expiry),
        and a timer that fires with nothing pending is read and ignored."""
        fn = self._take()
        if fn is None:
            return
        due = self._due
        while _now() < due:
            pass
        fn()

    def _take(self) -> Callable[[], None] | None:
        """The pending call, no longer pending (None when there is none)."""
        fn = self._fn
        if fn is not None:
            self._fn = None
            self.wake_ns = _NEVER
            self._dues.moved()
        return fn

    def cancel(self) -> None:
        super().cancel()
        if self._take() is not None:
            value = self._spec.it_value
            value.tv_sec = value.tv_nsec = 0   # a zero it_value disarms the timer
            self._settime(self._fd, _TFD_TIMER_ABSTIME, self._spec_ref, None)

    def close(self) -> None:
        self.cancel()
        self._dues.remove(self)
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._fd)
        with contextlib.suppress(OSError):
            os.close(self._fd)


def make_waker(loop: asyncio.AbstractEventLoop) -> Waker:
    """A timerfd waker where the platform has one and perf_counter is CLOCK_MONOTONIC."""
    if sys.platform != "linux":
        return SpinWaker()
    if time.get_clock_info("perf_counter").implementation != "clock_gettime(CLOCK_MONOTONIC)":
        return SpinWaker()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.timerfd_create(_CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return SpinWaker()
    if fd < 0:
        return SpinWaker()
    try:
        return TimerFdWaker(loop, fd, libc)
    except (OSError, NotImplementedError, ValueError):  # a loop that cannot watch fds
        os.close(fd)
        return SpinWaker()


class LoopMonitor:
    """How late the event loop runs a callback that is due every ``tick_ms``.

    Each tick re-arms itself from the moment it ran, so one long stall is one late tick, not
    a burst of catch-up ticks. Lateness is clipped at 0 (the loop's millisecond timers may run
    a callback a little early). It only stamps; judging the lags is the metrics' job."""

    __slots__ = ("_due", "_handle", "_loop", "_tick_ns", "_tick_s", "lags_ns")

    def __init__(self, loop: asyncio.AbstractEventLoop, tick_ms: float = LOOP_TICK_MS) -> None:
        self._loop = loop
        self._tick_s = tick_ms / 1e3
        self._tick_ns = int(tick_ms * 1e6)
        self._due = 0
        self._handle: asyncio.TimerHandle | None = None
        self.lags_ns: list[int] = []

    def start(self) -> None:
        self._due = _now() + self._tick_ns
        self._handle = self._loop.call_later(self._tick_s, self._tick)

    def _tick(self) -> None:
        now = _now()
        late = now - self._due
        self.lags_ns.append(late if late > 0 else 0)
        self._due = now + self._tick_ns
        self._handle = self._loop.call_later(self._tick_s, self._tick)

    def stop(self) -> list[int]:
        """Stop ticking; every tick's lateness in ns (a stall still going on counts as a late
        tick)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
            late = _now() - self._due
            if late > 0:
                self.lags_ns.append(late)
        return self.lags_ns
