"""The ``native`` transport: a lean HTTP/1.1 client on asyncio protocols, a keep-alive pool
and a response parser.

Why not aiohttp here (it is the other transport, :mod:`acceval.targets._aiohttp`): the load
generator's own CPU per request bounds the load one client host can offer and adds noise to
every stamp. Parsing inside ``data_received`` (status line, headers, chunked framing) and
handing body bytes to a consumer callback wakes the request's coroutine once per response
instead of once per line. It only does what an OpenAI-compatible server needs: one request
at a time per connection (no pipelining), Content-Length or chunked or read-until-close
bodies, plain TCP or TLS.

Whatever a server sends ends the exchange through the consumer, never as an exception out of
a protocol callback: a response that breaks HTTP/1.1 (status line, headers, chunk framing,
Content-Length) is a :class:`ProtocolError`, a body past the pool's ``max_body_bytes`` is a
:class:`ResponseTooLarge` (the connection is closed at once and nothing past the limit is
kept), and an exception raised by a consumer callback is handed to its ``lost``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
import time
from typing import ClassVar, cast
from urllib.parse import urlsplit

from acceval.loadgen import _timer
from acceval.targets import _stamped
from acceval.targets.transport import (
    CLIENT_ERRNOS,
    ClientLimit,
    ConnectFailed,
    Consumer,
    ProtocolError,
    Request,
    ResponseTooLarge,
    StopExchange,
    TimedOut,
    TransportStats,
    peer_closed,
    tls_context,
)

__all__ = ["Connection", "Consumer", "NativeTransport", "Pool", "ProtocolError",
           "ResponseTooLarge"]

_now = time.perf_counter_ns

# Parser states.
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_CRLF, _TRAILER, _UNTIL_CLOSE, _IDLE = range(8)

_MAX_HEAD = 65536          # status line and headers, and again the trailer section
_MAX_CHUNK_LINE = 4096     # a chunk-size line with its extensions
_STATUS = re.compile(r"HTTP/1\.([01]) ([0-9]{3})(?: .*)?")


def _content_length(value: str) -> int:
    # A repeated header arrives joined with ", "; identical copies are harmless (RFC 9110
    # 8.6), differing ones leave the body's end unknown.
    values = {v.strip() for v in value.split(",")}
    v = values.pop() if len(values) == 1 else ""
    if not (v.isascii() and v.isdigit()) or len(v) > 18:
        raise ProtocolError(f"bad Content-Length {value[:40]!r}")
    return int(v)


def _chunk_size(line: bytes) -> int:
    # Plain hex only: int() alone would also take a sign, "0x", "_" and spaces.
    size = line if line.isalnum() else line.split(b";", 1)[0].strip(b" \t")
    try:
        if size.isalnum() and len(size) <= 16 and size[1:2] not in (b"x", b"X"):
            return int(size, 16)
    except ValueError:
        pass
    raise ProtocolError(f"bad chunk-size line {line[:40]!r}")


class Connection(asyncio.Protocol):
    """One TCP connection; one exchange at a time."""

    __slots__ = ("_body_bytes", "_buf", "_consumer", "_counted", "_dues", "_expect_body", "_fd",
                 "_length", "_remaining", "_state", "_waiter", "closed", "got_bytes",
                 "keep_alive", "pool", "requests", "transport")

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self._consumer: Consumer | None = None
        # Set when the exchange is over: True when the request must go again on a fresh
        # connection (this reused one was closed by the server before any answer).
        self._waiter: asyncio.Future[bool] | None = None
        self._buf = b""
        self._state = _IDLE
        self._remaining = 0
        self._length = 0        # the Content-Length of the response being read
        self._body_bytes = 0    # counted against the limit (a Content-Length, whole, at once)
        self._expect_body = True
        self.closed = False
        self.got_bytes = False
        self.keep_alive = True
        self.requests = 0
        self._fd = -1
        self._counted = False
        self._dues = _timer.dues()

    # --- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with contextlib.suppress(OSError, AttributeError):
                self._fd = sock.fileno()
        self.pool.all.add(self)

    def usable(self) -> bool:
        """Open on both sides as far as the event loop knows (no socket check)."""
        return not self.closed and self.transport is not None and not self.transport.is_closing()

    def stale(self) -> bool:
        """Whether the server has closed this idle connection, or sent stray bytes on it
        (:func:`~acceval.targets.transport.peer_closed`)."""
        return self._fd >= 0 and peer_closed(self._fd, self.pool.ssl is not None)

    def connection_lost(self, exc: Exception | None) -> None:
        ours = self.closed  # closed by this side (abandoned, failed, or not to be reused)
        self.closed = True
        self.pool.all.discard(self)
        c = self._consumer
        if c is None:
            self.gone_while_idle(by_server=not ours)
            return
        self._consumer = None
        now = _now()
        try:
            if self._state == _UNTIL_CLOSE:
                try:
                    c.end(now)
                except StopExchange:
                    pass
                except Exception as bug:  # a consumer's bug ends its exchange
                    c.lost(True, f"client error: {bug!r}", bug, now)
                return
            if not self.got_bytes and self.requests > 1 and exc is None:
                # Nothing came back on a reused connection, which the server closed (a FIN):
                # it closed it while idle (a keep-alive timeout). Not the request's failure:
                # it goes again, fresh. A reset (exc set) is not that: the server may have
                # taken the request, and sending it again would send it twice.
                self._settle(True)
                return
            detail = f"connection lost: {exc}" if exc else "connection closed by the server"
            if self._state == _LENGTH and self._length:
                detail += (f" after {self._length - self._remaining} of {self._length} body "
                           "bytes")
            elif self._state in (_CHUNK_SIZE, _CHUNK_DATA, _CHUNK_CRLF, _TRAILER):
                detail += " inside the chunked body"
            c.lost(self.got_bytes, detail, None, now)
        finally:
            self._settle(False)

    def eof_received(self) -> bool | None:
        if self._consumer is None:
            self.gone_while_idle()
        return None  # close our side too

    def gone_while_idle(self, *, by_server: bool = True) -> None:
        """This idle connection is closed: out of the pool. When the server closed it, the
        pool is told once (it learns a server that closes after every answer)."""
        with contextlib.suppress(ValueError):
            self.pool.idle.remove(self)
        if by_server and not self._counted and self.requests:
            self._counted = True
            self.pool.closed_while_idle(self.requests)

    def data_received(self, data: bytes, now: int = 0, at: int = 0) -> None:
        """Bytes read at ``now`` that arrived at ``at``: the response is stamped with ``at``,
        a send that fell due is run by ``now``. The event loop's own transport passes the
        bytes alone (both are the read's time, taken here); a
        :class:`~acceval.targets._stamped.StampedTransport` passes the kernel's receive
        stamp as ``at``."""
        if not now:
            now = at = _now()
        dues = self._dues
        if now >= dues.next_ns:
            dues.run(now)
        c = self._consumer
        if c is None:
            # Bytes while idle: the server is confused; never reuse this connection.
            self.closed = True
            if self.transport is not None:
                self.transport.abort()
            return
        self.got_bytes = True
        try:
            self._feed(c, data, at)
        except StopExchange:
            self._stop()
        except ResponseTooLarge as exc:
            self._fail(c, str(exc), exc, at)
        except ProtocolError as exc:
            self._fail(c, f"bad HTTP response: {exc}", exc, at)
        except Exception as exc:  # a consumer's bug: no traceback per read
            self._fail(c, f"client error: {exc!r}", exc, at)

    # --- exchange -----------------------------------------------------------------------------

    def start(self, request: bytes, consumer: Consumer, waiter: asyncio.Future[bool] | None = None,
              *, expect_body: bool = True) -> None:
        """Write one request; ``consumer`` gets the response, and ``waiter`` is set when the
        exchange is over (True: send it again on a fresh connection)."""
        self._consumer = consumer
        self._waiter = waiter
        self._state = _HEAD
        self._buf = b""
        self._length = self._body_bytes = 0
        self.got_bytes = False
        self._expect_body = expect_body
        self.requests += 1
        assert self.transport is not None
        self.transport.write(request)

    def abandon(self) -> None:
        """Drop the exchange in progress (cancellation, a stale connection): close without
        callbacks."""
        self._consumer = None
        self._waiter = None
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def time_out(self) -> None:
        """The request's deadline: close, and tell the consumer."""
        c = self._consumer
        if c is None:
            return
        waiter, got = self._waiter, self.got_bytes
        self.abandon()
        try:
            c.lost(got, "deadline passed", TimedOut(), _now())
        finally:
            if waiter is not None and not waiter.done():
                waiter.set_result(False)

    def _settle(self, resend: bool) -> None:
        w = self._waiter
        if w is not None:
            self._waiter = None
            if not w.done():
                w.set_result(resend)

    def _stop(self) -> None:
        """The consumer stopped the exchange (it recorded why)."""
        self._consumer = None
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        self._settle(False)

    def _fail(self, c: Consumer, detail: str, problem: Exception, now: int) -> None:
        self._consumer = None
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        try:
            c.lost(True, detail, problem, now)
        finally:
            self._settle(False)

    def _grow(self, n: int) -> None:
        """Count ``n`` more body bytes, before they are kept."""
        self._body_bytes += n
        limit = self.pool.max_body_bytes
        if self._body_bytes > limit:
            raise ResponseTooLarge(f"response body over the limit of {limit:,} bytes")

    def _done(self, c: Consumer, now: int) -> None:
        self._consumer = None
        self._state = _IDLE
        if self._buf:
            self.keep_alive = False  # trailing garbage: do not trust this connection
        if self.keep_alive and not self.closed and self.pool.stats.reuse:
            self.pool.idle.append(self)
        else:
            self.closed = True
            if self.transport is not None:
                self.transport.close()
        c.end(now)
        self._settle(False)

    def _feed(self, c: Consumer, data: bytes, now: int) -> None:
        # Body bytes of one read go to the consumer in one call (one SSE split, not one per
        # HTTP chunk); they are flushed before the response ends or fails.
        out: list[bytes] = []
        try:
            self._parse(c, data, now, out)
        finally:
            if out and self._consumer is c:
                c.body(out[0] if len(out) == 1 else b"".join(out), now)

    def _parse(self, c: Consumer, data: bytes, now: int, out: list[bytes]) -> None:
        buf = self._buf + data if self._buf else data
        self._buf = b""
        pos = 0
        size = len(buf)
        emit = out.append
        limit = self.pool.max_body_bytes
        while True:
            state = self._state
            if state == _CHUNK_SIZE:
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    if size - pos > _MAX_CHUNK_LINE:
                        raise ProtocolError("chunk-size line longer than 4 KiB")
                    break
                n = _chunk_size(buf[pos:i])
                pos = i + 2
                if n == 0:
                    self._state = _TRAILER
                    self._remaining = _MAX_HEAD
                    continue
                self._body_bytes += n   # counted (and refused) before any of it is kept
                if self._body_bytes > limit:
                    self._grow(0)
                if size >= pos + n + 2:   # the whole chunk is here: one slice
                    emit(buf[pos : pos + n])
                    if buf[pos + n : pos + n + 2] != b"\r\n":
                        raise ProtocolError("chunk not followed by CRLF")
                    pos += n + 2
                else:
                    self._remaining = n
                    self._state = _CHUNK_DATA
            elif state == _CHUNK_DATA:
                take = min(self._remaining, size - pos)
                if take <= 0:
                    break
                emit(buf[pos : pos + take])
                pos += take
                self._remaining -= take
                if self._remaining == 0:
                    self._state = _CHUNK_CRLF
            elif state == _CHUNK_CRLF:
                if size - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise ProtocolError("chunk not followed by CRLF")
                pos += 2
                self._state = _CHUNK_SIZE
            elif state == _HEAD:
                i = buf.find(b"\r\n\r\n", pos)
                if i < 0:
                    if size - pos > _MAX_HEAD:
                        raise ProtocolError("response headers larger than 64 KiB")
                    break
                head = buf[pos:i]
                pos = i + 4
                self._head(c, head, now)
                if self._consumer is not c:
                    return
            elif state == _LENGTH:
                take = min(self._remaining, size - pos)
                if take > 0:
                    emit(buf[pos : pos + take])
                    pos += take
                    self._remaining -= take
                if self._remaining == 0:
                    self._buf = buf[pos:]
                    self._finish(c, now, out)
                    return
                break
            elif state == _UNTIL_CLOSE:
                if pos < size:
                    self._grow(size - pos)
                    emit(buf[pos:])
                pos = size
                break
            elif state == _TRAILER:
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    if size - pos > self._remaining:
                        raise ProtocolError("trailer section larger than 64 KiB")
                    break
                line_empty = i == pos
                self._remaining -= i + 2 - pos
                if self._remaining < 0:
                    raise ProtocolError("trailer section larger than 64 KiB")
                pos = i + 2
                if line_empty:
                    self._buf = buf[pos:]
                    self._finish(c, now, out)
                    return
            else:
                break
        if pos < size:
            self._buf = buf[pos:]

    def _finish(self, c: Consumer, now: int, out: list[bytes]) -> None:
        if out:
            data = out[0] if len(out) == 1 else b"".join(out)
            out.clear()  # handed over once, even when the consumer stops the exchange
            c.body(data, now)
        if self._consumer is c:
            self._done(c, now)

    def _head(self, c: Consumer, head: bytes, now: int) -> None:
        lines = head.decode("latin-1").split("\r\n")
        m = _STATUS.fullmatch(lines[0])
        if m is None:
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:40]!r}")
        status = int(m[2])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            k, sep, v = line.partition(":")
            name = k.strip().lower()
            if not sep or not name or line[0] in " \t":
                raise ProtocolError(f"bad header line {line[:40]!r}")
            v = v.strip()
            headers[name] = f"{headers[name]}, {v}" if name in headers else v
        if 100 <= status < 200:
            return  # interim response (100 Continue): the real one follows
        conn_hdr = headers.get("connection", "").lower()
        self.keep_alive = "close" not in conn_hdr if m[1] == "1" else "keep-alive" in conn_hdr
        c.head(status, headers, now)
        if self._consumer is None:
            return
        if not self._expect_body or status in (204, 304):
            self._state = _LENGTH
            self._remaining = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = _CHUNK_SIZE
        elif "content-length" in headers:
            n = _content_length(headers["content-length"])
            self._grow(n)   # refused before any of its bytes are kept
            self._state = _LENGTH
            self._remaining = self._length = n
        else:
            self._state = _UNTIL_CLOSE
            self.keep_alive = False


