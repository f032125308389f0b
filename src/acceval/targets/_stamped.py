"""Plain-TCP connections read with the kernel's receive stamps (``receive_stamps: kernel``).

An event loop's transport hands bytes over when its thread gets to them. When the client's
core is busy (thousands of streams, or the records writer holding the interpreter), that can
be milliseconds after they arrived, and every time-to-first-token and inter-token gap would
carry the client's own delay. Here the socket is read with ``recvmsg`` and ``SO_TIMESTAMPNS``
on: each read comes with the time the kernel received its data (for TCP, the last segment the
read took), and that time, on the ``time.perf_counter_ns`` clock, is what the response's
stamps use. Probed on loopback (the reader kept busy 2 ms): the kernel's stamp came 2-7 µs
before the sender's ``sendall`` returned, the user-space read 2.07 ms after it. A read here
costs about 1 µs more client CPU than the event loop's own, which is why an endpoint asks
for it (docs/transports.md).

:class:`StampedTransport` is the small part of ``asyncio.Transport`` that
:class:`acceval.targets._http.Connection` uses (write, close, abort, is_closing,
get_extra_info), on ``loop.add_reader`` / ``add_writer``. TLS keeps the event loop's own
transport: its records are decrypted in user space, after the kernel's stamp means anything.

The kernel's stamp is CLOCK_REALTIME. It is moved onto the monotonic clock with the offset
between the two, read as a tight triple (monotonic, wall, monotonic: the wall reading taken
as the midpoint's, within about 70 ns here) at the first read after :data:`REFRESH_NS` has
passed. Both clocks advance at the same NTP-slewed rate, so only a step of the wall clock
changes the offset. A triple that came apart (the thread was preempted in it) is read again
at the next read. A stamp is not believed, and the read's own time is used, when it falls
after the read, more than :data:`MAX_STAMP_AGE_NS` before it, or before the read that saw
the offset change (data that arrived before a step of the wall clock would be converted with
the wrong offset); data that arrived in the ``REFRESH_NS`` after a step and was read before
it was seen carries the step. A client descheduled for a while keeps its stamps: that is
when they matter most.
"""

from __future__ import annotations

import asyncio
import platform
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

__all__ = ["MAX_STAMP_AGE_NS", "REFRESH_NS", "STEP_NS", "TIGHT_PAIR_NS", "StampedProtocol",
           "StampedTransport", "keep_stamps_on", "kernel_stamps", "kernel_stamps_problem",
           "open_connection"]

_now = time.perf_counter_ns
_wall = time.time_ns

#: ``SO_TIMESTAMPNS`` (Linux; the ``socket`` module does not name it): receive stamps as a
#: ``struct timespec`` in a control message of the same number. 35 in asm-generic, which
#: x86-64 and arm64 use; other architectures keep the event loop's transport.
SO_TIMESTAMPNS: int | None = (getattr(socket, "SO_TIMESTAMPNS", 35)
                              if sys.platform == "linux"
                              and platform.machine() in ("x86_64", "aarch64", "arm64")
                              else None)
_TIMESPEC = struct.Struct("@qq")
_UNPACK = _TIMESPEC.unpack_from
_SOL_SOCKET = socket.SOL_SOCKET
_CMSG_SPACE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
_READ_SIZE = 65536

#: A receive stamp older than this at its read is not believed (ns): no answer waits that long
#: in a socket while the client runs.
MAX_STAMP_AGE_NS = 10_000_000_000

#: How often the wall-minus-monotonic offset is read again (ns): a step of the wall clock is
#: seen within this long, at the first read after it.
REFRESH_NS = 10_000_000

#: A change of the wall-minus-monotonic offset larger than this is a step of the wall clock
#: (ns); the pair readings themselves agree within a few µs.
STEP_NS = 100_000


