"""A minimal HTTP/1.1 server connection on ``asyncio.Protocol``: keep-alive, Content-Length
request bodies, chunked (or, for HTTP/1.0, close-delimited) streaming responses, and the
timeouts that close a connection whose client stops sending (never one whose response is
still going out).

Why not aiohttp.web: the mock server must out-run any client benchmark on the same 2 cores,
and a framework's per-request machinery costs more than the whole response here.

Writes are coalesced: everything a handler queues during one event-loop step goes out in
one ``transport.write`` (one HTTP chunk) at the end of the step. A response produced without
awaiting is then a single syscall, while a chunk produced after a sleep still leaves within
the same loop iteration. Content chunks are stamped with ``perf_counter_ns`` at that write.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from acceval.errors import UsageError
from acceval.serve._head import (
    MAX_HEAD_BYTES,
    HeadError,
    RequestHead,
    check_request_line,
    parse_head,
)

_REASONS = {
    100: "Continue", 200: "OK", 400: "Bad Request", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests", 431: "Request Header Fields Too Large",
    500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
}
_now_ns = time.perf_counter_ns
_log = logging.getLogger("acceval.serve")
# After an error answer, how long the request bytes still coming are read and dropped.
_LINGER_S = 2.0
# What a connection is waiting for: nothing from the client (a request is being answered),
# the first byte of the next request, the rest of a head, the rest of a body.
_ANSWERING, _IDLE, _HEAD, _BODY = range(4)


@dataclass(slots=True, frozen=True)
class HttpLimits:
    """How long a connection waits for its client's bytes before it is closed."""

    idle_timeout_s: float = 30.0
    """Between requests (and before the first), and between two reads of a body."""
    head_timeout_s: float = 10.0
    """From a request's first byte to the end of its head, however the bytes trickle in."""

    def __post_init__(self) -> None:
        for option, value in (("--idle-timeout", self.idle_timeout_s),
                              ("--head-timeout", self.head_timeout_s)):
            if not (math.isfinite(value) and value > 0):
                raise UsageError(f"{option} must be a positive number of seconds, not {value}")


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str
    http10: bool
    keep_alive: bool
    request_id: str | None
    body: bytes
    recv_ns: int


@dataclass(slots=True)
class Exchange:
    """One generation request's ground truth, filled as it is answered."""

    request_id: str
    endpoint: str
    recv_ns: int
    stream: bool = False
    status: int = 0
    first_chunk_ns: int | None = None
    chunk_ns: list[int] = field(default_factory=list)
    done_ns: int | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None     # of the prompt, held by the engine's prefix cache
    output_tokens: int = 0
    messages: int | None = None          # chat: messages in the request (a history's length)
    error_injected: str | None = None
    error: str | None = None
    task: asyncio.Task[None] | None = None
    logged: bool = False

    def log_entry(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id, "endpoint": self.endpoint, "stream": self.stream,
            "recv_ns": self.recv_ns, "first_chunk_ns": self.first_chunk_ns,
            "chunk_ns": self.chunk_ns, "done_ns": self.done_ns,
            "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
            "messages": self.messages, "status": self.status,
            "error_injected": self.error_injected, "error": self.error,
        }


class Handler(Protocol):
    def handle(self, conn: HttpConnection, req: HttpRequest) -> None: ...

    def finished(self, conn: HttpConnection, ex: Exchange | None) -> None: ...

    def connection_opened(self, conn: HttpConnection) -> None: ...

    def connection_closed(self, conn: HttpConnection) -> None: ...