class Pool:
    """Keep-alive connections to one origin. LIFO reuse keeps the hottest connections busy."""

    def __init__(self, url: str, *, connect_timeout_s: float, max_body_bytes: int,
                 kernel_stamps: bool = False) -> None:
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"unsupported URL {url!r}")
        self.host = u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        default_port = self.port == (443 if u.scheme == "https" else 80)
        # An IPv6 literal keeps its brackets in the Host header, with or without a port.
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if default_port else f"{host}:{self.port}"
        self.path = u.path.rstrip("/")
        self.ssl: ssl.SSLContext | None = tls_context(u.scheme)
        # Answers stamped with the kernel's receive time (plain TCP only).
        self.kernel_stamps = kernel_stamps and self.ssl is None and _stamped.kernel_stamps()
        if self.kernel_stamps:
            _stamped.keep_stamps_on()   # before the first connection, not with it
        self.connect_timeout_s = connect_timeout_s
        self.max_body_bytes = max_body_bytes
        self.idle: list[Connection] = []
        self.all: set[Connection] = set()
        self.stats = TransportStats()

    def has_idle(self) -> bool:
        """Whether ``take_idle`` would return a connection (it takes from the end)."""
        for conn in reversed(self.idle):
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return True
        return False

    def take_idle(self) -> Connection | None:
        """The most recent idle connection that is still open, checked at the socket
        (:meth:`Connection.stale`), so that no request is written on a connection the
        server has closed."""
        idle = self.idle
        while idle:
            conn = idle.pop()
            if conn.closed or conn.transport is None or conn.transport.is_closing():
                conn.gone_while_idle(by_server=not conn.closed)
                continue
            if conn.stale():
                self.stats.stale_found += 1
                conn.gone_while_idle()
                conn.abandon()
                continue
            return conn
        return None

    def closed_while_idle(self, served: int) -> None:
        """The server closed a connection after ``served`` answers, between answers; once
        it has shown that it closes after every answer, no connection is kept."""
        if self.stats.closed_while_idle(served):
            for other in self.idle:
                other.abandon()
            self.idle.clear()

    async def connect(self) -> Connection:
        """Open a new connection; raises OSError or TimeoutError."""
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout_s):
            if self.kernel_stamps:
                proto = await _stamped.open_connection(loop, lambda: Connection(self),
                                                       self.host, self.port)
            else:
                _, proto = await loop.create_connection(
                    lambda: Connection(self), self.host, self.port, ssl=self.ssl,
                    server_hostname=self.host if self.ssl else None)
        self.stats.connects += 1
        return proto

    def close(self) -> None:
        for conn in list(self.all):
            conn.abandon()
        self.idle.clear()
        self.all.clear()


