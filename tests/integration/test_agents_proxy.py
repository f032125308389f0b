"""The recording proxy between a user's agent program and its model, against a loopback
upstream (aiohttp) that echoes the Authorization it was sent: answers pass through byte for
byte, a streamed one chunk by chunk as the upstream sends it, each call's usage is recorded
(None when the upstream gave none), the upstream gets its own key whatever the program
sent, and nothing recorded holds it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from acceval.agents.proxy import ModelCall, RecordingProxy, combined
from acceval.agents.spec import AgentCommand, ProxiedModel

KEY = "sk-upstream-5d1e"
CHUNKS = [b'data: {"choices":[{"delta":{"content":"he"}}]}\n\n',
          b'data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":4}}\n\n',
          b"data: [DONE]\n\n"]


class Upstream:
    """A model server: JSON answers with usage (none for model `bare`), and a stream that
    waits after its first chunk until the test has read that chunk through the proxy."""

    def __init__(self) -> None:
        self.seen_auth: list[str] = []
        self.go = asyncio.Event()

    async def chat(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        self.seen_auth.append(auth)
        body = await request.json()
        if body.get("stream"):
            out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await out.prepare(request)
            await out.write(CHUNKS[0])
            await self.go.wait()
            for chunk in CHUNKS[1:]:
                await out.write(chunk)
            await out.write_eof()
            return out
        answer: dict[str, object] = {"choices": [{"message": {"content": f"hi {auth}"}}]}
        if body.get("model") != "bare":
            answer["usage"] = {"prompt_tokens": 7, "completion_tokens": 3}
        return web.json_response(answer, headers={"X-Echo": auth})


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[tuple[Upstream, str]]:
    up = Upstream()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", up.chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield up, f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def _proxy(base_url: str, monkeypatch: pytest.MonkeyPatch) -> RecordingProxy:
    monkeypatch.setenv("UPSTREAM_KEY", KEY)
    proxy = RecordingProxy(ProxiedModel(base_url=base_url, api_key_env="UPSTREAM_KEY"))
    await proxy.start()
    return proxy


def test_answers_pass_through_with_their_usage_and_the_upstreams_own_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asyncio.run(_pass_through(monkeypatch))


async def _pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving() as (up, base):
        proxy = await _proxy(base, monkeypatch)
        try:
            assert proxy.url.startswith("http://127.0.0.1:")
            async with aiohttp.ClientSession() as s:
                for model in ("m", "bare"):
                    async with s.post(f"{proxy.url}/chat/completions",
                                      json={"model": model, "messages": []},
                                      headers={"Authorization": "Bearer the-programs-own"}) as r:
                        assert r.status == 200
                        got = await r.json()
                        assert got["choices"][0]["message"]["content"] == f"hi Bearer {KEY}"
                        assert r.headers["X-Echo"] == f"Bearer {KEY}"
            assert up.seen_auth == [f"Bearer {KEY}"] * 2
            first, bare = proxy.calls
            assert (first.prompt_tokens, first.completion_tokens) == (7, 3)
            assert (bare.prompt_tokens, bare.completion_tokens) == (None, None)
            assert first.status == 200 and not first.stream and first.model_ms > 0
            turn = proxy.turn(0)
            assert turn is not None and turn.prompt_tokens is None  # one call did not say
            assert turn.model_ms == pytest.approx(first.model_ms + bare.model_ms)
            assert proxy.turn(1) is None  # nothing new since step 0
            assert [c.step for c in proxy.calls] == [0, 0]
            assert KEY not in repr(proxy.calls)
        finally:
            await proxy.stop()


def test_a_stream_is_relayed_chunk_by_chunk_and_its_usage_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asyncio.run(_stream(monkeypatch))


async def _stream(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving() as (up, base):
        proxy = await _proxy(base, monkeypatch)
        try:
            async with aiohttp.ClientSession() as s, s.post(
                    f"{proxy.url}/chat/completions",
                    json={"model": "m", "stream": True, "stream_options": {"include_usage": True}}
            ) as r:
                # the upstream sends the rest only once this chunk has come through the proxy;
                # a proxy that waited for the whole answer would never deliver it
                first = await asyncio.wait_for(r.content.readuntil(b"\n\n"), 30)
                assert first == CHUNKS[0]
                up.go.set()
                rest = await asyncio.wait_for(r.content.read(), 30)
            assert first + rest == b"".join(CHUNKS)
            (call,) = proxy.calls
            assert call.stream and (call.prompt_tokens, call.completion_tokens) == (11, 4)
            turn = proxy.turn(3)
            assert turn is not None and (turn.prompt_tokens, turn.completion_tokens) == (11, 4)
            assert proxy.reset() == [call] and proxy.calls == []
        finally:
            await proxy.stop()


def test_an_unreachable_model_is_a_502_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    asyncio.run(_unreachable(monkeypatch))


async def _unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on: bind one, then let it go
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proxy = await _proxy(f"http://127.0.0.1:{port}/v1", monkeypatch)
    try:
        async with aiohttp.ClientSession() as s, s.post(
                f"{proxy.url}/chat/completions", json={"model": "m"}) as r:
            assert r.status == 502
            said = json.loads(await r.text())["error"]["message"]
        assert f"127.0.0.1:{port}/v1" in said
        (call,) = proxy.calls
        assert call.status is None and call.error and call.prompt_tokens is None
    finally:
        await proxy.stop()


def test_combined_calls_sum_latency_and_tokens() -> None:
    calls = [ModelCall("/v1/chat/completions", 0, 2_000_000, 200, False, 5, 1),
             ModelCall("/v1/chat/completions", 3_000_000, 4_000_000, 200, False, 6, 2)]
    turn = combined(calls)
    assert (turn.model_ms, turn.prompt_tokens, turn.completion_tokens) == (3.0, 11, 3)
    assert turn.started_ns == 0


def test_a_proxied_model_is_validated_naming_the_field() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as err:
        AgentCommand.model_validate({"argv": ["x"], "model": {"base_url": "ftp://h/v1",
                                                              "api_key_env": "1BAD"}})
    where = {".".join(map(str, e["loc"])) for e in err.value.errors()}
    assert where == {"model.base_url", "model.api_key_env"}
