"""The OpenAI-compatible HTTP target: /v1/completions and /v1/chat/completions, SSE or JSON.

One code path measures every server that speaks this API (vLLM on any backend, SGLang, TGI,
llama.cpp, clouds). It stamps raw times into the :class:`~acceval.results.records.Record`
and classifies every failure; it never raises for a failed request.

Stamps (``perf_counter_ns() - t0_ns``): ``sent_ns`` right before the request (a new
connection's connect time is part of the request, as a user would see it), ``first_byte_ns``
when the response's first bytes arrive, one ``chunk_ns`` per event that carries generated
text (``text``, ``delta.content``, or a reasoning delta), ``first_token_ns`` the first of
those, ``finish_ns`` the event that carried ``finish_reason`` (the end of the last decode
step, which on vLLM sends no text), ``done_ns`` when the response ends or fails. All stamps
in one network read share the read's time: that is when the client could have seen them.
When ``endpoint.retry`` sends a request again, ``sent_ns`` stays the first send and the other
stamps are the last attempt's, so the latency includes every failed attempt and wait
(``http_attempts`` counts the sends).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

from acceval._json import loads as _loads
from acceval.errors import TargetError
from acceval.loadgen.protocol import Prompt
from acceval.redaction import REDACTED, scrub
from acceval.results.records import Record
from acceval.results.runlog import Fingerprint
from acceval.targets._retry import clear_outcome, parse_retry_after, wait_before_next
from acceval.targets._sse import EventSplitter
from acceval.targets.spec import Endpoint, header_value_problem
from acceval.targets.transport import (
    ClientLimit,
    ConnectFailed,
    Consumer,
    ProtocolError,
    Request,
    ResponseTooLarge,
    StopExchange,
    TimedOut,
    Transport,
    make_transport,
)

_now = time.perf_counter_ns
# Each streamed event is parsed by orjson (acceval._json): at 16 tokens an answer, their
# parsing was the client's largest cost. Against the fast mock (closed loop of 128, client
# and mock each pinned to a core), four rounds each: client CPU per request 61-67 -> 49-54
# us, 14,800-16,100 -> 17,000-20,200 req/s.
_EXCERPT = 200
_MAX_ERROR_BODY = 4096
_BODY_CACHE_MAX = 65536

# Response modes.
_SSE, _JSON, _ERROR = 0, 1, 2


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _cached_tokens(usage: Any, timings: dict[str, Any] | None) -> int | None:
    """Prompt tokens the server found in its prefix cache, where it says: OpenAI's
    ``usage.prompt_tokens_details.cached_tokens`` (vLLM with --enable-prompt-tokens-details,
    SGLang, recent llama.cpp), else llama.cpp's ``timings.cache_n``; None when it does not."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if isinstance(cached, int) and not isinstance(cached, bool) and cached >= 0:
        return cached
    n = timings.get("cache_n") if timings is not None else None
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        return n
    return None