class NativeTransport:
    """The ``native`` transport (:class:`~acceval.targets.transport.Transport`): a
    :class:`Pool`, with each request's head formatted from bytes built once per request
    kind."""

    name: ClassVar[str] = "native"

    def __init__(self, url: str, *, connect_timeout_s: float, max_body_bytes: int,
                 kernel_stamps: bool = False) -> None:
        self._pool = Pool(url, connect_timeout_s=connect_timeout_s,
                          max_body_bytes=max_body_bytes, kernel_stamps=kernel_stamps)
        self.stats = self._pool.stats
        self._heads: dict[Request, bytes] = {}

    def __repr__(self) -> str:
        return f"NativeTransport({self._pool.host_header!r})"

    def ready(self) -> bool:
        return self._pool.has_idle()

    def _static(self, request: Request) -> bytes:
        lines = [f"{request.method} {request.path} HTTP/1.1", f"Host: {self._pool.host_header}"]
        lines += [f"{k}: {v}" for k, v in request.headers]
        return ("\r\n".join(lines) + "\r\n").encode("latin-1")

    def _head(self, request: Request) -> bytes:
        head = (self._static(request).replace(b"%", b"%%")
                + b"Content-Length: %d\r\nX-Request-Id: %d\r\n\r\n")
        self._heads[request] = head
        return head

    def _plain(self, request: Request, body: bytes) -> bytes:
        """A request without an id (probes): not worth a cached head."""
        length = b"Content-Length: %d\r\n" % len(body) if body else b""
        return self._static(request) + length + b"\r\n" + body

    async def handle(self, request: Request, body: bytes, request_id: int | None,
                     consumer: Consumer, deadline: float) -> None:
        if request_id is not None:
            head = self._heads.get(request) or self._head(request)
            wire = head % (len(body), request_id) + body
        else:
            wire = self._plain(request, body)
        pool = self._pool
        # The connection is chosen before the send is stamped: checking an idle one at its
        # socket is a system call, during which another thread (the records writer) may take
        # the interpreter for a while. That is the client's time, not the target's, so it
        # must not fall inside TTFT. (A new connection's connect time does: a user waits it.)
        conn = pool.take_idle()
        consumer.sent(_now())
        loop = asyncio.get_running_loop()
        for _ in range(2):
            if conn is None:
                conn = await self._connect(consumer)
                if conn is None:
                    return
            waiter: asyncio.Future[bool] = loop.create_future()
            timer = loop.call_at(deadline, conn.time_out)
            try:
                conn.start(wire, consumer, waiter)
                resend = await waiter
            except asyncio.CancelledError:
                conn.abandon()
                raise
            except Exception as exc:  # a bug in parsing must not crash the run
                conn.abandon()
                consumer.lost(conn.got_bytes, f"client error: {exc!r}", exc, _now())
                return
            finally:
                timer.cancel()
            if not resend:
                return
            # The resend takes a fresh connection: the other idle ones may be just as dead
            # (a server restart closes them all).
            self.stats.resends += 1
            pool.closed_while_idle(conn.requests - 1)
            conn = None

    async def _connect(self, consumer: Consumer) -> Connection | None:
        try:
            return await self._pool.connect()
        except TimeoutError:
            consumer.lost(False, f"connect timed out after {self._pool.connect_timeout_s:g} s",
                          ConnectFailed(), _now())
        except OSError as exc:
            why = exc.strerror or str(exc)
            if exc.errno in CLIENT_ERRNOS:
                consumer.lost(False, f"client cannot open a connection: {why} (raise ulimit -n, "
                              "or lower the concurrency)", ClientLimit(), _now())
            else:
                consumer.lost(False, f"cannot connect: {why}", ConnectFailed(), _now())
        return None

    async def close(self) -> None:
        self._pool.close()
