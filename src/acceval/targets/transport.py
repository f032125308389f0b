"""The transport: how a target's requests reach a server and its answers come back.

A transport has one method that matters, :meth:`Transport.handle`, in the shape of httpx's
``BaseTransport.handle_request``: given a request, it delivers the response to a
:class:`Consumer` as events (``sent``, ``head``, ``body``, then exactly one of ``end`` or
``lost``), each stamped with ``perf_counter_ns`` where the transport saw it. Everything
about HTTP (what an answer means, the SSE events, the record) stays with the consumer.

Two implementations honour the same limits (connect timeout, request deadline,
``max_body_bytes``, keep-alive reuse with the idle-connection check, TLS with the system's
trust store): ``native``, acceval's own HTTP/1.1 client on asyncio protocols (the default,
for its CPU per request), and ``aiohttp``, a maintained library, which checks the other
(docs/transports.md). Failures reach ``lost`` as one of the problem types below, so both
classify them alike.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import select
import ssl
from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Literal, Protocol, get_args

from pydantic import AfterValidator

from acceval.errors import TargetError

TransportName = Literal["native", "aiohttp"]
TRANSPORTS: tuple[str, ...] = get_args(TransportName)
DEFAULT_TRANSPORT: TransportName = "native"
# Where each implementation lives, imported only when a target asks for it.
_IMPLEMENTATIONS = {
    "native": ("acceval.targets._http", "NativeTransport", None),
    "aiohttp": ("acceval.targets._aiohttp", "AiohttpTransport", "aiohttp"),
}
# Failures of this host, not of the target (a descriptor or memory limit of the client).
CLIENT_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})


class Consumer:
    """Receives one response. Callbacks may run inside the event loop's I/O callback: keep
    them short.

    ``now`` is an absolute ``perf_counter_ns``: for the native transport, when the read was
    made, or with ``receive_stamps: kernel`` when the kernel received the read's data
    (:mod:`acceval.targets._stamped`); for aiohttp when the library handed the data over.
    ``sent`` comes first, on every :meth:`Transport.handle` call; then exactly one of ``end``
    or ``lost``, unless the consumer itself stopped the exchange by raising
    :class:`StopExchange`.
    """

    __slots__ = ()

    def sent(self, now: int) -> None:
        """The request is about to leave (a new connection's connect time follows)."""

    def head(self, status: int, headers: dict[str, str], now: int) -> None:
        """Status line and headers are complete (names lower-case, repeats joined by ", ")."""

    def body(self, data: bytes, now: int) -> None:
        """Body payload (de-chunked), in arrival order."""

    def end(self, now: int) -> None:
        """The response is complete (its connection is already back in the pool)."""

    def lost(self, got_bytes: bool, detail: str, problem: Exception | None, now: int) -> None:
        """The response did not end well. ``problem`` is None when the connection closed
        before ``end`` (``got_bytes``: after some of the response), a :class:`ProtocolError`
        (or :class:`ResponseTooLarge`) when the response could not be parsed or was too
        large, :class:`ConnectFailed` or :class:`ClientLimit` when no connection could be
        had, :class:`TimedOut` at the deadline, any other exception when one of this
        consumer's callbacks raised it (a bug on the client's side)."""


class StopExchange(Exception):
    """Raised by a consumer callback that has seen enough (it recorded why): the transport
    closes the connection and calls nothing more."""


class ProtocolError(Exception):
    """The response breaks HTTP/1.1: status line, headers, chunk framing, Content-Length."""


class ResponseTooLarge(ProtocolError):
    """The response body is larger than the transport's ``max_body_bytes``."""


class ConnectFailed(Exception):
    """No connection: refused, unreachable, a TLS handshake that failed, or the connect
    timeout."""


class ClientLimit(Exception):
    """No connection because this host ran out of descriptors or memory (not the target's
    fault)."""


class TimedOut(Exception):
    """The request's deadline passed before its response ended."""


@dataclass(frozen=True, slots=True, eq=False)
class Request:
    """What a target sends, less the body and the request id: built once per target and
    path. ``headers`` are sent in order after ``Host``; ``Content-Length`` and
    ``X-Request-Id`` are the transport's to write."""

    method: str
    path: str                                                   # e.g. /v1/completions
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold a key


@dataclass(slots=True)
class TransportStats:
    """What a transport's connections did, and what it learnt of the server."""

    connects: int = 0
    stale_found: int = 0    # idle connections found closed by the server before reuse
    resends: int = 0        # requests written on a connection the server had closed
    # False once the server has shown it closes every connection after one answer
    # (llama.cpp's server does, while it advertises keep-alive): each request then takes a
    # fresh connection instead of racing the server's FIN.
    reuse: bool = True
    closed_after_one: int = 0

    def closed_while_idle(self, served: int) -> bool:
        """The server closed a connection after ``served`` answers, between answers; twice
        after a single answer each, and connections are no longer kept for reuse. True when
        this call turned reuse off."""
        if served != 1 or not self.reuse:
            return False
        self.closed_after_one += 1
        if self.closed_after_one >= 2:
            self.reuse = False
            return True
        return False


class Transport(Protocol):
    """Requests to one origin (scheme, host, port), over kept-alive connections."""

    name: ClassVar[str]
    stats: TransportStats

    def ready(self) -> bool:
        """True when :meth:`handle` would write at once, on an idle connection, without
        awaiting first and without entering an ``asyncio.timeout`` (the load generator may
        then run its first step eagerly, in the caller's task)."""
        ...

    async def handle(self, request: Request, body: bytes, request_id: int | None,
                     consumer: Consumer, deadline: float) -> None:
        """Send ``request`` with ``body`` (and ``X-Request-Id: request_id`` when given) and
        deliver the response to ``consumer`` until ``end`` or ``lost``. ``deadline`` is in
        ``loop.time()``; past it the exchange is dropped and ``lost`` gets
        :class:`TimedOut`. A reused connection that the server had closed is not the
        consumer's business: the request goes once more on a fresh one. Never raises, but
        ``CancelledError`` (the connection is then closed)."""
        ...

    async def close(self) -> None:
        """Close every connection (no callbacks)."""
        ...


def tls_context(scheme: str) -> ssl.SSLContext | None:
    """The TLS context both transports use for https: the system's trust store (which
    honours ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``, for a private CA) and host-name checks."""
    return ssl.create_default_context() if scheme == "https" else None


def peer_closed(fd: int, tls: bool) -> bool:
    """Whether an idle connection's socket has seen the server's FIN (it closed after its
    last answer) or, on plain TCP, stray bytes: either way it must not carry the next
    request. The event loop may not have read the FIN yet, so the socket is asked (one poll,
    no wait). On TLS only the FIN counts: records such as session tickets may be pending."""
    poller = select.poll()
    events = select.POLLRDHUP | select.POLLHUP
    poller.register(fd, events if tls else events | select.POLLIN)
    try:
        return bool(poller.poll(0))
    except OSError:
        return True


def transport_problem(name: str) -> str | None:
    """Why the transport ``name`` cannot be used here (its package is missing), or None."""
    package = _IMPLEMENTATIONS[name][2]
    if package is None:
        return None
    if importlib.util.find_spec(package) is None:
        return (f"the {name} transport needs the {package} package, which is not installed "
                f"here: pip install 'acceval[{package}]' (or choose transport: native)")
    return None


def _installed(name: TransportName) -> TransportName:
    problem = transport_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


#: A study file's choice of transport: one of :data:`TRANSPORTS`, whose package is here.
InstalledTransport = Annotated[TransportName, AfterValidator(_installed)]


def make_transport(name: str, url: str, *, connect_timeout_s: float,
                   max_body_bytes: int, kernel_stamps: bool = False) -> Transport:
    """The transport called ``name`` for the origin of ``url``; :class:`TargetError` when it
    is unknown or its package is missing; ``ValueError`` for a URL it cannot reach."""
    if name not in _IMPLEMENTATIONS:
        raise TargetError(f"unknown endpoint.transport '{name}'; choose one of: "
                          f"{', '.join(TRANSPORTS)}")
    problem = transport_problem(name)
    if problem is not None:
        raise TargetError(f"endpoint.transport: {problem}")
    module, cls, _ = _IMPLEMENTATIONS[name]
    factory = getattr(importlib.import_module(module), cls)
    if kernel_stamps and name != "native":
        raise TargetError("endpoint.receive_stamps: kernel needs transport: native")
    kwargs = {"kernel_stamps": True} if kernel_stamps else {}
    transport: Transport = factory(url, connect_timeout_s=connect_timeout_s,
                                   max_body_bytes=max_body_bytes, **kwargs)
    return transport
