"""Injected faults reach a real client as they should; the server survives bad clients."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from serve_support import json_events, mock_server, read_events, read_log, run

from acceval.engines.mock import MockEngine
from acceval.serve import start_server

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

STREAM = {"prompt": "p", "stream": True}


@pytest.mark.parametrize("kind", ["http500", "http429"])
@pytest.mark.parametrize("stream", [True, False])
def test_http_faults_are_error_statuses(kind: str, stream: bool, tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> tuple[int, dict[str, object]]:
        async with (
            mock_server(log, error_rate=1.0, error_kinds=[kind]) as (srv, http),
            http.post(f"{srv.base_url}/completions", json={"prompt": "p", "stream": stream})
            as resp,
        ):
            return resp.status, await resp.json()

    status, data = run(body)
    assert status == int(kind[4:])
    assert "injected" in str(data["error"])
    [line] = read_log(log)
    assert (line["status"], line["error_injected"]) == (status, kind)


def test_broken_stream_is_cut_mid_stream(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"
    received: list[str] = []

    async def body() -> None:
        async with mock_server(log, output_tokens=8, error_rate=1.0,
                               error_kinds=["broken_stream"]) as (srv, http):
            async with http.post(f"{srv.base_url}/completions", json=STREAM) as resp:
                assert resp.status == 200
                with pytest.raises(aiohttp.ClientPayloadError):
                    async for raw in resp.content:
                        received.append(raw.decode())
            # Non-streaming: the body is shorter than its Content-Length.
            async with http.post(f"{srv.base_url}/completions", json={"prompt": "p"}) as resp:
                with pytest.raises(aiohttp.ClientPayloadError):
                    await resp.read()
            # The server keeps serving new connections.
            async with http.post(f"{srv.base_url}/completions", json={"prompt": "p"}) as resp:
                assert resp.status == 500 or resp.status == 200  # the fault still applies
    run(body)
    assert any('"text":"tok"' in part for part in received)
    assert not any("[DONE]" in part for part in received)
    lines = read_log(log)
    assert [line["error_injected"] for line in lines] == ["broken_stream"] * 3
    assert lines[0]["output_tokens"] == 4


def test_malformed_event_is_not_json(tmp_path: Path) -> None:
    async def body() -> tuple[list[str], bytes]:
        async with mock_server(output_tokens=4, error_rate=1.0,
                               error_kinds=["malformed"]) as (srv, http):
            async with http.post(f"{srv.base_url}/completions", json=STREAM) as resp:
                events = await read_events(resp)
            async with http.post(f"{srv.base_url}/completions", json={"prompt": "p"}) as resp:
                raw = await resp.read()
        return events, raw

    events, raw = run(body)
    assert events[-1] == "[DONE]"
    bad = []
    for event in events[:-1]:
        try:
            json.loads(event)
        except ValueError:
            bad.append(event)
    assert len(bad) == 1
    with pytest.raises(ValueError):
        json.loads(raw)


def test_client_disconnect_mid_stream_is_logged_and_harmless(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> None:
        async with mock_server(log, output_tokens=50, itl_ms=20) as (srv, http):
            async with http.post(f"{srv.base_url}/completions", json=STREAM,
                                 headers={"X-Request-Id": "gone"}) as resp:
                await resp.content.readline()
                resp.close()  # drop the connection with the stream half read
            await asyncio.sleep(0.05)
            async with http.post(f"{srv.base_url}/completions", json={"prompt": "p"},
                                 headers={"X-Request-Id": "after"}) as resp:
                assert resp.status == 200

    run(body)
    lines = {line["request_id"]: line for line in read_log(log)}
    assert lines["gone"]["status"] == 499
    assert 1 <= lines["gone"]["output_tokens"] < 50
    assert lines["after"]["status"] == 200


def test_delays_are_never_early(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> None:
        async with (
            mock_server(log, output_tokens=6, ttft_ms=30, itl_ms=5, tokens_per_chunk=2)
            as (srv, http),
            http.post(f"{srv.base_url}/completions", json=STREAM) as resp,
        ):
            await read_events(resp)

    run(body)
    [line] = read_log(log)
    due = [line["recv_ns"] + 30_000_000 + k * 10_000_000 for k in range(3)]
    assert all(sent >= d for sent, d in zip(line["chunk_ns"], due, strict=True))


def test_shutdown_ends_in_flight_streams_and_flushes_the_log(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> None:
        handle = await start_server(MockEngine(ttft_ms=5000), log_path=str(log))
        async with aiohttp.ClientSession() as http:
            resp = await http.post(f"{handle.base_url}/chat/completions",
                                   json={"messages": [{"role": "user", "content": "x"}],
                                         "stream": True}, headers={"X-Request-Id": "late"})
            await asyncio.sleep(0.05)
            await handle.close()
            resp.close()

    # The stdlib loop works too (uvloop is the default, not a requirement).
    asyncio.run(body())
    [line] = read_log(log)
    assert (line["request_id"], line["status"]) == ("late", 503)
    assert json_events([]) == []
