"""Plain-TCP reads carry the kernel's receive stamp (``acceval.targets._stamped``): a response
that arrived while the client's loop was busy is stamped when it arrived, not when it was read.

Deterministic: each timing test holds the client's loop for a fixed time *after* the server
thread says its bytes have left, so a loaded machine only makes the gap larger; the stamp is
checked against the sender's own clock readings around its ``sendall`` (the kernel stamps
loopback segments in the sender's call)."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from acceval.loadgen.runner import new_event_loop
from acceval.targets import _stamped
from acceval.targets._http import Pool
from acceval.targets._stamped import (
    MAX_STAMP_AGE_NS,
    REFRESH_NS,
    SO_TIMESTAMPNS,
    STEP_NS,
    TIGHT_PAIR_NS,
    StampedTransport,
    keep_stamps_on,
    kernel_stamps,
    open_connection,
)
from acceval.targets.transport import Consumer

pytestmark = pytest.mark.skipif(not kernel_stamps(), reason="receive stamps are Linux's")

_now = time.perf_counter_ns
HOLD_NS = 30_000_000   # the client's loop is kept busy this long after the bytes left


def _cmsg(wall_ns: int) -> list[tuple[int, int, bytes]]:
    assert SO_TIMESTAMPNS is not None
    return [(socket.SOL_SOCKET, SO_TIMESTAMPNS,
             struct.pack("@qq", wall_ns // 1_000_000_000, wall_ns % 1_000_000_000))]


class _Fed:
    """A :class:`StampedTransport` on a real socket whose reads are fed: each ``read(data,
    ancillary)`` hands the transport one ``recvmsg`` result and returns what the protocol
    got (the read's time, the arrival time)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.a, self.b = socket.socketpair()
        self.got: list[tuple[int, int]] = []
        self.next: Any = None
        proto = self

        class P:
            def connection_made(self, transport: Any) -> None:
                pass

            def data_received(self, data: bytes, now: int, at: int) -> None:
                proto.got.append((now, at))

            def eof_received(self) -> bool | None:
                return None

            def connection_lost(self, exc: Exception | None) -> None:
                pass

        self.t = StampedTransport(loop, self.a, P())
        self.t._recvmsg = lambda size, space: self.next   # type: ignore[assignment]

    def read(self, ancillary: list[tuple[int, int, bytes]]) -> tuple[int, int]:
        self.next = (b"data", ancillary, 0, None)
        self.t._on_readable()
        return self.got[-1]

    def close(self) -> None:
        self.t.abort()
        self.b.close()


def test_a_stamp_is_moved_onto_the_monotonic_clock_and_a_wild_one_is_not_believed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def go() -> None:
        fed = _Fed(asyncio.get_running_loop())
        off = _stamped._OFFSET
        monkeypatch.setattr(off, "due_ns", 1 << 62)   # no clock pair inside the reads
        monkeypatch.setattr(off, "step_seen_ns", 0)
        wall = off.ns

        def stamped(ago_ns: int) -> tuple[int, int, int]:
            sent = _now() - ago_ns   # the arrival, on the monotonic clock
            now, at = fed.read(_cmsg(sent + wall))
            return now, at, sent

        try:
            now, at, sent = stamped(5_000_000)
            assert at == sent
            now, at, sent = stamped(3_000_000_000)   # descheduled for seconds: still believed
            assert at == sent
            now, at, sent = stamped(-50_000_000)      # after the read: the read's time
            assert at == now and now < sent
            now, at, sent = stamped(MAX_STAMP_AGE_NS + 50_000_000)   # too old
            assert at == now
            # Arrived before a step of the wall clock was seen: the wrong offset.
            monkeypatch.setattr(off, "step_seen_ns", _now() - 1_000_000)
            now, at, _ = stamped(5_000_000)
            assert at == now
            monkeypatch.setattr(off, "step_seen_ns", 0)
            now, at = fed.read([])                            # no stamp
            assert at == now
            now, at = fed.read([(socket.SOL_SOCKET, 1, b"x" * 16)])   # another kind
            assert at == now
        finally:
            fed.close()

    _run(go())


def test_the_clock_offset_comes_from_a_tight_pair_and_a_step_is_remembered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mono = iter([1_000, 1_100, 5_000, 5_000 + TIGHT_PAIR_NS + 1, 8_000, 8_100, 9_000, 9_100])
    wall = iter([9_000_050, 9_999_999, 9_008_050 + STEP_NS, 9_009_050 + STEP_NS])
    monkeypatch.setattr(_stamped, "_now", lambda: next(mono))
    monkeypatch.setattr(_stamped, "_wall", lambda: next(wall))
    off = _stamped._Offset.__new__(_stamped._Offset)
    off.ns, off.step_seen_ns, off.due_ns = 9_000_050 - 1_050, 0, 0
    assert off.read() == 1_100 and off.ns == 9_000_050 - 1_050     # the pair's midpoint
    assert off.step_seen_ns == 0 and off.due_ns == 1_100 + REFRESH_NS
    assert off.read() is None and off.ns == 9_000_050 - 1_050      # preempted: kept
    assert off.due_ns == 1_100 + REFRESH_NS                        # and read again soon
    assert off.read() == 8_100 and off.ns == 9_000_000 + STEP_NS  # stepped: seen at 8,100
    assert off.step_seen_ns == 8_100
    assert off.read() == 9_100 and off.step_seen_ns == 8_100      # steady again


def test_the_offset_is_read_again_at_the_first_read_after_its_refresh_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def go() -> list[int]:
        fed = _Fed(asyncio.get_running_loop())
        off = _stamped._OFFSET
        calls: list[int] = []
        real = off.read
        monkeypatch.setattr(off, "due_ns", 1 << 62)
        try:
            monkeypatch.setattr(_stamped._Offset, "read",
                                lambda self: calls.append(1) or real())
            fed.read(_cmsg(time.time_ns()))
            before = len(calls)
            monkeypatch.setattr(off, "due_ns", 0)
            fed.read(_cmsg(time.time_ns()))
            return [before, len(calls), int(off.due_ns > _now())]
        finally:
            fed.close()

    assert _run(go()) == [0, 1, 1]


def _stamped_probe() -> bool:
    """Whether a fresh loopback connection's first read carries a receive stamp."""
    assert SO_TIMESTAMPNS is not None
    with socket.create_server(("127.0.0.1", 0)) as srv, socket.socket() as c:
        c.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        c.connect(srv.getsockname())
        peer, _ = srv.accept()
        with peer:
            peer.sendall(b"x")
            _, ancillary, _, _ = c.recvmsg(16, socket.CMSG_SPACE(16))
    return bool(ancillary)


@pytest.fixture(autouse=True)
def _stamps_on() -> None:
    """The kernel turns stamping on in deferred work: wait until it has (once a process)."""
    keep_stamps_on()
    deadline = time.monotonic() + 10
    while not _stamped_probe():
        assert time.monotonic() < deadline, "the kernel never stamped a packet"
        time.sleep(0.01)


def test_fresh_connections_are_stamped_from_their_first_read_while_the_keeper_is_open() -> None:
    # Without the keeper, each connection's close can turn stamping off and the next one's
    # option turns it on again later: 96 of 200 fresh connections read unstamped on a busy
    # host.
    assert _stamped._keeper is not None
    assert all(_stamped_probe() for _ in range(100))


class _Server:
    """A loopback server thread: accepts one connection, then runs ``script(conn)``."""

    def __init__(self, script: Callable[[socket.socket], None]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, args=(script,), daemon=True)
        self.thread.start()

    def _serve(self, script: Callable[[socket.socket], None]) -> None:
        try:
            conn, _ = self.listener.accept()
            with conn:
                script(conn)
        except BaseException as exc:   # reported by join()
            self.error = exc

    def join(self) -> None:
        self.thread.join(10)
        self.listener.close()
        assert not self.thread.is_alive() and self.error is None, self.error


class _Recorder:
    def __init__(self) -> None:
        self.reads: list[tuple[bytes, int, int]] = []
        self.events: list[str] = []
        self.lost: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.events.append("made")

    def data_received(self, data: bytes, now: int, at: int) -> None:
        self.reads.append((data, now, at))

    def eof_received(self) -> bool | None:
        self.events.append("eof")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.events.append("lost")
        self.lost.set_result(exc)


def _run(coro: Any) -> Any:
    with asyncio.Runner(loop_factory=new_event_loop) as r:
        return r.run(coro)


def test_bytes_read_late_carry_the_time_they_arrived() -> None:
    go_ahead, left = threading.Event(), threading.Event()
    around: list[int] = []

    def script(conn: socket.socket) -> None:
        go_ahead.wait(10)
        around.append(_now())
        conn.sendall(b"first bytes")
        around.append(_now())
        left.set()
        conn.recv(1)   # until the client closes

    async def go() -> _Recorder:
        loop = asyncio.get_running_loop()
        rec = await open_connection(loop, _Recorder, "127.0.0.1", server.port)
        assert isinstance(rec.transport, StampedTransport)
        go_ahead.set()
        assert left.wait(10)
        held_from = _now()
        while _now() < held_from + HOLD_NS:   # the loop is busy: nothing is read
            pass
        while not rec.reads:
            await asyncio.sleep(0.001)
        rec.transport.close()
        await rec.lost
        return rec

    server = _Server(script)
    rec = _run(go())
    server.join()
    (data, now, at), = rec.reads
    assert data == b"first bytes"
    assert around[0] - 1_000_000 <= at <= around[1] + 1_000_000
    assert now - at >= HOLD_NS
    assert rec.events == ["made", "lost"]


def test_the_native_pool_stamps_a_response_head_with_its_arrival() -> None:
    go_ahead, left = threading.Event(), threading.Event()
    around: list[int] = []
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")

    def script(conn: socket.socket) -> None:
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += conn.recv(4096)
        go_ahead.wait(10)
        around.append(_now())
        conn.sendall(answer)
        around.append(_now())
        left.set()
        conn.recv(1)

    class Rec(Consumer):
        __slots__ = ("times",)

        def __init__(self) -> None:
            self.times: dict[str, int] = {}

        def head(self, status: int, headers: dict[str, str], now: int) -> None:
            self.times["head"] = now

        def end(self, now: int) -> None:
            self.times["end"] = now

        def lost(self, got_bytes: bool, detail: str, problem: Exception | None,
                 now: int) -> None:
            self.times["lost"] = now

    async def go() -> tuple[Rec, int]:
        loop = asyncio.get_running_loop()
        pool = Pool(f"http://127.0.0.1:{server.port}/v1", connect_timeout_s=5,
                    max_body_bytes=1 << 20, kernel_stamps=True)
        conn = await pool.connect()
        assert isinstance(conn.transport, StampedTransport)
        rec = Rec()
        waiter: asyncio.Future[bool] = loop.create_future()
        conn.start(b"GET /v1/x HTTP/1.1\r\nHost: h\r\n\r\n", rec, waiter)
        go_ahead.set()
        assert left.wait(10)
        held_from = _now()
        while _now() < held_from + HOLD_NS:
            pass
        assert await waiter is False
        read_after = _now()
        pool.close()
        return rec, read_after

    server = _Server(script)
    rec, read_after = _run(go())
    server.join()
    assert set(rec.times) == {"head", "end"}
    assert around[0] - 1_000_000 <= rec.times["head"] <= around[1] + 1_000_000
    assert rec.times["end"] == rec.times["head"]          # one read brought both
    assert read_after - rec.times["head"] >= HOLD_NS


def test_a_large_write_leaves_whole_through_the_writer_and_close_waits_for_it() -> None:
    payload = bytes(range(256)) * (64 * 1024)   # 16 MiB: past any socket buffer
    got = bytearray()

    def script(conn: socket.socket) -> None:
        while chunk := conn.recv(1 << 20):
            got.extend(chunk)
            time.sleep(0.001)   # a slow reader: the client's writes must wait

    async def go() -> _Recorder:
        rec = await open_connection(asyncio.get_running_loop(), _Recorder, "127.0.0.1",
                                    server.port)
        rec.transport.write(payload[:10])
        rec.transport.write(payload[10:])
        assert rec.transport._wbuf   # not all of it could leave at once
        rec.transport.close()
        rec.transport.write(b"after close")   # dropped, as asyncio's transports do
        assert await rec.lost is None
        return rec

    server = _Server(script)
    rec = _run(go())
    server.join()
    assert bytes(got) == payload
    assert rec.events == ["made", "lost"]


def test_the_server_closing_gives_eof_then_lost_once_and_abort_drops_the_rest() -> None:
    def closes(conn: socket.socket) -> None:
        conn.sendall(b"bye")

    async def eof() -> _Recorder:
        rec = await open_connection(asyncio.get_running_loop(), _Recorder, "127.0.0.1",
                                    server.port)
        assert await rec.lost is None
        rec.transport.abort()   # after the end: nothing more
        await asyncio.sleep(0)
        return rec

    server = _Server(closes)
    rec = _run(eof())
    server.join()
    assert [d for d, _, _ in rec.reads] == [b"bye"]
    assert rec.events == ["made", "eof", "lost"]

    def waits(conn: socket.socket) -> None:
        conn.recv(1)

    async def abort() -> _Recorder:
        rec = await open_connection(asyncio.get_running_loop(), _Recorder, "127.0.0.1",
                                    server.port)
        rec.transport.abort()
        rec.transport.abort()
        rec.transport.close()
        assert rec.transport.is_closing()
        assert await rec.lost is None
        await asyncio.sleep(0.01)
        return rec

    server = _Server(waits)
    rec = _run(abort())
    server.join()
    assert rec.events == ["made", "lost"]


def test_a_refused_connect_raises_the_os_error_and_leaves_no_socket_open() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]   # closed again: nothing listens there

    opened: list[socket.socket] = []
    real = socket.socket

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            opened.append(self)

    async def go() -> None:
        with pytest.raises(ConnectionRefusedError):
            await open_connection(asyncio.get_running_loop(), _Recorder, "127.0.0.1", port)

    mp = pytest.MonkeyPatch()
    mp.setattr(_stamped.socket, "socket", Counting)
    try:
        _run(go())
    finally:
        mp.undo()
    assert opened and all(s.fileno() == -1 for s in opened)


