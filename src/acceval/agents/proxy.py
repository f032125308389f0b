"""The recording proxy between a user's agent program and its model (``command.model``).

acceval sees none of the model calls a program of the user's makes, unless the program
makes them through this proxy: an OpenAI-compatible HTTP server on 127.0.0.1 (a free port)
that forwards every request under ``/v1/`` to the upstream's base URL, streamed answers
(server-sent events) chunk by chunk as they arrive, and records per call its latency and the
tokens the upstream's ``usage`` reported (None when it reported none: a streamed answer has
usage only when the request asked for it, ``stream_options: {include_usage: true}``).

The upstream's API key is read from the environment when the proxy starts and only ever
sent upstream, in the ``Authorization`` header; whatever the program sent there is dropped.
Nothing the proxy records holds a header or a body: an echoed key has nowhere to be written.

The tool server (:mod:`.toolserver`) hands the calls made since the previous tool call to
the next step (:meth:`RecordingProxy.turn`), as acceval's own loop gives a reply's cost to
its first tool call, so an episode is priced the same whoever drove it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from acceval.agents._loopback import LoopbackSite
from acceval.agents.env import ModelTurn
from acceval.agents.spec import ProxiedModel
from acceval.redaction import scrub

#: What the program finds in OPENAI_API_KEY: the OpenAI clients insist on a key, and the
#: proxy replaces it with the upstream's own.
PLACEHOLDER_KEY = "acceval-proxy"
#: The most of a non-streamed answer kept to read its usage (it is forwarded whole anyway).
_KEEP_BYTES = 16 * 2**20
#: Headers that belong to one connection, or that the proxy sets itself.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                  "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length",
                  "authorization", "accept-encoding", "content-encoding"})


@dataclass(slots=True)
class ModelCall:
    """One request the program sent its model: when, its answer's status, and its usage."""

    path: str
    started_ns: int
    done_ns: int
    status: int | None              # None: the upstream could not be reached
    stream: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    error: str | None = None
    step: int | None = None         # the step it was handed to

    @property
    def model_ms(self) -> float:
        return (self.done_ns - self.started_ns) / 1e6


def usage_of(data: Any) -> tuple[int | None, int | None] | None:
    """(prompt, completion) tokens of an answer or a stream's chunk, or None when it has no
    usage. The chat and completions APIs say prompt/completion, the Responses API
    input/output."""
    if not isinstance(data, dict):
        return None
    usage = data.get("usage")
    if not isinstance(usage, dict) and isinstance(data.get("response"), dict):
        usage = data["response"].get("usage")  # a Responses stream's completed event
    if not isinstance(usage, dict):
        return None

    def count(*names: str) -> int | None:
        for n in names:
            v = usage.get(n)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    return count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")


class _Events:
    """Reads usage from a server-sent event stream as it passes, holding only a partial line."""

    def __init__(self) -> None:
        self.tail = b""
        self.usage: tuple[int | None, int | None] | None = None

    def feed(self, chunk: bytes) -> None:
        *lines, self.tail = (self.tail + chunk).split(b"\n")
        for line in lines:
            self._line(line.strip())

    def close(self) -> None:
        self._line(self.tail.strip())

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        with contextlib.suppress(ValueError):
            found = usage_of(json.loads(line[5:]))
            if found is not None:
                self.usage = found


