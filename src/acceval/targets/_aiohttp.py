"""The ``aiohttp`` transport: the same requests through aiohttp's client, a maintained library.

It is the check on the native client (both run the same conformance suite and agree per
request, docs/transports.md) and the fallback should the native one's edge in CPU per request
ever stop paying for its upkeep. It honours the same limits: ``connect_timeout_s`` bounds the
TCP connect and TLS handshake, the deadline the whole exchange, ``max_body_bytes`` the body
(counted as it arrives, a Content-Length over it refused before any body byte), and an idle
connection is checked at its socket before it carries a request (aiohttp itself reuses a
connection whose FIN the event loop has not read yet; llama.cpp's server closes after every
streamed answer, and such a request is a wasted send).

The send is stamped in the connector, where the native transport stamps it (after the idle
connection's check, before a new connection's connect). The answer's stamps are taken when
aiohttp hands the data over: the head when ``session.request`` returns, each body piece when
``iter_any`` yields it, one wake-up of the request's coroutine after the network read that
the native transport stamps.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import weakref
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp
from aiohttp import http_exceptions
from yarl import URL

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

_now = time.perf_counter_ns


@dataclass(slots=True)
class _Attempt:
    """One send as the connector sees it, through a context variable (the connector runs in
    the request's own task)."""

    consumer: Consumer | None   # still to be told ``sent`` (the first send only)
    served: int = 0             # answers its connection had served before (0: a fresh one)

    def stamp(self, now: int) -> None:
        if self.consumer is not None:
            self.consumer.sent(now)
            self.consumer = None


_ATTEMPT: contextvars.ContextVar[_Attempt | None] = contextvars.ContextVar("acceval_attempt",
                                                                          default=None)
_MAX_HEAD = 65536  # a header line, as the native client's whole head


class _CheckedConnector(aiohttp.TCPConnector):
    """aiohttp's pool with the native client's rule: an idle connection is checked at its
    socket before it is reused, and none is reused once the server has shown that it closes
    after every answer."""

    def __init__(self, stats: TransportStats, tls: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stats = stats
        self._tls = tls
        self._served: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    async def connect(self, req: Any, traces: Any, timeout: Any) -> aiohttp.connector.Connection:
        # The send is stamped here, as the native transport stamps it: after an idle
        # connection was chosen and checked (the check's system call is the client's time,
        # not the server's), before a new connection's connect (a user waits for that).
        attempt = _ATTEMPT.get()
        stats = self._stats
        t = _now()
        while True:
            try:
                conn = await super().connect(req, traces, timeout)
            except BaseException:
                if attempt is not None:
                    attempt.stamp(t)
                raise
            proto = conn.protocol
            served = self._served.get(proto, 0) if proto is not None else 0
            if served and self._not_to_reuse(proto, served):
                conn.close()
                t = _now()
                continue
            if served:
                t = _now()
            else:
                stats.connects += 1
            if proto is not None:
                self._served[proto] = served + 1
            if attempt is not None:
                attempt.served = served
                attempt.stamp(t)
            return conn

    def _not_to_reuse(self, proto: Any, served: int) -> bool:
        """Reuse is off for this server, or its socket shows the server's FIN."""
        stats = self._stats
        if not stats.reuse:
            return True
        transport = proto.transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is None or not peer_closed(sock.fileno(), self._tls):
            return False
        stats.stale_found += 1
        stats.closed_while_idle(served)
        return True


def _cause(exc: BaseException) -> http_exceptions.HttpProcessingError | None:
    """The HTTP parser's error behind an aiohttp exception, if one is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, http_exceptions.HttpProcessingError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _text(message: object) -> str:
    return " ".join(str(message).split())  # aiohttp's parser messages span lines


def _unstick(content: aiohttp.StreamReader, proto: Any, _: object) -> None:
    """The connection closed while the body was read. aiohttp's C parser (3.14) drops a
    framing error found after the head without telling the body's reader, which then waits
    until the deadline; the error is handed to the reader here instead."""
    if content.is_eof() or content.exception() is not None:
        return
    cause = proto.exception()
    exc = aiohttp.ClientPayloadError(f"Response payload is not completed: {cause!r}")
    if cause is not None:
        content.set_exception(exc, cause)
    else:
        content.set_exception(exc)


class AiohttpTransport:
    """The ``aiohttp`` transport (:class:`~acceval.targets.transport.Transport`)."""

    name: ClassVar[str] = "aiohttp"

    def __init__(self, url: str, *, connect_timeout_s: float, max_body_bytes: int) -> None:
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"unsupported URL {url!r}")
        self._origin = f"{u.scheme}://{u.netloc}"
        self._ssl = tls_context(u.scheme)
        self.connect_timeout_s = connect_timeout_s
        self.max_body_bytes = max_body_bytes
        self.stats = TransportStats()
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[Request, URL] = {}
        self._headers: dict[Request, dict[str, str]] = {}

    def __repr__(self) -> str:
        return f"AiohttpTransport({self._origin!r})"

    def ready(self) -> bool:
        return False  # its first step enters asyncio.timeout: never started eagerly

    def _open(self) -> aiohttp.ClientSession:
        connector = _CheckedConnector(
            self.stats, self._ssl is not None, limit=0, limit_per_host=0,
            keepalive_timeout=None, ssl=self._ssl if self._ssl is not None else True)
        # sock_connect bounds the TCP connect and the TLS handshake, like the native
        # transport's connect timeout; no rounding up of timeouts (ceil_threshold).
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout_s,
                                        ceil_threshold=float("inf"))
        # As on the wire of the native transport: no compression asked for, no cookies kept
        # between requests, no redirect followed (the request below).
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=timeout, auto_decompress=False,
            skip_auto_headers=("Accept-Encoding", "User-Agent"),
            cookie_jar=aiohttp.DummyCookieJar(),
            max_line_size=_MAX_HEAD, max_field_size=_MAX_HEAD)
        return self._session

    def _prepare(self, request: Request) -> tuple[URL, dict[str, str]]:
        url = self._urls[request] = URL(self._origin + request.path, encoded=True)
        headers = self._headers[request] = dict(request.headers)
        return url, headers

    async def handle(self, request: Request, body: bytes, request_id: int | None,
                     consumer: Consumer, deadline: float) -> None:
        session = self._session or self._open()
        url = self._urls.get(request)
        headers = self._headers.get(request)
        if url is None or headers is None:
            url, headers = self._prepare(request)
        if request_id is not None:
            headers = {**headers, "X-Request-Id": str(request_id)}
        attempt = _Attempt(consumer)
        for n in range(2):
            again = await self._once(session, request.method, url, headers, body or None,
                                     consumer, deadline, attempt, may_resend=n == 0)
            if not again:
                return
            self.stats.resends += 1

    async def _once(self, session: aiohttp.ClientSession, method: str, url: URL,
                    headers: dict[str, str], body: bytes | None, consumer: Consumer,
                    deadline: float, attempt: _Attempt, *, may_resend: bool) -> bool:
        """One send; True when a reused connection turned out closed before any answer."""
        attempt.served = 0
        _ATTEMPT.set(attempt)
        got_head = False
        try:
            async with asyncio.timeout_at(deadline):
                try:
                    try:
                        resp = await session.request(method, url, data=body, headers=headers,
                                                     allow_redirects=False)
                    finally:
                        attempt.stamp(_now())  # when aiohttp failed before its connector
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                    if isinstance(exc, aiohttp.ClientConnectorError):
                        raise
                    served = attempt.served
                    # Only a clean close of an idle connection is sent again: after a reset
                    # (ClientOSError) the server may have taken the request already.
                    clean = isinstance(exc, aiohttp.ServerDisconnectedError)
                    if served and may_resend and clean:
                        self.stats.closed_while_idle(served)
                        return True
                    detail = ("connection closed by the server"
                              if isinstance(exc, aiohttp.ServerDisconnectedError)
                              else f"connection lost: {_text(exc)}")
                    consumer.lost(False, detail, None, _now())
                    return False
                got_head = True
                await self._read(resp, consumer)
        except StopExchange:
            pass
        except aiohttp.ConnectionTimeoutError:
            consumer.lost(False, f"connect timed out after {self.connect_timeout_s:g} s",
                          ConnectFailed(), _now())
        except TimeoutError:
            consumer.lost(got_head, "deadline passed", TimedOut(), _now())
        except aiohttp.ClientConnectorError as exc:
            self._no_connection(exc, consumer)
        except aiohttp.ClientResponseError as exc:  # the head breaks HTTP/1.1
            consumer.lost(True, f"bad HTTP response: {_text(exc.message)}",
                          ProtocolError(_text(exc.message)), _now())
        except ResponseTooLarge as exc:
            consumer.lost(True, str(exc), exc, _now())
        except aiohttp.ClientPayloadError as exc:
            self._cut(exc, consumer, chunked=resp.content_length is None)
        except aiohttp.ClientError as exc:
            consumer.lost(got_head, f"connection lost: {_text(exc)}", None, _now())
        except Exception as exc:  # a consumer's bug ends its exchange
            consumer.lost(True, f"client error: {exc!r}", exc, _now())
        return False

    async def _read(self, resp: aiohttp.ClientResponse, consumer: Consumer) -> None:
        """Hand the response to ``consumer``; whatever goes wrong closes its connection."""
        now = _now()
        conn = resp.connection
        proto = conn.protocol if conn is not None else None
        closed = proto.closed if proto is not None else None
        unstick = partial(_unstick, resp.content, proto)
        if closed is not None:
            closed.add_done_callback(unstick)
        try:
            headers: dict[str, str] = {}
            for k, v in resp.raw_headers:
                name, value = k.decode("latin-1").lower(), v.decode("latin-1")
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
            limit = self.max_body_bytes
            consumer.head(resp.status, headers, now)
            length = resp.content_length
            if length is not None and length > limit:
                raise ResponseTooLarge(f"response body over the limit of {limit:,} bytes")
            got = 0
            async for data in resp.content.iter_any():
                now = _now()
                got += len(data)
                if got > limit:
                    raise ResponseTooLarge(f"response body over the limit of {limit:,} bytes")
                consumer.body(data, now)
            now = _now()
        except BaseException:
            resp.close()
            raise
        finally:
            if closed is not None:
                closed.remove_done_callback(unstick)
        if self.stats.reuse:
            resp.release()
        else:
            resp.close()
        consumer.end(now)

    def _no_connection(self, exc: aiohttp.ClientConnectorError, consumer: Consumer) -> None:
        os_error = getattr(exc, "os_error", None)
        why = (getattr(os_error, "strerror", None) or str(os_error or exc))
        if getattr(os_error, "errno", None) in CLIENT_ERRNOS:
            consumer.lost(False, f"client cannot open a connection: {why} (raise ulimit -n, "
                          "or lower the concurrency)", ClientLimit(), _now())
        else:
            consumer.lost(False, f"cannot connect: {why}", ConnectFailed(), _now())

    @staticmethod
    def _cut(exc: aiohttp.ClientPayloadError, consumer: Consumer, *, chunked: bool) -> None:
        """The body ended early (a cut stream) or broke its framing (a bad chunk)."""
        cause = _cause(exc)
        if cause is not None and "Not enough data" not in cause.message:
            consumer.lost(True, f"bad HTTP response: {_text(cause.message)}",
                          ProtocolError(_text(cause.message)), _now())
            return
        where = "inside the chunked body" if chunked else "inside the Content-Length body"
        consumer.lost(True, f"connection closed by the server {where}", None, _now())

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