def test_kernel_stamps_are_asked_for_and_refused_where_they_cannot_work() -> None:
    from acceval.errors import StudyError
    from acceval.study import study_from_dict

    def endpoint(**kw: Any) -> dict[str, Any]:
        return {"name": "s", "targets": [{"name": "a", "endpoint": {
            "base_url": "http://127.0.0.1:8000/v1", "model": "m", **kw}}]}

    ep = study_from_dict(endpoint()).targets[0].endpoint
    assert ep is not None and ep.receive_stamps == "read"   # the default
    ep = study_from_dict(endpoint(receive_stamps="kernel")).targets[0].endpoint
    assert ep is not None and ep.receive_stamps == "kernel"
    for bad, why in ((dict(receive_stamps="kernel", transport="aiohttp"), "transport: native"),
                     (dict(receive_stamps="kernel", base_url="https://h:8443/v1"),
                      "plain http only"),
                     (dict(receive_stamps="wall"), "read")):
        with pytest.raises(StudyError) as info:
            study_from_dict(endpoint(**bad))
        assert any(why in msg or why in hint for _, msg, hint in info.value.problems), (
            info.value.problems)


def test_a_pool_reads_with_the_event_loops_transport_unless_kernel_stamps_are_asked() -> None:
    async def go() -> list[bool]:
        srv = await asyncio.get_running_loop().create_server(asyncio.Protocol, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        out = []
        try:
            for kernel in (False, True):
                pool = Pool(f"http://127.0.0.1:{port}/v1", connect_timeout_s=5,
                            max_body_bytes=1 << 20, kernel_stamps=kernel)
                conn = await pool.connect()
                out.append(isinstance(conn.transport, StampedTransport))
                pool.close()
        finally:
            srv.close()
        return out

    assert _run(go()) == [False, True]


def test_the_run_records_and_the_report_shows_which_stamps_were_used() -> None:
    from acceval.analysis import endpoint_log
    from acceval.report._fmt import client_of
    from acceval.study import study_from_dict

    logs = []
    for stamps in ("read", "kernel"):
        ep = study_from_dict({"name": "s", "targets": [{"name": "a", "endpoint": {
            "base_url": "http://127.0.0.1:8000/v1", "model": "m",
            "receive_stamps": stamps}}]}).targets[0].endpoint
        assert ep is not None
        logs.append(endpoint_log(ep))
    assert [lg.receive_stamps for lg in logs] == ["read", "kernel"]
    assert [client_of(lg) for lg in logs] == ["native", "native, kernel receive stamps"]
    assert client_of(None) == "—"