class RecordingProxy:
    """The proxy of one agent target, up for all its episodes; :meth:`reset` per episode."""

    def __init__(self, upstream: ProxiedModel) -> None:
        self.upstream = upstream
        self._key = os.environ.get(upstream.api_key_env, "") if upstream.api_key_env else ""
        self.calls: list[ModelCall] = []
        self._handed = 0
        self._site = LoopbackSite()
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> str:
        app = web.Application(client_max_size=256 * 2**20)
        app.router.add_route("*", "/v1/{tail:.*}", self._forward)
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.upstream.timeout_s))
        self.port = await self._site.start(app)
        return self.url

    async def stop(self) -> None:
        await self._site.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def reset(self) -> list[ModelCall]:
        """A new episode: the calls recorded so far are returned and forgotten."""
        calls, self.calls, self._handed = self.calls, [], 0
        return calls

    def turn(self, step: int) -> ModelTurn | None:
        """What the calls finished since the last step cost, handed to step ``step`` (None:
        there were none, as for the second tool call of one reply)."""
        new = self.calls[self._handed:]
        self._handed = len(self.calls)
        if not new:
            return None
        for c in new:
            c.step = step
        return combined(new)

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        url = f"{self.upstream.base_url}/{request.match_info['tail']}"
        if request.query_string:
            url += f"?{request.query_string}"
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        headers["Accept-Encoding"] = "identity"  # the usage is read from the body as it passes
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        body = await request.read()
        call = ModelCall(path=request.path, started_ns=time.perf_counter_ns(), done_ns=0,
                         status=None, stream=_asks_stream(body), prompt_tokens=None,
                         completion_tokens=None)
        try:
            return await self._relay(request, url, headers, body, call)
        except (aiohttp.ClientError, TimeoutError) as exc:
            call.error = scrub(f"{type(exc).__name__}: {exc}", (self._key,))
            return web.json_response({"error": {
                "message": f"acceval's recording proxy could not reach the model at "
                           f"{self.upstream.base_url}: {call.error}",
                "type": "proxy_error"}}, status=502)
        finally:
            call.done_ns = time.perf_counter_ns()
            self.calls.append(call)

    async def _relay(self, request: web.Request, url: str, headers: dict[str, str],
                     body: bytes, call: ModelCall) -> web.StreamResponse:
        assert self._session is not None
        async with self._session.request(request.method, url, headers=headers, data=body,
                                         allow_redirects=False) as up:
            call.status = up.status
            events = "text/event-stream" in up.headers.get("Content-Type", "")
            call.stream = call.stream or events
            out = web.StreamResponse(status=up.status, reason=up.reason, headers={
                k: v for k, v in up.headers.items() if k.lower() not in _HOP})
            await out.prepare(request)
            reader, kept = _Events(), bytearray()
            try:
                async for chunk in up.content.iter_any():
                    if events:
                        reader.feed(chunk)
                    elif len(kept) < _KEEP_BYTES:
                        kept += chunk
                    await out.write(chunk)
            except (aiohttp.ClientError, TimeoutError) as exc:
                # the answer had begun: the program's connection is cut, not ended cleanly,
                # so that it cannot take a truncated answer for a whole one
                call.error = scrub(f"{type(exc).__name__}: {exc}", (self._key,))
                if request.transport is not None:
                    request.transport.close()
                return out
            await out.write_eof()
        if events:
            reader.close()
            usage = reader.usage
        else:
            usage = _body_usage(bytes(kept))
        if usage is not None:
            call.prompt_tokens, call.completion_tokens = usage
        return out


def _asks_stream(body: bytes) -> bool:
    with contextlib.suppress(ValueError):
        data = json.loads(body or b"{}")
        return isinstance(data, dict) and data.get("stream") is True
    return False


def _body_usage(body: bytes) -> tuple[int | None, int | None] | None:
    try:
        return usage_of(json.loads(body))
    except ValueError:
        return None


def _total(values: list[int | None]) -> int | None:
    """A sum only when every call reported its part: a partial sum would undercount."""
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def combined(calls: list[ModelCall]) -> ModelTurn:
    """Several calls as one model turn: the latencies and the tokens summed."""
    return ModelTurn(model_ms=sum(c.model_ms for c in calls),
                     prompt_tokens=_total([c.prompt_tokens for c in calls]),
                     completion_tokens=_total([c.completion_tokens for c in calls]),
                     started_ns=calls[0].started_ns)


__all__ = ["PLACEHOLDER_KEY", "ModelCall", "RecordingProxy", "combined", "usage_of"]