class StampedProtocol(Protocol):
    """What :class:`StampedTransport` calls: asyncio's protocol methods, and for data
    ``data_received(data, now, at)`` with the read's time and the arrival time."""

    def connection_made(self, transport: Any) -> None: ...
    def data_received(self, data: bytes, now: int, at: int) -> None: ...
    def eof_received(self) -> bool | None: ...
    def connection_lost(self, exc: Exception | None) -> None: ...


#: A (monotonic, wall, monotonic) pair further apart than this was interrupted: its offset
#: is not used. Three clock readings take 140-200 ns here.
TIGHT_PAIR_NS = 2_000


class _Offset:
    """CLOCK_REALTIME minus ``perf_counter_ns``, from the last tight pair of readings
    (read again every :data:`REFRESH_NS`), and when a step of the wall clock was first
    seen."""

    __slots__ = ("due_ns", "ns", "step_seen_ns")

    def __init__(self) -> None:
        self.ns = 0
        self.due_ns = 0
        for _ in range(100):
            if self.read() is not None:
                break
        self.step_seen_ns = 0

    def read(self) -> int | None:
        """Read the clocks as a pair: the monotonic time after them, when the pair was tight
        (the offset is updated), else None."""
        a = _now()
        w = _wall()
        b = _now()
        if b - a > TIGHT_PAIR_NS:
            return None
        ns = w - ((a + b) >> 1)
        if not -STEP_NS <= ns - self.ns <= STEP_NS:
            self.step_seen_ns = b
        self.ns = ns
        self.due_ns = b + REFRESH_NS
        return b


_OFFSET = _Offset()


