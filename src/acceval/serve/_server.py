"""The OpenAI-compatible application: routes, generation handlers and the server lifecycle."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from acceval._version import __version__
from acceval.engines.base import Engine, EngineFault, GenerationChunk, GenerationRequest
from acceval.errors import TargetError
from acceval.serve._http import Exchange, HttpConnection, HttpLimits, HttpRequest
from acceval.serve._log import GroundTruthLog
from acceval.serve._openai import (
    DONE_EVENT,
    BadRequest,
    Encoder,
    ParsedRequest,
    error_body,
    parse_request,
    tool_call_body,
    tool_request,
)

_log = logging.getLogger("acceval.serve")
_GENERATION = {"/v1/completions": False, "/v1/chat/completions": True}
_SHUTDOWN_GRACE_S = 2.0


class App:
    """Answers requests for one engine; owns the connections and the ground-truth log."""

    def __init__(self, engine: Engine, *, loop: asyncio.AbstractEventLoop, model_name: str,
                 engine_name: str, log: GroundTruthLog | None) -> None:
        self.engine = engine
        self.loop = loop
        self.model_name = model_name
        self.engine_name = engine_name
        self.log = log
        self.connections: set[HttpConnection] = set()
        self._id_prefix = os.urandom(4).hex()
        self._id_counter = 0
        self._models_body = (
            f'{{"object":"list","data":[{{"id":{_json(model_name)},"object":"model",'
            f'"created":{int(time.time())},"owned_by":"acceval"}}]}}'
        ).encode()
        self._version_body = (
            f'{{"version":{_json(__version__)},"engine":{_json(engine_name)}}}').encode()
        # What /metrics publishes, under vLLM's names (docs/telemetry.md).
        self.active = 0             # generations started and not finished
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.cache_queries = 0      # prompt tokens looked up in a prefix cache
        self.cache_hits = 0         # of which it held
        tool = getattr(engine, "tool_call", None)
        self._tool_call: Callable[[list[dict[str, Any]], int | None], Any] | None = (
            tool if callable(tool) else None)
        cached = getattr(engine, "cached_prompt_tokens", None)
        self._cached: Callable[[str], int | None] | None = cached if callable(cached) else None

    # -- connection callbacks -----------------------------------------------------------------

    def connection_opened(self, conn: HttpConnection) -> None:
        self.connections.add(conn)

    def connection_closed(self, conn: HttpConnection) -> None:
        self.connections.discard(conn)

    def finished(self, conn: HttpConnection, ex: Exchange | None) -> None:
        if ex is None or ex.logged:
            return
        ex.logged = True
        if self.log is not None:
            self.log.write(ex.log_entry())
        if ex.status == 499:
            _log.debug("request %s: client disconnected", ex.request_id)

    # -- routing -------------------------------------------------------------------------------

    def handle(self, conn: HttpConnection, req: HttpRequest) -> None:
        chat = _GENERATION.get(req.path)
        if chat is not None:
            if req.method != "POST":
                conn.respond(405, error_body(f"use POST for {req.path}",
                                             kind="invalid_request_error", status=405))
            else:
                self._generation(conn, req, chat)
        elif req.method != "GET":
            status = 405 if req.path in ("/health", "/version", "/v1/models", "/metrics") else 404
            conn.respond(status, error_body(f"no route {req.method} {req.path}",
                                            kind="invalid_request_error", status=status))
        elif req.path == "/health":
            conn.respond(200, b'{"status":"ok"}')
        elif req.path == "/version":
            conn.respond(200, self._version_body)
        elif req.path == "/v1/models":
            conn.respond(200, self._models_body)
        elif req.path == "/metrics":
            conn.respond(200, self.metrics_text().encode(),
                         content_type="text/plain; version=0.0.4; charset=utf-8")
        else:
            conn.respond(404, error_body(f"no route GET {req.path}",
                                         kind="invalid_request_error", status=404))

    def _generation(self, conn: HttpConnection, req: HttpRequest, chat: bool) -> None:
        if req.request_id:
            rid = req.request_id
        else:
            self._id_counter += 1
            rid = f"{self._id_prefix}-{self._id_counter}"
        ex = Exchange(rid, "chat.completions" if chat else "completions", req.recv_ns)
        try:
            parsed = parse_request(req.body, chat=chat)
            if parsed.model is not None and parsed.model != self.model_name:
                raise BadRequest(f"The model '{parsed.model}' does not exist; this server "
                                 f"serves '{self.model_name}'.", param="model", status=404,
                                 kind="model_not_found")
            prompt = self._prompt_text(parsed)
            tools = tool_request(req.body) if chat and self._tool_call is not None else None
        except BadRequest as bad:
            ex.error = bad.message
            conn.respond(bad.status, error_body(bad.message, kind=bad.kind, status=bad.status,
                                                param=bad.param), ex=ex)
            return
        ex.stream = parsed.stream
        ex.messages = len(parsed.messages) if parsed.messages is not None else None
        ex.prompt_tokens = self.engine.count_tokens(prompt)
        if self._cached is not None:
            ex.cached_tokens = self._cached(prompt)
            if ex.cached_tokens is not None:
                self.cache_queries += ex.prompt_tokens
                self.cache_hits += ex.cached_tokens
        if tools is not None:
            self._answer_tool_call(conn, ex, rid, tools)
            return
        greq = GenerationRequest(rid, prompt, parsed.max_tokens, parsed.temperature, chat,
                                 received_ns=req.recv_ns, ignore_eos=parsed.ignore_eos)
        enc = Encoder(response_id=("chatcmpl-" if chat else "cmpl-") + rid,
                      model=self.model_name, created=int(time.time()), chat=chat,
                      stream=parsed.stream)
        run = self._stream if parsed.stream else self._complete
        ex.task = self.loop.create_task(self._counted(run(conn, ex, greq, enc), ex))

    def _answer_tool_call(self, conn: HttpConnection, ex: Exchange, rid: str,
                          tools: tuple[list[dict[str, Any]], int | None]) -> None:
        """A chat request with tools, answered with the engine's tool call (not streamed)."""
        assert self._tool_call is not None and ex.prompt_tokens is not None
        try:
            call = self._tool_call(*tools)
        except Exception as exc:
            _log.exception("engine failed on request %s", rid)
            ex.error = f"engine error: {exc!r}"
            conn.respond(500, error_body(ex.error, kind="server_error", status=500), ex=ex)
            return
        ex.output_tokens = self.engine.count_tokens(f"{call.name} {call.arguments}")
        self.prompt_tokens += ex.prompt_tokens
        self.generation_tokens += ex.output_tokens
        conn.respond(200, tool_call_body(
            response_id=f"chatcmpl-{rid}", model=self.model_name, created=int(time.time()),
            call_id=call.id, name=call.name, arguments=call.arguments,
            prompt_tokens=ex.prompt_tokens, completion_tokens=ex.output_tokens), ex=ex,
            content=True)

    async def _counted(self, work: Coroutine[Any, Any, None], ex: Exchange) -> None:
        self.active += 1
        self.prompt_tokens += ex.prompt_tokens or 0
        try:
            await work
        finally:
            self.active -= 1
            self.generation_tokens += ex.output_tokens

    def metrics_text(self) -> str:
        """The Prometheus text of this server: vLLM's names for running, waiting and
        tokens, and ``acceval:batch_size`` for the batch being decoded."""
        state = getattr(self.engine, "queue_state", None)
        if callable(state):
            batch, waiting = state()
            running = max(self.active - waiting, 0)
        else:  # an engine without a queue (the mock): everything started is running
            batch, waiting, running = self.active, 0, self.active
        label = f'{{model_name={_json(self.model_name)}}}'
        rows = [
            ("vllm:num_requests_running", "gauge", "Requests being generated.", running),
            ("vllm:num_requests_waiting", "gauge", "Requests waiting for a batch.", waiting),
            ("acceval:batch_size", "gauge", "Rows in the batch being decoded.", batch),
            ("vllm:prompt_tokens_total", "counter", "Prompt tokens processed.",
             self.prompt_tokens),
            ("vllm:generation_tokens_total", "counter", "Tokens generated.",
             self.generation_tokens),
        ]
        if self.cache_queries:
            rows += [
                ("vllm:prefix_cache_queries_total", "counter",
                 "Prompt tokens looked up in the prefix cache.", self.cache_queries),
                ("vllm:prefix_cache_hits_total", "counter",
                 "Prompt tokens the prefix cache held.", self.cache_hits),
            ]
        out = []
        for name, kind, help_, value in rows:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}",
                    f"{name}{label} {float(value)}"]
        return "\n".join(out) + "\n"

    def _prompt_text(self, parsed: ParsedRequest) -> str:
        if parsed.messages is None:
            assert parsed.prompt is not None
            return parsed.prompt
        try:
            return self.engine.render_chat(parsed.messages)
        except (ValueError, KeyError, TypeError) as exc:
            raise BadRequest(f"cannot render these messages: {exc}", param="messages") from None

    # -- generation -------------------------------------------------------------------------------

    async def _stream(self, conn: HttpConnection, ex: Exchange, greq: GenerationRequest,
                      enc: Encoder) -> None:
        # The head goes out when the engine first waits, as vLLM sends it before the first
        # token; an engine that fails before waiting still gets a real HTTP error status.
        conn.start_stream(ex)
        agen = self.engine.generate(greq)
        first = True
        finish: str | None = None
        try:
            async for ch in agen:
                if first:
                    first = False
                    if enc.chat:
                        conn.event(enc.role_event(), False)
                if ch.finish_reason is not None:
                    finish = ch.finish_reason
                if ch.text or ch.n_tokens:
                    ex.output_tokens += ch.n_tokens
                    conn.event(enc.chunk_event(ch.text, ch.finish_reason), True)
                elif ch.finish_reason is not None:
                    conn.event(enc.chunk_event("", ch.finish_reason), False)
                if conn.paused:
                    await conn.drain()
                if conn.closed:
                    raise asyncio.CancelledError("client disconnected")
            if first and enc.chat:
                conn.event(enc.role_event(), False)
            if finish is None:
                conn.event(enc.chunk_event("", "stop"), False)
            assert ex.prompt_tokens is not None
            conn.event(enc.usage_event(ex.prompt_tokens, ex.output_tokens, ex.cached_tokens),
                       False)
            conn.event(DONE_EVENT, False)
            conn.end_stream()
        except EngineFault as fault:
            ex.error_injected = fault.label
            ex.error = fault.message
            if fault.action == EngineFault.HTTP and not conn.head_sent:
                conn.respond(fault.status, error_body(fault.message, kind="server_error",
                                                      status=fault.status), ex=ex)
            elif fault.action == EngineFault.BROKEN_STREAM:
                conn.break_stream()
            else:
                if fault.action == EngineFault.MALFORMED:
                    conn.event(enc.malformed_event(), False)
                else:
                    conn.event(enc.error_event(fault.message, fault.status), False)
                conn.event(DONE_EVENT, False)
                conn.end_stream()
        except asyncio.CancelledError:
            await _aclose(agen)
            self._abandon(conn, ex)
            raise
        except Exception as exc:
            _log.exception("engine failed on request %s", ex.request_id)
            ex.error = f"engine error: {exc!r}"
            if not conn.head_sent:
                conn.respond(500, error_body(ex.error, kind="server_error", status=500), ex=ex)
                return
            conn.event(enc.error_event(ex.error, 500), False)
            conn.event(DONE_EVENT, False)
            conn.end_stream()

    async def _complete(self, conn: HttpConnection, ex: Exchange, greq: GenerationRequest,
                        enc: Encoder) -> None:
        agen = self.engine.generate(greq)
        texts: list[str] = []
        finish: str | None = None
        assert ex.prompt_tokens is not None
        try:
            async for ch in agen:
                texts.append(ch.text)
                ex.output_tokens += ch.n_tokens
                if ch.finish_reason is not None:
                    finish = ch.finish_reason
            body = enc.full_body("".join(texts), finish or "stop", ex.prompt_tokens,
                                 ex.output_tokens, ex.cached_tokens)
            conn.respond(200, body, ex=ex, content=ex.output_tokens > 0)
        except EngineFault as fault:
            ex.error_injected = fault.label
            ex.error = fault.message
            if fault.action == EngineFault.HTTP:
                conn.respond(fault.status, error_body(fault.message, kind="server_error",
                                                      status=fault.status), ex=ex)
            elif fault.action == EngineFault.BROKEN_STREAM:
                body = enc.full_body("".join(texts), "stop", ex.prompt_tokens, ex.output_tokens)
                conn.respond(200, body[: len(body) // 2], ex=ex, declared_length=len(body),
                             close=True)
            else:
                conn.respond(200, b'{"id":"trunc', ex=ex)
        except asyncio.CancelledError:
            await _aclose(agen)
            self._abandon(conn, ex)
            raise
        except Exception as exc:
            _log.exception("engine failed on request %s", ex.request_id)
            ex.error = f"engine error: {exc!r}"
            conn.respond(500, error_body(ex.error, kind="server_error", status=500), ex=ex)

    def _abandon(self, conn: HttpConnection, ex: Exchange) -> None:
        if conn.closed:
            conn.abandon(ex, 499, "client disconnected")
        else:
            conn.abandon(ex, 503, "server shutting down")

    async def shutdown(self) -> None:
        """Cancel in-flight requests (they are logged) and close every connection."""
        tasks = []
        for conn in list(self.connections):
            ex = conn.current()
            if ex is not None and ex.task is not None and not ex.task.done():
                ex.task.cancel("server shutting down")
                tasks.append(ex.task)
        if tasks:
            await asyncio.wait(tasks, timeout=_SHUTDOWN_GRACE_S)
        for conn in list(self.connections):
            conn.close()


async def _aclose(agen: AsyncIterator[GenerationChunk]) -> None:
    aclose = getattr(agen, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


def _json(value: str) -> str:
    return json.dumps(value)


@dataclass(slots=True)
class ServerHandle:
    """A running in-process server (see ``start_server``)."""

    host: str
    port: int
    _server: asyncio.Server
    _app: App

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        return self._app.model_name

    async def close(self) -> None:
        """Stop accepting, cancel in-flight requests, stop the engine and flush the log."""
        self._server.close()
        await self._app.shutdown()
        await self._server.wait_closed()
        try:
            await self._app.engine.stop()
        finally:
            if self._app.log is not None:
                self._app.log.close()


async def start_server(engine: Engine, *, host: str = "127.0.0.1", port: int = 0,
                       log_path: str | None = None, model_name: str | None = None,
                       engine_name: str | None = None, idle_timeout_s: float = 30.0,
                       head_timeout_s: float = 10.0, reuse_port: bool = False) -> ServerHandle:
    """Start ``engine`` behind the OpenAI API in the running loop; ``port=0`` picks a free one.

    The server starts the engine and ``ServerHandle.close`` stops it. A connection is closed
    after ``idle_timeout_s`` without a request (or amid a stalled body), and a request whose
    head takes longer than ``head_timeout_s`` is answered 408 and closed. ``reuse_port``
    shares the port with other processes listening on it (SO_REUSEPORT: the kernel spreads
    the connections over them; ``--workers``).
    """
    limits = HttpLimits(idle_timeout_s, head_timeout_s)
    loop = asyncio.get_running_loop()
    await engine.start()
    log = GroundTruthLog(log_path) if log_path else None
    app = App(engine, loop=loop, model_name=model_name or engine.model_id,
              engine_name=engine_name or type(engine).__name__, log=log)
    try:
        server = await loop.create_server(lambda: HttpConnection(app, loop, limits), host, port,
                                          reuse_address=True, backlog=4096,
                                          reuse_port=reuse_port or None)
    except OSError as exc:
        await engine.stop()
        if log is not None:
            log.close()
        raise TargetError(f"cannot listen on {host}:{port} ({exc}); choose another --port"
                          ) from exc
    if log is not None:
        log.start(loop)
    bound_port = server.sockets[0].getsockname()[1]
    return ServerHandle(host, bound_port, server, app)


def serve_forever(engine_name: str, *, host: str = "127.0.0.1", port: int = 8000,
                  options: dict[str, Any], log_path: str | None = None,
                  model_name: str | None = None, idle_timeout_s: float = 30.0,
                  head_timeout_s: float = 10.0, reuse_port: bool = False) -> None:
    """Load engine ``engine_name`` and serve it until SIGINT/SIGTERM (blocking)."""
    from acceval.engines.base import load_engine

    HttpLimits(idle_timeout_s, head_timeout_s)  # a bad timeout fails before the engine loads
    engine = load_engine(engine_name, **options)
    coro = _serve_main(engine, engine_name, host=host, port=port, log_path=log_path,
                       model_name=model_name, idle_timeout_s=idle_timeout_s,
                       head_timeout_s=head_timeout_s, reuse_port=reuse_port)
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a core dependency except on Windows
        asyncio.run(coro)
    else:
        uvloop.run(coro)


async def _serve_main(engine: Engine, engine_name: str, *, host: str, port: int,
                      log_path: str | None, model_name: str | None, idle_timeout_s: float,
                      head_timeout_s: float, reuse_port: bool = False) -> None:
    handle = await start_server(engine, host=host, port=port, log_path=log_path,
                                model_name=model_name, engine_name=engine_name,
                                idle_timeout_s=idle_timeout_s, head_timeout_s=head_timeout_s,
                                reuse_port=reuse_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"acceval serve: {engine_name} on {handle.base_url}", flush=True)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await handle.close()