def _excerpt(data: bytes | str, limit: int = _EXCERPT) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Exchange(Consumer):
    """One request's response, parsed as it arrives and written into its Record."""

    __slots__ = ("chat", "done_seen", "events", "failed", "finish", "mode", "parts", "rec",
                 "retry_after_s", "t0", "timeout_s", "timings", "usage")

    def __init__(self, rec: Record, t0: int, chat: bool, timeout_s: float) -> None:
        self.rec = rec
        self.t0 = t0
        self.chat = chat
        self.timeout_s = timeout_s
        self.mode = _SSE
        self.events = EventSplitter()
        self.parts: list[Any] = []
        self.done_seen = False
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None  # llama.cpp's own per-request figures
        self.failed = False
        self.retry_after_s: float | None = None

    # --- Consumer callbacks ----------------------------------------------------------------

    def sent(self, now: int) -> None:
        rec = self.rec
        if rec.sent_ns is None:  # a retry's sends keep the first one's stamp
            rec.sent_ns = now - self.t0

    def head(self, status: int, headers: dict[str, str], now: int) -> None:
        rec = self.rec
        rec.first_byte_ns = now - self.t0
        rec.http_status = status
        retry_after = headers.get("retry-after")
        if retry_after is not None:
            self.retry_after_s = parse_retry_after(retry_after)
            if self.retry_after_s is not None:
                rec.retry_after_s = self.retry_after_s
        if status >= 400:
            self.mode = _ERROR
        elif headers.get("content-type", "").startswith("text/event-stream"):
            self.mode = _SSE
        else:
            self.mode = _JSON

    def body(self, data: bytes, now: int) -> None:
        if self.mode == _SSE:
            self._sse(data, now)
        elif self.mode == _JSON or sum(map(len, self.parts)) < _MAX_ERROR_BODY:
            self.parts.append(data)

    def end(self, now: int) -> None:
        if self.failed:
            return
        rec = self.rec
        rec.done_ns = now - self.t0
        mode = self.mode
        if mode == _SSE:
            self._sse_end(now)
        elif mode == _JSON:
            self._json_end()
        else:
            rec.error_kind = "http"
            rec.error_detail = f"HTTP {rec.http_status}: {_excerpt(b''.join(self.parts))}"

    def lost(self, got_bytes: bool, detail: str, problem: Exception | None, now: int) -> None:
        if self.failed:
            return
        if isinstance(problem, TimedOut):
            rec = self.rec
            t = self.timeout_s
            self._fail("timeout", f"no response within {t:g} s" if rec.first_byte_ns is None
                       else f"response incomplete after {t:g} s ({len(rec.chunk_ns)} chunk(s))",
                       now)
        elif isinstance(problem, ResponseTooLarge):
            self._fail("too_large", f"{detail} (endpoint.max_response_bytes; raise it to accept "
                                    "larger responses)", now)
        elif isinstance(problem, ProtocolError):
            self._fail("malformed", detail, now)
        elif isinstance(problem, ClientLimit):
            self._fail("client", detail, now)
        elif isinstance(problem, ConnectFailed) or (problem is None and not got_bytes):
            # No connection, or the server dropped it before answering.
            self._fail("connect", detail, now)
        elif problem is not None:
            self._fail("client", _excerpt(detail), now)
        elif self.mode == _SSE and self.done_seen:
            self.end(now)  # [DONE] arrived; only the framing after it was lost
        else:
            self._fail("stream_cut", f"{detail} after {len(self.rec.chunk_ns)} chunk(s)", now)

    # --- parsing ----------------------------------------------------------------------------

    def _sse(self, data: bytes, now: int) -> None:
        for payload in self.events.feed(data):
            self._event(payload, now)
            if self.failed:
                raise StopExchange

    def _event(self, payload: str, now: int) -> None:
        if payload == "[DONE]":
            self.done_seen = True
            return
        try:
            obj = _loads(payload)
        except ValueError:
            self._fail("malformed", f"event is not JSON: {_excerpt(payload, 80)}", now)
            return
        try:
            choices = obj["choices"]
            if choices:
                c = choices[0]
                if self.chat:
                    delta = c.get("delta") or {}
                    text = delta.get("content")
                    timed = text or delta.get("reasoning_content") or delta.get("reasoning")
                else:
                    timed = text = c.get("text")
                if timed:
                    rec = self.rec
                    t = now - self.t0
                    if rec.first_token_ns is None:
                        rec.first_token_ns = t
                    rec.chunk_ns.append(t)
                    if text:
                        self.parts.append(text)
                reason = c.get("finish_reason")
                if reason:
                    if self.finish is None:
                        self.rec.finish_ns = now - self.t0
                    self.finish = reason
            usage = obj.get("usage")
            if usage:
                self.usage = usage
            timings = obj.get("timings")
            if isinstance(timings, dict):
                self.timings = timings
        except (KeyError, TypeError, IndexError, AttributeError):
            err = obj.get("error") if isinstance(obj, dict) else None
            if err is not None:
                msg = err.get("message", err) if isinstance(err, dict) else err
                self._fail("stream_cut", f"server error event: {_excerpt(str(msg))}", now)
            else:
                self._fail("malformed", f"unexpected event shape: {_excerpt(payload, 80)}", now)

    def _sse_end(self, now: int) -> None:
        for payload in self.events.close():
            self._event(payload, now)
            if self.failed:
                return
        rec = self.rec
        rec.output_text = "".join(self.parts)
        rec.finish_reason = self.finish
        self._tokens_from_usage()
        if rec.output_tokens is None:
            rec.output_tokens = len(rec.chunk_ns)
            rec.tokens_from = "chunks"
        if not self.done_seen and self.finish is None:
            rec.error_kind = "stream_cut"
            rec.error_detail = (
                f"stream ended without [DONE] or finish_reason after {len(rec.chunk_ns)} chunk(s)"
            )

    def _json_end(self) -> None:
        rec = self.rec
        raw = b"".join(self.parts)
        try:
            obj = _loads(raw)
        except ValueError:
            rec.error_kind = "malformed"
            rec.error_detail = f"body is not JSON: {_excerpt(raw, 80)}"
            return
        try:
            choice = obj["choices"][0]
            text = choice["message"]["content"] if self.chat else choice["text"]
            self.finish = choice.get("finish_reason")
            self.usage = obj.get("usage")
            timings = obj.get("timings")
            self.timings = timings if isinstance(timings, dict) else None
        except (KeyError, TypeError, IndexError, AttributeError):
            rec.error_kind = "malformed"
            rec.error_detail = f"unexpected body shape: {_excerpt(raw, 80)}"
            return
        rec.output_text = text if isinstance(text, str) else None
        rec.finish_reason = self.finish
        # The whole answer came at once: when its first token was made is not observable,
        # so TTFT (and TPOT, ITL) stay not measured rather than equal to E2E.
        rec.first_token_ns = None
        self._tokens_from_usage()

    def _tokens_from_usage(self) -> None:
        u = self.usage
        if isinstance(u, dict):
            out, inp = u.get("completion_tokens"), u.get("prompt_tokens")
            rec = self.rec
            if isinstance(out, int):
                rec.output_tokens = out
                rec.tokens_from = "usage"
            if isinstance(inp, int):
                rec.prompt_tokens = inp
        self.rec.cached_prompt_tokens = _cached_tokens(u, self.timings)
        t = self.timings
        if t is not None:
            self.rec.server_prompt_ms = _ms(t.get("prompt_ms"))
            self.rec.server_decode_ms = _ms(t.get("predicted_ms"))

    def _fail(self, kind: str, detail: str, now: int) -> None:
        self.failed = True
        rec = self.rec
        rec.error_kind = kind
        rec.error_detail = detail
        rec.done_ns = now - self.t0
        if self.parts and self.mode == _SSE:
            rec.output_text = "".join(self.parts)


