"""A tiny, fast OpenAI-compatible SSE server for client tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length request bodies, chunked
responses) on raw asyncio protocols so that it is never the bottleneck of a client benchmark.
It records ground truth per ``X-Request-Id``: when the request's first bytes arrived and
when the first content chunk was written, both ``time.perf_counter_ns()`` (CLOCK_MONOTONIC,
comparable with the client's stamps in the same host). Write stamps are taken just before the
write: the kernel stamps a loopback segment's arrival inside it, and the native transport
can stamp answers with that arrival time (``receive_stamps: kernel``).

Faults are chosen per request by a prompt starting with ``fault:<name>`` (or for every
request with ``fault=``): ``reset`` (abort mid-stream), ``close`` (close before any
response), ``http500``, ``http429`` (with ``Retry-After: 1``), ``http503`` (with a
``Retry-After`` HTTP date 30 s ahead), ``malformed`` (a non-JSON event), ``badshape`` (JSON
without ``choices``), ``nodone`` (stream ends with no finish_reason and no [DONE]),
``hang`` (never answer), ``errorevent`` (an ``{"error": ...}`` event mid-stream),
``json`` (answer a streaming request with a plain JSON body), ``nousage`` (no usage chunk).
Broken HTTP: ``badstatus`` (a status line without a code), ``garbage`` (not HTTP at all),
``badheader`` (a header line without a colon), ``badchunk`` (a chunk size that is not hex),
``badlength`` (a Content-Length that is not a number), ``truncated`` (the connection closes
inside a Content-Length body), ``badchunk_late`` (the head, then a bad chunk size in a later
read), ``redirect`` (a 307 with a cookie). Big bodies, written under flow control so the
server never holds them: ``big`` (``big_bytes`` of chunked SSE comment lines), ``biglength``
(a JSON body of ``big_bytes`` announced by its Content-Length).
``drop_reused_once`` closes, unanswered, the first request that arrives on a reused
connection (what a server's keep-alive timeout looks like to a client);
``reset_reused_once`` resets it instead (RST: the server took the request, then failed).
``busy_first = n`` answers the first n completion requests 503 with ``Retry-After: <retry_after>``.

Framing and connections (answers without a fault): ``connection_close`` says
``Connection: close`` on every answer and closes; ``until_close`` streams without chunked
framing or Content-Length and ends the body by closing; ``close_after_stream`` closes after
each streamed answer while advertising keep-alive (llama.cpp's server), and
``half_close_after_stream`` only shuts its side (a FIN) and keeps reading, so that a request
a client writes on such a connection is counted (``stats.late_requests``). Pass an
``ssl.SSLContext`` to serve TLS.

Run standalone (a separate process for benchmarks): ``python tests/helpers/sse_server.py
--port 0 --tokens 16``; it prints ``PORT <n>`` and serves ``GET /_truth`` as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import json
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

_REASONS = {200: b"OK", 307: b"Temporary Redirect", 404: b"Not Found",
            429: b"Too Many Requests", 500: b"Internal Error", 503: b"Service Unavailable"}
# Responses that break HTTP/1.1, each with a body a lenient parser would take as an answer.
_BROKEN = {
    "badstatus": b"HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    "garbage": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "badheader": b"HTTP/1.1 200 OK\r\nContent-Type application/json\r\n\r\n",
    "badchunk": (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\nzz\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"),
    "badlength": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 12abc\r\n\r\n{}"),
}


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


@dataclass
class ServerConfig:
    tokens: int = 16
    ttft_s: float = 0.0
    itl_s: float = 0.0
    coalesce: bool = False       # itl 0: write the whole stream in one write (else one per event)
    fault: str | None = None
    model: str = "mock-model"
    record_truth: bool = True
    drop_reused_once: bool = False  # close (no answer) the first request on a reused connection
    reset_reused_once: bool = False  # the same with a reset (RST): the request was taken
    big_bytes: int = 100 * 2**20    # the body size of the ``big`` faults
    busy_first: int = 0             # answer this many completion requests 503 first
    retry_after: str = "0"          # the Retry-After of those 503s
    # Close the connection after each streamed answer, while advertising keep-alive (no
    # Connection: close), as llama.cpp's server does.
    close_after_stream: bool = False
    half_close_after_stream: bool = False   # FIN after each streamed answer, keep reading
    connection_close: bool = False          # "Connection: close" on every answer, then close
    until_close: bool = False               # streamed bodies end by closing (no framing)
    # Say how many prompt tokens the prefix cache held: OpenAI's usage field ("usage") or
    # llama.cpp's timings.cache_n ("timings"); None says nothing.
    cached_tokens: int | None = None
    cached_as: str = "usage"
    # End each answer as vLLM does when it stops on the end-of-sequence token: the finish
    # chunk says "stop" and usage counts one token more than the text chunks sent.
    count_eos: bool = False
    # GET /metrics: the text this returns for the number of streamed answers written so far
    # (a recorded server page per phase of a test); None: no /metrics (404).
    metrics: Callable[[int], str] | None = None


@dataclass
class Truth:
    recv_ns: int
    first_token_ns: int | None = None
    done_ns: int | None = None          # the answer's last bytes written
    tokens: int | None = None           # content events sent


@dataclass
class _Stats:
    requests: int = 0
    connections: int = 0
    late_requests: int = 0     # request bytes that arrived after this side's FIN
    answered: int = 0          # streamed answers written in full
    truth: dict[str, Truth] = field(default_factory=dict)
    last_headers: dict[str, str] = field(default_factory=dict)
    last_body: dict[str, Any] = field(default_factory=dict)


class _Conn(asyncio.Protocol):
    def __init__(self, server: SSEServer) -> None:
        self.s = server
        self.buf = b""
        self.recv_ns: int | None = None
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None   # one request at a time per connection
        self.handled = 0
        self.paused = False
        self.pump: Callable[[], None] | None = None     # writes more of a big body when resumed
        self.fin_sent = False                           # half_close_after_stream shut our side

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s.conns.add(self)
        self.s.stats.connections += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.s.conns.discard(self)
        self.pump = None
        if self.timer is not None:
            self.timer.cancel()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if self.pump is not None:
            self.pump()

    def data_received(self, data: bytes) -> None:
        if self.fin_sent:
            # A request on a connection this side had closed: a client that did not check
            # its idle connection. Counted, and the connection goes.
            self.s.stats.late_requests += 1
            if self.transport is not None:
                self.transport.close()
            return
        if self.recv_ns is None:
            self.recv_ns = time.perf_counter_ns()
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in head[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers.get("content-length", "0"))
            if len(self.buf) < end + 4 + n:
                return
            body = self.buf[end + 4 : end + 4 + n]
            self.buf = self.buf[end + 4 + n :]
            recv_ns = self.recv_ns
            self.recv_ns = time.perf_counter_ns() if self.buf else None
            method, path, _ = head[0].split(" ", 2)
            self.handled += 1
            self.s.handle(self, method, path, headers, body, recv_ns)


class SSEServer:
    def __init__(self, config: ServerConfig | None = None, *, port: int = 0,
                 ssl: Any = None) -> None:
        self.config = config or ServerConfig()
        self.port = port
        self.ssl = ssl
        self.conns: set[_Conn] = set()
        self.stats = _Stats()
        self._server: asyncio.base_events.Server | None = None
        self._pre: dict[tuple[bool, int], bytes] = {}

    @property
    def base_url(self) -> str:
        scheme = "https" if self.ssl is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    async def start(self) -> SSEServer:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Conn(self), "127.0.0.1", self.port,
                                                backlog=4096, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for c in list(self.conns):
                if c.transport is not None:
                    c.transport.abort()
            await self._server.wait_closed()

    async def __aenter__(self) -> SSEServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- responses --------------------------------------------------------------------------

    def _event(self, chat: bool, i: int) -> bytes:
        key = (chat, i)
        ev = self._pre.get(key)
        if ev is None:
            text = f" t{i}"
            if chat:
                obj: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk",
                                       "model": self.config.model,
                                       "choices": [{"index": 0, "delta": {"content": text},
                                                    "finish_reason": None}]}
            else:
                obj = {"id": "c1", "object": "text_completion", "model": self.config.model,
                       "choices": [{"index": 0, "text": text, "finish_reason": None}]}
            ev = self._frame(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self._pre[key] = ev
        return ev

    def _frame(self, payload: bytes) -> bytes:
        return payload if self.config.until_close else _chunk(payload)

    def _tail(self, chat: bool, n: int, usage: bool, finish: bool = True) -> bytes:
        out = b""
        if finish:
            choice: dict[str, Any] = {"index": 0, "finish_reason":
                                      "stop" if self.config.count_eos else "length"}
            choice["delta" if chat else "text"] = {} if chat else ""
            n += self.config.count_eos
            out += self._frame(b"data: " + json.dumps({"choices": [choice]}).encode()
                               + b"\n\n")
        if usage:
            u: dict[str, Any] = {"choices": [], "usage": {
                "prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}}
            cached = self.config.cached_tokens
            if cached is not None and self.config.cached_as == "usage":
                u["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
            elif cached is not None:
                u["timings"] = {"cache_n": cached, "prompt_n": 5 - cached}
            out += self._frame(b"data: " + json.dumps(u).encode() + b"\n\n")
        if finish:
            out += self._frame(b"data: [DONE]\n\n")
        return out if self.config.until_close else out + b"0\r\n\r\n"

    def _ended(self, conn: _Conn, truth: Truth | None, tokens: int, done_ns: int) -> None:
        """A streamed answer is written (its last write began at ``done_ns``): log it, and
        close as the config says."""
        self.stats.answered += 1
        if truth is not None:
            truth.done_ns = done_ns
            truth.tokens = tokens
        t = conn.transport
        assert t is not None
        cfg = self.config
        if cfg.close_after_stream or cfg.until_close or cfg.connection_close:
            t.close()
        elif cfg.half_close_after_stream:
            conn.fin_sent = True
            t.write_eof()

    def _simple(self, conn: _Conn, status: int, body: bytes,
                ctype: bytes = b"application/json", extra: bytes = b"") -> None:
        assert conn.transport is not None
        if self.config.connection_close:
            extra += b"Connection: close\r\n"
        conn.transport.write(
            b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n%s"
            % (status, _REASONS.get(status, b"X"), ctype, len(body), extra, body))
        if self.config.connection_close:
            conn.transport.close()

    def handle(self, conn: _Conn, method: str, path: str, headers: dict[str, str],
               body: bytes, recv_ns: int | None) -> None:
        self.stats.requests += 1
        if method == "GET":
            if path == "/v1/models":
                data = {"object": "list", "data": [{"id": self.config.model, "object": "model"}]}
                self._simple(conn, 200, json.dumps(data).encode())
            elif path == "/metrics" and self.config.metrics is not None:
                self._simple(conn, 200, self.config.metrics(self.stats.answered).encode(),
                             b"text/plain; version=0.0.4")
            elif path == "/version":
                self._simple(conn, 200, b'{"version": "sse-test-0"}')
            elif path == "/_truth":
                t = {k: [v.recv_ns, v.first_token_ns] for k, v in self.stats.truth.items()}
                self._simple(conn, 200, json.dumps(t).encode())
            else:
                self._simple(conn, 404, b'{"error": "not found"}')
            return
        req = json.loads(body)
        self.stats.last_headers = headers
        self.stats.last_body = req
        chat = path.endswith("/chat/completions")
        prompt = req["messages"][-1]["content"] if chat else req["prompt"]
        fault = self.config.fault
        if isinstance(prompt, str) and prompt.startswith("fault:"):
            fault = prompt[6:]
        n = int(req.get("max_tokens", self.config.tokens) or self.config.tokens)
        n = min(n, self.config.tokens)
        rid = headers.get("x-request-id", "")
        truth = None
        if self.config.record_truth and recv_ns is not None:
            truth = self.stats.truth[rid] = Truth(recv_ns)
        if self.config.drop_reused_once and conn.handled == 2:
            self.config.drop_reused_once = False
            fault = "close"
        if self.config.reset_reused_once and conn.handled == 2:
            self.config.reset_reused_once = False
            assert conn.transport is not None
            sock = conn.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.transport.abort()
            return
        if fault == "hang":
            return
        if fault in _BROKEN or fault == "truncated":
            assert conn.transport is not None
            conn.transport.write(_BROKEN.get(fault) or b"HTTP/1.1 200 OK\r\nContent-Type: "
                                 b"application/json\r\nContent-Length: 100\r\n\r\n{\"choi")
            conn.transport.close()
            return
        if fault == "badchunk_late":
            # The head, then a broken chunk in a later read, then the close.
            t = conn.transport
            assert t is not None
            t.write(_BROKEN["badchunk"][:_BROKEN["badchunk"].index(b"\r\n\r\n") + 4])

            def rest() -> None:
                if not t.is_closing():
                    t.write(b"zz\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
                    t.close()

            conn.timer = asyncio.get_running_loop().call_later(0.02, rest)
            return
        if fault in ("big", "biglength"):
            self._big(conn, fault == "big")
            return
        if fault == "close":
            assert conn.transport is not None
            conn.transport.close()
            return
        if fault == "redirect":  # with a cookie: a client must neither follow nor keep it
            self._simple(conn, 307, b"", extra=b"Location: /v1/elsewhere\r\n"
                         b"Set-Cookie: session=1; Path=/\r\n")
            return
        if self.config.busy_first > 0:
            self.config.busy_first -= 1
            self._simple(conn, 503, b'{"error": {"message": "busy"}}',
                         extra=b"Retry-After: %s\r\n" % self.config.retry_after.encode())
            return
        if fault in ("http500", "http429", "http503"):
            status = int(fault[4:])
            extra = b""
            if status == 429:
                extra = b"Retry-After: 1\r\n"
            elif status == 503:
                when = email.utils.formatdate(time.time() + 30, usegmt=True)
                extra = b"Retry-After: %s\r\n" % when.encode()
            self._simple(conn, status, b'{"error": {"message": "injected %d"}}' % status,
                         extra=extra)
            return
        stream = bool(req.get("stream"))
        usage = bool((req.get("stream_options") or {}).get("include_usage"))
        usage = usage and fault != "nousage"
        if not stream or fault == "json":
            text = "".join(f" t{i}" for i in range(n))
            choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            out = {"choices": [choice],
                   "usage": {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}}
            if truth is not None:   # one write: both stamps before it
                truth.first_token_ns = truth.done_ns = time.perf_counter_ns()
                truth.tokens = n
            self._simple(conn, 200, json.dumps(out).encode())
            return
        loop = asyncio.get_running_loop()
        delay = self.config.ttft_s
        if delay > 0:
            conn.timer = loop.call_later(delay, self._stream, conn, chat, n, usage, fault, truth)
        else:
            self._stream(conn, chat, n, usage, fault, truth)

    def _big(self, conn: _Conn, chunked: bool) -> None:
        t = conn.transport
        assert t is not None
        size = self.config.big_bytes
        if chunked:
            t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n")
            line = b": " + b"x" * 65533 + b"\n"
            piece = _chunk(line)
        else:
            t.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n" % size)
            piece = line = b" " * 65536
        left = size

        def pump() -> None:
            nonlocal left
            while left > 0 and not conn.paused and not t.is_closing():
                t.write(piece if left >= len(line) else (_chunk(line[:left]) if chunked
                                                         else line[:left]))
                left -= len(line)
            if left <= 0:
                conn.pump = None
                if chunked and not t.is_closing():
                    t.write(b"0\r\n\r\n")

        conn.pump = pump
        pump()

    def _stream(self, conn: _Conn, chat: bool, n: int, usage: bool, fault: str | None,
                truth: Truth | None) -> None:
        t = conn.transport
        if t is None or t.is_closing():
            return
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        if self.config.until_close:
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
        elif self.config.connection_close:
            head = head[:-2] + b"Connection: close\r\n\r\n"
        if fault == "malformed":
            t.write(head + self._event(chat, 0) + _chunk(b"data: {not json\n\n")
                    + self._tail(chat, n, usage))
            return
        if fault == "badshape":
            t.write(head + _chunk(b'data: {"nochoices": 1}\n\n') + self._tail(chat, n, usage))
            return
        if fault == "errorevent":
            t.write(head + self._event(chat, 0)
                    + _chunk(b'data: {"error": {"message": "engine died"}}\n\n')
                    + b"0\r\n\r\n")
            return
        if fault == "reset":
            t.write(head + self._event(chat, 0) + self._event(chat, 1))
            t.abort()
            return
        if fault == "nodone":
            if truth is not None:
                truth.first_token_ns = time.perf_counter_ns()
            t.write(head + b"".join(self._event(chat, i) for i in range(n))
                    + self._tail(chat, n, usage, finish=False))
            return
        itl = self.config.itl_s
        if itl <= 0:
            if truth is not None:
                truth.first_token_ns = time.perf_counter_ns()
            if self.config.coalesce:
                done = time.perf_counter_ns()
                t.write(head + b"".join(self._event(chat, i) for i in range(n))
                        + self._tail(chat, n, usage))
            else:
                t.write(head)
                for i in range(n):
                    t.write(self._event(chat, i))
                done = time.perf_counter_ns()
                t.write(self._tail(chat, n, usage))
            self._ended(conn, truth, n, done)
            return
        t.write(head)
        self._tick(conn, chat, n, usage, truth, 0, itl)

    def _tick(self, conn: _Conn, chat: bool, n: int, usage: bool, truth: Truth | None,
              i: int, itl: float) -> None:
        t = conn.transport
        if t is None or t.is_closing():
            return
        if i >= n:
            done = time.perf_counter_ns()
            t.write(self._tail(chat, n, usage))
            self._ended(conn, truth, n, done)
            return
        if i == 0 and truth is not None:
            truth.first_token_ns = time.perf_counter_ns()
        t.write(self._event(chat, i))
        conn.timer = asyncio.get_running_loop().call_later(itl, self._tick, conn, chat, n, usage,
                                                           truth, i + 1, itl)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--ttft-ms", type=float, default=0.0)
    ap.add_argument("--itl-ms", type=float, default=0.0)
    ap.add_argument("--coalesce", action="store_true")
    ap.add_argument("--no-truth", action="store_true")
    args = ap.parse_args()
    cfg = ServerConfig(tokens=args.tokens, ttft_s=args.ttft_ms / 1e3, itl_s=args.itl_ms / 1e3,
                       coalesce=args.coalesce, record_truth=not args.no_truth)

    async def serve() -> None:
        srv = await SSEServer(cfg, port=args.port).start()
        print(f"PORT {srv.port}", flush=True)
        await asyncio.Event().wait()

    try:
        import uvloop
        uvloop.run(serve())
    except ImportError:
        asyncio.run(serve())


if __name__ == "__main__":
    main()


#: What each request text of this server (and the mock engine's faults) ends as: the error
#: kind a client must classify it as (None: a good answer).
FAULT_KINDS: dict[str, str | None] = {
    "ok": None,
    "fault:http500": "http",
    "fault:http429": "http",
    "fault:http503": "http",
    "fault:malformed": "malformed",
    "fault:badshape": "malformed",
    "fault:reset": "stream_cut",
    "fault:nodone": "stream_cut",
    "fault:errorevent": "stream_cut",
    "fault:close": "connect",
    "fault:hang": "timeout",
    "fault:badstatus": "malformed",
    "fault:garbage": "malformed",
    "fault:badheader": "malformed",
    "fault:badchunk": "malformed",
    "fault:badlength": "malformed",
    "fault:truncated": "stream_cut",
    "fault:big": "too_large",
    "fault:biglength": "too_large",
    "fault:badchunk_late": "malformed",
    "fault:json": None,
    "fault:nousage": None,
}