class HttpConnection(asyncio.Protocol):
    """One client connection; answers one request at a time (pipelined ones wait their turn)."""

    def __init__(self, handler: Handler, loop: asyncio.AbstractEventLoop,
                 limits: HttpLimits) -> None:
        self._handler = handler
        self._loop = loop
        self._limits = limits
        self._transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._head: RequestHead | None = None
        self._scanned = 0               # bytes of ``_buf`` known to hold no head end
        self._line_checked = False      # the pending head's request line passed
        self._wait = _ANSWERING
        self._deadline = 0.0            # loop.time() by which the awaited bytes must come
        # One timer, re-armed lazily when it fires early: a request costs a clock read.
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._discard = False           # answered an error: drop what the client still sends
        self._busy = False
        self._exchange: Exchange | None = None
        self._keep_alive = True
        self._chunked = True
        self._streaming = False         # the current response is an event stream
        self._head_sent = False         # the current response's head is on the wire
        # Output queued during the current loop step.
        self._out_head: bytes | None = None
        self._out_events: list[str] = []
        self._out_content = 0
        self._out_end = False           # the response is complete after this flush
        self._out_close = False         # close the connection after this flush
        self._flush_scheduled = False
        self._paused = False
        self._drain: asyncio.Future[None] | None = None
        self.closed = False

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Small SSE chunks must not wait for Nagle's algorithm.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._handler.connection_opened(self)
        self._waiting(_IDLE)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._transport = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        ex = self._exchange
        if self._busy and ex is not None:
            if ex.task is not None and not ex.task.done():
                ex.task.cancel("client disconnected")
            else:
                self.abandon(ex, 499, "client disconnected")
        self._handler.connection_closed(self)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        self._drain = None

    def data_received(self, data: bytes) -> None:
        if self._discard:
            return
        self._buf += data
        if not self._busy:
            self._process()

    # -- waiting for the client ---------------------------------------------------------------

    def _waiting(self, state: int) -> None:
        """Enter ``state``; a wait starts its clock on entry (a body's on every read)."""
        if state == self._wait and state != _BODY:
            return
        self._wait = state
        if state == _ANSWERING:
            return
        limits = self._limits
        timeout = limits.head_timeout_s if state == _HEAD else limits.idle_timeout_s
        self._deadline = self._loop.time() + timeout
        if self._timer is None or self._deadline < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = self._deadline
            self._timer = self._loop.call_at(self._deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self.closed or self._wait == _ANSWERING:
            return  # the next wait arms a new timer
        if self._loop.time() < self._deadline:
            self._timer_at = self._deadline
            self._timer = self._loop.call_at(self._deadline, self._on_timer)
            return
        if self._wait == _IDLE:
            _log.debug("closing a connection idle for %g s", self._limits.idle_timeout_s)
            self.close()
        elif self._wait == _HEAD:
            self._fail(408, f"the request head did not arrive within "
                            f"{self._limits.head_timeout_s:g} s (--head-timeout)")
        else:
            self._fail(408, f"no byte of the request body came for "
                            f"{self._limits.idle_timeout_s:g} s (--idle-timeout)")

    # -- request parsing --------------------------------------------------------------------

    def _process(self) -> None:
        while not self._busy and not self.closed:
            head = self._head
            if head is None:
                head = self._read_head()
                if head is None:
                    return
            length = head.content_length
            if len(self._buf) < length:
                self._waiting(_BODY)
                return
            body = bytes(self._buf[:length])
            del self._buf[:length]
            self._head = None
            self._busy = True
            self._waiting(_ANSWERING)
            self._keep_alive = head.keep_alive
            self._chunked = not head.http10
            try:
                self._handler.handle(self, HttpRequest(
                    head.method, head.path, head.http10, head.keep_alive, head.request_id,
                    body, _now_ns()))
            except Exception:
                # A bug in a handler must not leave the connection hung with no answer.
                _log.exception("request handler failed")
                self._fail(500, "internal server error")

    def _read_head(self) -> RequestHead | None:
        """The next request's head, once it is all in (None until then, or after a failure)."""
        buf = self._buf
        while buf[:2] == b"\r\n":
            del buf[:2]  # empty lines before a request are ignored (RFC 9112 §2.2)
        if not buf:
            self._waiting(_IDLE)
            return None
        # The end must lie within the limit; searching no further keeps a flood cheap.
        end = buf.find(b"\r\n\r\n", self._scanned, MAX_HEAD_BYTES)
        try:
            if end < 0:
                if len(buf) >= MAX_HEAD_BYTES:
                    raise HeadError(431, f"the request head is larger than the limit of "
                                         f"{MAX_HEAD_BYTES // 1024} KiB ({MAX_HEAD_BYTES} "
                                         "bytes, request line and headers)")
                self._scanned = max(0, len(buf) - 3)
                if not self._line_checked:
                    # Garbage (a TLS hello, a stray protocol) is refused without waiting
                    # for a blank line that may never come.
                    eol = buf.find(b"\r\n", 0, MAX_HEAD_BYTES)
                    if eol >= 0:
                        check_request_line(bytes(buf[:eol]))
                        self._line_checked = True
                self._waiting(_HEAD)
                return None
            self._scanned = 0
            self._line_checked = False
            head = parse_head(bytes(buf[:end]))
        except HeadError as err:
            self._fail(err.status, err.message)
            return None
        del buf[: end + 4]
        self._head = head
        if (head.expect_continue and head.content_length > len(buf)
                and self._transport is not None):
            self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return head

    def _fail(self, status: int, message: str) -> None:
        """A protocol-level error: answer and close (the stream position is unknown)."""
        from acceval.serve._openai import error_body  # local: keeps this module standalone

        self._busy = True
        self._waiting(_ANSWERING)
        self._keep_alive = False
        self._chunked = True
        self._discard = True
        self.respond(status, error_body(message, kind="invalid_request_error", status=status))

    # -- responses ----------------------------------------------------------------------------

    @property
    def head_sent(self) -> bool:
        """Whether the status line went out (until then ``respond`` may replace a stream)."""
        return self._head_sent

    @property
    def paused(self) -> bool:
        return self._paused

    async def drain(self) -> None:
        if self._paused and not self.closed:
            if self._drain is None:
                self._drain = self._loop.create_future()
            await self._drain

    def _status_line(self, status: int, request_id: str | None) -> str:
        head = f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        if request_id is not None:
            head += f"X-Request-Id: {request_id}\r\n"
        if not self._keep_alive:
            head += "Connection: close\r\n"
        elif self._chunked is False:
            head += "Connection: keep-alive\r\n"
        return head

    def respond(self, status: int, body: bytes, *, content_type: str = "application/json",
                ex: Exchange | None = None, content: bool = False,
                declared_length: int | None = None, close: bool = False) -> None:
        """Queue a whole response. ``declared_length`` > len(body) plus ``close`` cuts it short."""
        if close:
            self._keep_alive = False
        rid = ex.request_id if ex is not None else None
        if ex is not None:
            ex.status = status
        self._exchange = ex
        length = len(body) if declared_length is None else declared_length
        head = (f"{self._status_line(status, rid)}Content-Type: {content_type}\r\n"
                f"Content-Length: {length}\r\n\r\n").encode("latin-1")
        self._out_head = head + body
        self._streaming = False
        self._head_sent = False
        self._out_events.clear()  # a stream that never went out is replaced, not appended to
        self._out_content = 1 if content else 0
        self._out_end = True
        self._schedule()

    def start_stream(self, ex: Exchange, status: int = 200) -> None:
        ex.status = status
        self._exchange = ex
        self._streaming = True
        self._head_sent = False
        if not self._chunked:
            self._keep_alive = False
        framing = "Transfer-Encoding: chunked\r\n" if self._chunked else ""
        self._out_head = (f"{self._status_line(status, ex.request_id)}"
                          f"Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                          f"{framing}\r\n").encode("latin-1")
        self._schedule()

    def event(self, text: str, content: bool) -> None:
        self._out_events.append(text)
        if content:
            self._out_content += 1
        self._schedule()

    def end_stream(self) -> None:
        self._out_end = True
        self._schedule()

    def break_stream(self) -> None:
        """End the response by closing the connection without a proper end (a cut stream)."""
        self._keep_alive = False
        self._out_end = True
        self._out_close = True
        self._schedule()

    def abandon(self, ex: Exchange, status: int, reason: str) -> None:
        """The exchange ends without its response (client gone, server shutting down)."""
        self._out_head = None
        self._out_events.clear()
        self._out_content = 0
        self._out_end = False
        if not ex.logged:
            ex.status = status
            ex.error = ex.error or reason
            ex.done_ns = _now_ns()
            self._handler.finished(self, ex)
        self._busy = False
        self._exchange = None
        if self._transport is not None:
            self._transport.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def current(self) -> Exchange | None:
        return self._exchange if self._busy else None

    def _schedule(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        transport = self._transport
        if transport is None:
            return
        out = self._out_head or b""
        if self._out_head is not None:
            self._head_sent = True
            self._out_head = None
        if self._out_events:
            payload = "".join(self._out_events).encode()
            self._out_events.clear()
            if self._chunked:
                out += b"%x\r\n%b\r\n" % (len(payload), payload)
            else:
                out += payload
        end = self._out_end
        if end and self._streaming and self._chunked and not self._out_close:
            out += b"0\r\n\r\n"
        # Stamped before the write: the kernel stamps a segment's arrival inside this write
        # (loopback), and a client that reads with those stamps (``receive_stamps: kernel``) must
        # never see its answer before the server's log says it was sent.
        now = _now_ns()
        if out:
            transport.write(out)
        ex = self._exchange
        if self._out_content and ex is not None:
            if ex.first_chunk_ns is None:
                ex.first_chunk_ns = now
            ex.chunk_ns.extend([now] * self._out_content)
        self._out_content = 0
        if not end:
            return
        self._out_end = False
        close = self._out_close or not self._keep_alive
        self._out_close = False
        if ex is not None:
            ex.done_ns = now
        self._busy = False
        self._exchange = None
        self._handler.finished(self, ex)
        if close:
            if self._discard:
                self._linger(transport)
            else:
                transport.close()
        else:
            self._process()

    def _linger(self, transport: asyncio.Transport) -> None:
        # Closing with request bytes unread makes the kernel reset the connection, and a
        # reset can destroy the error answer before the client reads it. So: end our side,
        # drop what still comes, and close when the client does (or after _LINGER_S).
        self._buf.clear()
        if transport.can_write_eof():
            transport.write_eof()
            self._loop.call_later(_LINGER_S, self.close)
        else:
            transport.close()