class _Collect(Consumer):
    """Collects a small response whole (probe requests)."""

    __slots__ = ("body_parts", "error", "headers", "status", "timed_out")

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body_parts: list[bytes] = []
        self.error: str | None = None
        self.timed_out = False

    def head(self, status: int, headers: dict[str, str], now: int) -> None:
        self.status = status
        self.headers = headers

    def body(self, data: bytes, now: int) -> None:
        self.body_parts.append(data)

    def lost(self, got_bytes: bool, detail: str, problem: Exception | None, now: int) -> None:
        self.error = detail
        self.timed_out = isinstance(problem, TimedOut)


def _header_safe(value: str, what: str) -> str:
    problem = header_value_problem(value)
    if problem is not None:
        raise TargetError(f"{what} {problem}")
    return value


def _sampling_fields(ep: Endpoint) -> dict[str, Any]:
    """The endpoint's optional request fields (top_p, seed, stop, extra_body), once."""
    out: dict[str, Any] = {k: v for k, v in (("top_p", ep.top_p), ("seed", ep.seed),
                                              ("stop", ep.stop)) if v is not None}
    out.update(ep.extra_body)
    return out


class OpenAITarget:
    """A server reached over the OpenAI-compatible HTTP API (implements ``loadgen.Target``),
    through the transport ``endpoint.transport`` names."""

    def __init__(self, name: str, endpoint: Endpoint) -> None:
        self.name = name
        self.endpoint = endpoint
        self.timeout_s = endpoint.timeout_s
        self.chat = endpoint.api == "chat"
        try:
            self.transport: Transport = make_transport(
                endpoint.transport, endpoint.base_url,
                connect_timeout_s=endpoint.connect_timeout_s,
                max_body_bytes=endpoint.max_response_bytes,
                kernel_stamps=endpoint.receive_stamps == "kernel")
        except ValueError as exc:  # an Endpoint built past its validators
            raise TargetError(f"target '{name}': endpoint.base_url {exc}") from None
        except TargetError as exc:
            raise TargetError(f"target '{name}': {exc}") from None
        self._base = urlsplit(endpoint.base_url).path.rstrip("/")
        extra = [(_header_safe(k, "header name"), _header_safe(v, f"header {k}"))
                 for k, v in endpoint.headers.items()]
        # The API key lives only in these headers (never in records, logs or repr).
        self._extra = (*extra, *self._auth_header(name, endpoint))
        # What a server may echo back (a 401 page, a Server header, /version): scrubbed from
        # everything this client returns besides a request's record (the run redacts those).
        self._secrets = tuple(v.removeprefix("Bearer ") for k, v in self._extra
                              if k == "Authorization")
        accept = "text/event-stream" if endpoint.stream else "application/json"
        self._post = Request(
            "POST", self._base + ("/chat/completions" if self.chat else "/completions"),
            (("User-Agent", "acceval"), ("Content-Type", "application/json"),
             ("Accept", accept), *self._extra))
        self._gets: dict[str, Request] = {}
        self._bodies: dict[Prompt, bytes] = {}
        self._sampling = _sampling_fields(endpoint)

    @staticmethod
    def _auth_header(name: str, endpoint: Endpoint) -> tuple[tuple[str, str], ...]:
        env = endpoint.api_key_env
        if not env:
            return ()
        key = os.environ.get(env)
        if not key:
            raise TargetError(
                f"target '{name}': the environment variable {env} (endpoint.api_key_env) is "
                f"not set; export it with the API key before running"
            )
        value = _header_safe(key, f"target '{name}': the value of {env} (endpoint.api_key_env)")
        return (("Authorization", "Bearer " + value),)

    def __repr__(self) -> str:
        return (f"OpenAITarget(name={self.name!r}, base_url={self.endpoint.base_url!r}, "
                f"transport={self.transport.name!r})")

    # --- Target protocol --------------------------------------------------------------------

    async def start(self) -> None:
        """Nothing to open ahead: connections open on first use and are kept alive."""

    async def close(self) -> None:
        await self.transport.close()

    def _body(self, prompt: Prompt) -> bytes:
        ep = self.endpoint
        req: dict[str, Any] = {"model": ep.model}
        if self.chat:
            if prompt.messages is not None:
                msgs = [{"role": r, "content": c} for r, c in prompt.messages]
            else:
                msgs = [{"role": "user", "content": prompt.prompt or ""}]
            req["messages"] = msgs
        else:
            if prompt.prompt is not None:
                text = prompt.prompt
            else:
                text = "\n".join(c for _, c in prompt.messages or ())
            req["prompt"] = text
        req["max_tokens"] = prompt.max_tokens
        req["temperature"] = ep.temperature
        req["stream"] = ep.stream
        if ep.stream:
            req["stream_options"] = {"include_usage": True}
        if prompt.ignore_eos:
            req["ignore_eos"] = True
        # The endpoint's extras last: validation keeps them off the fields written above.
        req.update(self._sampling)
        body = json.dumps(req, ensure_ascii=False, separators=(",", ":")).encode()
        if len(self._bodies) >= _BODY_CACHE_MAX:
            self._bodies.clear()
        self._bodies[prompt] = body
        return body

    def ready_to_send(self) -> bool:
        """True when ``send`` would write at once on an idle keep-alive connection, without
        awaiting anything first (so the load generator may start it eagerly)."""
        return self.transport.ready()

    async def send(self, prompt: Prompt, rec: Record, t0_ns: int) -> None:
        """Send one request and fill ``rec``; never raises except ``CancelledError``."""
        try:
            body = self._bodies.get(prompt) or self._body(prompt)
        except Exception as exc:  # a prompt we cannot encode is our problem, not the server's
            rec.error_kind = "client"
            rec.error_detail = f"cannot encode request: {_excerpt(repr(exc))}"
            rec.done_ns = rec.sent_ns = _now() - t0_ns
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        policy = self.endpoint.retry
        handle = self.transport.handle
        sends = 0
        while True:
            sends += 1
            rec.http_attempts = sends
            ex = _Exchange(rec, t0_ns, self.chat, self.timeout_s)
            await handle(self._post, body, rec.request_id, ex, deadline)
            if policy is None:
                return
            wait, why_not = wait_before_next(policy, rec, sends, ex.retry_after_s,
                                             deadline - loop.time())
            if wait is None:
                if why_not:
                    rec.error_detail = f"{rec.error_detail} ({why_not})"
                return
            await asyncio.sleep(wait)
            clear_outcome(rec)

    # --- fingerprint ------------------------------------------------------------------------

    async def _get(self, path: str, timeout_s: float) -> tuple[int | None, bytes, str | None,
                                                              dict[str, str]]:
        req = self._gets.get(path)
        if req is None:
            req = self._gets[path] = Request(
                "GET", path, (("User-Agent", "acceval"), ("Accept", "application/json"),
                              *self._extra))
        col = _Collect()
        loop = asyncio.get_running_loop()
        await self.transport.handle(req, b"", None, col, loop.time() + timeout_s)
        headers = {k: self.scrub(v) for k, v in col.headers.items()}
        if col.timed_out:
            return None, b"", f"GET {path}: no answer within {timeout_s:g} s", {}
        if col.error:
            return col.status, b"", self.scrub(f"GET {path}: {col.error}"), headers
        body = b"".join(col.body_parts)
        for s in self._secrets:
            body = body.replace(s.encode(), REDACTED.encode())
        return col.status, body, None, headers

    def scrub(self, text: str) -> str:
        """``text`` with this client's API key replaced by :data:`REDACTED`."""
        return scrub(text, self._secrets)

    async def _models(self, timeout_s: float
                      ) -> tuple[list[str] | None, str | None, int | None, dict[str, str]]:
        base = self._base
        status, body, err, headers = await self._get(base + "/models", timeout_s)
        if err:
            return None, err, status, headers
        if status != 200:
            return None, f"GET {base}/models: HTTP {status}: {_excerpt(body)}", status, headers
        try:
            data = json.loads(body)
            return [str(m["id"]) for m in data["data"]], None, status, headers
        except (ValueError, KeyError, TypeError):
            return (None, f"GET {base}/models: unexpected body {_excerpt(body, 80)}", status,
                    headers)

    async def list_models(self, timeout_s: float = 5.0) -> tuple[list[str] | None, str | None]:
        """The model ids the server lists (GET /models), or None and what went wrong."""
        models, err, _, _ = await self._models(timeout_s)
        return models, err

    async def probe(self, timeout_s: float = 5.0) -> Fingerprint:
        """What the server says it is: model ids (GET /models), version (GET /version), the
        ``Server`` header. Never raises; what failed is listed under ``errors``."""
        out = Fingerprint(base_url=self.endpoint.base_url, model=self.endpoint.model)
        base = self._base
        models, err, status, headers = await self._models(timeout_s)
        out.server = headers.get("server")
        out.models = models
        if err:
            out.errors.append(err)
        if status is not None:
            vpath = base.rsplit("/", 1)[0] + "/version"
            status, body, err, _ = await self._get(vpath, timeout_s)
            if err is None and status == 200:
                try:
                    out.version = json.loads(body)
                except ValueError:
                    out.version = _excerpt(body)
        return out
