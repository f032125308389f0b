"""A timed call that falls due while the loop is busy reading runs at the next read
(``_timer.Dues``), never before its time, once, and only on its own loop.

Deterministic: each test busy-waits past the due time itself before it "reads", so how
loaded the machine is changes nothing."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from acceval.loadgen import _timer
from acceval.loadgen._timer import TimerFdWaker, dues, make_waker
from acceval.loadgen.runner import new_event_loop
from acceval.targets._http import Connection, Pool
from acceval.targets.transport import Consumer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the timerfd waker is Linux's")

_now = time.perf_counter_ns


def _busy_until(t_ns: int) -> int:
    while (now := _now()) < t_ns:
        pass
    return now


def _waker() -> TimerFdWaker:
    w = make_waker(asyncio.get_running_loop())
    assert isinstance(w, TimerFdWaker)
    return w


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, new_event_loop])
def test_a_read_past_due_runs_the_call_there_once_and_never_early(loop_factory: Any) -> None:
    async def go() -> tuple[list[int], list[int], int]:
        w = _waker()
        d = dues()
        calls: list[int] = []
        try:
            due = _now() + 2_000_000
            w.call_at(due, lambda: calls.append(_now() - due))
            seen = [d.next_ns - due]                # the waker's wake-up: its window before due
            d.run(_now())                           # a read well before: nothing runs
            before = len(calls)
            d.run(_busy_until(due + 500_000))       # a read after due: the call runs in it
            ran_inside = len(calls)
            seen.append(d.next_ns)
            await asyncio.sleep(0.004)              # the timer's own expiry runs nothing more
            return calls, seen, before * 10 + ran_inside
        finally:
            w.close()

    with asyncio.Runner(loop_factory=loop_factory) as r:
        calls, seen, counts = r.run(go())
    assert counts == 1                              # none before due, one in the read
    assert len(calls) == 1 and calls[0] >= 0
    assert -TimerFdWaker.spin_max_ns <= seen[0] < 0
    assert seen[1] == _timer._NEVER                 # nothing pending any more


def test_a_read_inside_the_window_spins_to_the_due_time() -> None:
    async def go() -> list[int]:
        w = _waker()
        calls: list[int] = []
        try:
            due = _now() + 3_000_000
            w.call_at(due, lambda: calls.append(_now() - due))
            dues().run(_busy_until(dues().next_ns))  # inside the window, before due
            return calls
        finally:
            w.close()

    calls = asyncio.run(go())
    assert len(calls) == 1 and calls[0] >= 0


def test_a_call_that_raises_goes_to_the_loop_not_into_the_read() -> None:
    async def go() -> tuple[list[str], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        handled: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, ctx: handled.append(ctx))
        a, b = _waker(), _waker()
        ran: list[str] = []

        def boom() -> None:
            raise RuntimeError("boom")

        t = _now()
        a.call_at(t + 1_000_000, boom)
        b.call_at(t + 1_000_000, lambda: ran.append("b"))
        try:
            dues().run(_busy_until(t + 1_500_000))   # returns: the read goes on
        finally:
            a.close()
            b.close()
        return ran, handled

    ran, handled = asyncio.run(go())
    assert ran == ["b"]                             # the other call still ran
    assert len(handled) == 1 and str(handled[0]["exception"]) == "boom"


def test_two_wakers_on_one_loop_run_only_what_is_due() -> None:
    async def go() -> tuple[list[str], list[int]]:
        a, b = _waker(), _waker()
        d = dues()
        ran: list[str] = []
        t = _now()
        a.call_at(t + 1_000_000, lambda: ran.append("a"))
        b.call_at(t + 50_000_000, lambda: ran.append("b"))
        nexts = [d.next_ns - a.wake_ns]
        d.run(_busy_until(t + 1_500_000))
        nexts.append(d.next_ns - b.wake_ns)
        b.cancel()
        nexts.append(d.next_ns)
        b.call_at(t + 60_000_000, lambda: ran.append("b again"))
        b.close()                                   # a closed waker leaves the loop's dues
        nexts.append(d.next_ns)
        a.close()
        await asyncio.sleep(0.002)
        return ran, nexts

    ran, nexts = asyncio.run(go())
    assert ran == ["a"]
    assert nexts == [0, 0, _timer._NEVER, _timer._NEVER]


def test_each_loop_has_its_own_dues() -> None:
    """Points in threads each run their own loop: a read on one never runs another's call."""
    seen: dict[str, Any] = {}
    armed, done = threading.Event(), threading.Event()

    async def other() -> None:
        w = _waker()
        ran = asyncio.get_running_loop().create_future()

        def call() -> None:
            seen["other ran in"] = threading.get_ident()
            ran.set_result(None)

        w.call_at(_now() + 1_000_000, call)
        seen["other"] = dues()
        armed.set()
        try:
            await asyncio.wait_for(ran, 30)      # by its own timer, on its own loop
        finally:
            w.close()

    thread = threading.Thread(target=lambda: (asyncio.run(other()), done.set()))
    thread.start()
    armed.wait(10)

    async def here() -> None:
        seen["here"] = dues()
        dues().run(_busy_until(_now() + 2_000_000))

    asyncio.run(here())
    thread.join(10)
    assert done.is_set()
    assert seen["here"] is not seen["other"]
    assert seen["other ran in"] == thread.ident
    assert dues().next_ns == _timer._NEVER          # outside any loop: nothing is ever armed


class _Events(Consumer):
    def __init__(self, log: list[tuple[str, int]]) -> None:
        self.log = log

    def head(self, status: int, headers: dict[str, str], now: int) -> None:
        self.log.append(("head", now))


class _Fake:
    written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def abort(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def test_the_native_connection_runs_a_due_call_before_the_read_it_stamped() -> None:
    """The read is stamped first (its time is the response's), then the due send leaves,
    then the read is parsed."""
    async def go() -> list[tuple[str, int]]:
        log: list[tuple[str, int]] = []
        conn = Connection(Pool("http://127.0.0.1:1/v1", connect_timeout_s=1.0,
                               max_body_bytes=1 << 20))
        conn.connection_made(_Fake())  # type: ignore[arg-type]
        conn.start(b"GET / HTTP/1.1\r\n\r\n", _Events(log))
        w = _waker()
        try:
            due = _now() + 1_000_000
            w.call_at(due, lambda: log.append(("send", _now())))
            _busy_until(due + 200_000)
            before_read = _now()
            conn.data_received(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")
            log.append(("read at", before_read))
            return log
        finally:
            w.close()

    log = asyncio.run(go())
    assert [name for name, _ in log] == ["send", "head", "read at"]
    send, head, read_at = (t for _, t in log)
    assert read_at <= head <= send                  # stamped before the send ran