class StampedTransport:
    """One connected non-blocking TCP socket, read with its kernel receive stamps."""

    __slots__ = ("_closing", "_done", "_fd", "_loop", "_protocol", "_reading", "_recvmsg",
                 "_sock", "_wbuf", "_writing")

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket,
                 protocol: StampedProtocol) -> None:
        self._loop = loop
        self._sock = sock
        self._recvmsg = sock.recvmsg
        self._fd = sock.fileno()
        self._protocol = protocol
        self._wbuf = bytearray()
        self._closing = False
        self._done = False
        self._writing = False
        protocol.connection_made(self)
        self._reading = not self._closing
        if self._reading:
            loop.add_reader(self._fd, self._on_readable)

    # --- the transport API the connection uses ------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._sock if name == "socket" else default

    def is_closing(self) -> bool:
        return self._closing

    def write(self, data: bytes) -> None:
        if self._closing:
            return
        if not self._wbuf:
            try:
                sent = self._sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                self._fatal(exc)
                return
            if sent == len(data):
                return
            data = data[sent:]
            self._loop.add_writer(self._fd, self._on_writable)
            self._writing = True
        self._wbuf += data

    def close(self) -> None:
        """Close once what is written has left; the protocol's ``connection_lost(None)``
        follows."""
        if self._closing:
            return
        self._closing = True
        self._stop_reading()
        if not self._wbuf:
            self._loop.call_soon(self._finish, None)

    def abort(self) -> None:
        """Close now, dropping anything not yet written."""
        self._force_close(None)

    # --- event loop callbacks -----------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data, ancillary, _, _ = self._recvmsg(_READ_SIZE, _CMSG_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fatal(exc)
            return
        if not data:
            self._stop_reading()
            try:
                keep_open = self._protocol.eof_received()
            except BaseException as exc:
                self._fatal(exc)
                raise
            if not keep_open:
                self.close()
            return
        # Once per read (64 times a paced answer): kept to a few attribute reads.
        now = _now()
        at = now
        if ancillary:
            off = _OFFSET
            if now >= off.due_ns:
                now = at = off.read() or now
            level, kind, payload = ancillary[0]
            if kind == SO_TIMESTAMPNS and level == _SOL_SOCKET and len(payload) >= 16:
                sec, nsec = _UNPACK(payload)
                t = sec * 1_000_000_000 + nsec - off.ns
                if off.step_seen_ns <= t <= now and t >= now - MAX_STAMP_AGE_NS:
                    at = t
        self._protocol.data_received(data, now, at)

    def _on_writable(self) -> None:
        try:
            sent = self._sock.send(self._wbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fatal(exc)
            return
        del self._wbuf[:sent]
        if not self._wbuf:
            self._loop.remove_writer(self._fd)
            self._writing = False
            if self._closing:
                self._loop.call_soon(self._finish, None)

    # --- ending -------------------------------------------------------------------------------

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def _fatal(self, exc: BaseException) -> None:
        self._force_close(exc if isinstance(exc, Exception) else None)

    def _force_close(self, exc: Exception | None) -> None:
        if self._done:
            return
        was_closing = self._closing and not self._wbuf
        self._closing = True
        self._wbuf.clear()
        self._stop_reading()
        if self._writing:
            self._writing = False
            self._loop.remove_writer(self._fd)
        if not was_closing:   # else a _finish is already scheduled
            self._loop.call_soon(self._finish, exc)

    def _finish(self, exc: Exception | None) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._protocol.connection_lost(exc)
        finally:
            self._sock.close()


def kernel_stamps() -> bool:
    """Whether this platform gives TCP receive stamps (Linux ``SO_TIMESTAMPNS``)."""
    return SO_TIMESTAMPNS is not None and _CMSG_SPACE > 0


def kernel_stamps_problem(transport: str, scheme: str) -> str | None:
    """Why ``receive_stamps: kernel`` cannot work with this transport and URL scheme here,
    or None."""
    if transport != "native":
        return "receive_stamps: kernel needs transport: native (aiohttp reads its sockets itself)"
    if scheme != "http":
        return ("receive_stamps: kernel works over plain http only (TLS records are decrypted "
                "after the kernel's stamp); use receive_stamps: read")
    if not kernel_stamps():
        return "receive_stamps: kernel needs Linux on x86-64 or arm64; use receive_stamps: read"
    return None


_keeper: socket.socket | None = None


def keep_stamps_on() -> None:
    """Keep the kernel stamping received packets for as long as this process lives.

    Linux stamps packets only while some socket asks for stamps, and turns that on and off
    in deferred work as such sockets come and go: with a server that closes after every
    answer (llama.cpp's), each new connection's first reads could come unstamped, and on a
    busy host half of them did (96 of 200 fresh connections). One idle UDP socket with the
    option set, opened when a plain-TCP pool is made, keeps it on. Reads without a stamp are
    stamped when read, as before."""
    global _keeper
    if _keeper is not None or not kernel_stamps():
        return
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return
    try:
        assert SO_TIMESTAMPNS is not None
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        sock.close()
        return
    _keeper = sock


_P = TypeVar("_P")


async def open_connection(loop: asyncio.AbstractEventLoop, factory: Callable[[], _P],
                          host: str, port: int) -> _P:
    """Connect to ``host:port`` over plain TCP and return the protocol made by ``factory``,
    on a :class:`StampedTransport` (each address tried in turn, as ``create_connection``
    does without happy eyeballs). Raises ``OSError`` as ``create_connection`` does. Only
    where :func:`kernel_stamps` holds (the pool asks first)."""
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   proto=socket.IPPROTO_TCP)
    if not infos:
        raise OSError(f"getaddrinfo({host!r}) returned no address")
    errors: list[OSError] = []
    for family, type_, proto_no, _, address in infos:
        sock = socket.socket(family, type_, proto_no)   # EMFILE and the like propagate
        try:
            sock.setblocking(False)
            assert SO_TIMESTAMPNS is not None
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            errors.append(exc)
            continue
        except BaseException:
            sock.close()
            raise
        protocol = factory()
        StampedTransport(loop, sock, cast(StampedProtocol, protocol))
        return protocol
    if len(errors) == 1:
        raise errors[0]
    first = errors[0]
    raise OSError(first.errno, "Multiple exceptions: " + ", ".join(str(e) for e in errors))
