"""``acceval serve`` speaks the OpenAI API: endpoints, streaming format, usage, errors, log."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from serve_support import json_events, mock_server, read_events, read_log, run

from acceval import __version__


def test_streaming_completion_has_text_chunks_finish_usage_and_done() -> None:
    async def body() -> None:
        async with mock_server(output_tokens=5) as (srv, http):
            payload = {"model": "mock", "prompt": "one two three", "max_tokens": 50,
                       "stream": True}
            async with http.post(f"{srv.base_url}/completions", json=payload) as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == "text/event-stream"
                events = await read_events(resp)
        assert events[-1] == "[DONE]"
        chunks = json_events(events)
        content = [c for c in chunks if c["choices"]]
        assert "".join(c["choices"][0]["text"] for c in content) == "tok tok tok tok tok"
        assert all(c["object"] == "text_completion" for c in chunks)
        assert content[-1]["choices"][0]["finish_reason"] == "stop"
        assert all(c["choices"][0]["finish_reason"] is None for c in content[:-1])
        usage = chunks[-1]
        assert usage["choices"] == []
        assert usage["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}

    run(body)


def test_streaming_chat_opens_with_role_and_streams_delta_content() -> None:
    async def body() -> None:
        async with mock_server(output_tokens=4, tokens_per_chunk=2) as (srv, http):
            payload = {"messages": [{"role": "user", "content": "hi"}], "stream": True,
                       "stream_options": {"include_usage": True}}
            async with http.post(f"{srv.base_url}/chat/completions", json=payload) as resp:
                events = await read_events(resp)
        chunks = json_events(events)
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        content = [c["choices"][0]["delta"]["content"] for c in chunks[1:] if c["choices"]]
        assert content == ["tok tok", " tok tok"]
        assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
        assert chunks[-1]["usage"]["completion_tokens"] == 4
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        assert events[-1] == "[DONE]"

    run(body)


def test_non_streaming_completion_and_chat_have_usage() -> None:
    async def body() -> None:
        async with mock_server(output_tokens=3) as (srv, http):
            async with http.post(f"{srv.base_url}/completions",
                                 json={"prompt": "a b", "max_tokens": 10}) as resp:
                completion = await resp.json()
            async with http.post(f"{srv.base_url}/chat/completions",
                                 json={"messages": [{"role": "user", "content": [
                                     {"type": "text", "text": "a b c"}]}]}) as resp:
                chat = await resp.json()
        assert completion["object"] == "text_completion"
        assert completion["choices"][0]["text"] == "tok tok tok"
        assert completion["usage"] == {"prompt_tokens": 2, "completion_tokens": 3,
                                       "total_tokens": 5}
        assert chat["object"] == "chat.completion"
        assert chat["choices"][0]["message"] == {"role": "assistant", "content": "tok tok tok"}
        assert chat["usage"]["prompt_tokens"] == 3

    run(body)


def test_max_tokens_gives_finish_reason_length() -> None:
    async def body() -> None:
        async with (
            mock_server(output_tokens=30) as (srv, http),
            http.post(f"{srv.base_url}/completions", json={"prompt": "p", "max_tokens": 4})
            as resp,
        ):
            data = await resp.json()
        assert data["choices"][0]["finish_reason"] == "length"
        assert data["usage"]["completion_tokens"] == 4

    run(body)


def test_models_health_and_version() -> None:
    async def body() -> None:
        async with mock_server() as (srv, http):
            async with http.get(f"{srv.base_url}/models") as resp:
                models = await resp.json()
            root = srv.base_url.removesuffix("/v1")
            async with http.get(f"{root}/health") as resp:
                health_status = resp.status
            async with http.get(f"{root}/version") as resp:
                version = await resp.json()
        assert [m["id"] for m in models["data"]] == ["mock"]
        assert health_status == 200
        assert version == {"version": __version__, "engine": "mock"}

    run(body)


def test_bad_requests_get_openai_error_objects() -> None:
    async def body() -> None:
        async with mock_server() as (srv, http):
            async with http.post(f"{srv.base_url}/completions", data=b"{not json",
                                 headers={"Content-Type": "application/json"}) as resp:
                bad_json = (resp.status, await resp.json())
            async with http.post(f"{srv.base_url}/completions", json={"max_tokens": 3}) as resp:
                no_prompt = (resp.status, await resp.json())
            async with http.post(f"{srv.base_url}/completions",
                                 json={"prompt": "x", "max_tokens": 0}) as resp:
                zero = (resp.status, await resp.json())
            async with http.post(f"{srv.base_url}/completions",
                                 json={"prompt": "x", "model": "gpt-9"}) as resp:
                model = (resp.status, await resp.json())
            async with http.get(f"{srv.base_url}/completions") as resp:
                wrong_method = resp.status
            async with http.get(f"{srv.base_url}/nothing") as resp:
                missing = resp.status
        assert bad_json[0] == 400
        assert bad_json[1]["error"]["type"] == "invalid_request_error"
        assert "not valid JSON" in bad_json[1]["error"]["message"]
        assert no_prompt[0] == 400 and no_prompt[1]["error"]["param"] == "prompt"
        assert zero[0] == 400 and zero[1]["error"]["param"] == "max_tokens"
        assert model[0] == 404 and model[1]["error"]["type"] == "model_not_found"
        assert (wrong_method, missing) == (405, 404)

    run(body)


def test_json_nested_too_deeply_is_a_400_and_logs_no_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> tuple[int, dict[str, Any], int]:
        async with mock_server(log) as (srv, http):
            for nested in (b"[" * 100_000, b'{"prompt":' * 100_000):
                async with http.post(f"{srv.base_url}/completions", data=nested) as resp:
                    status, error = resp.status, await resp.json()
            async with http.post(f"{srv.base_url}/completions", json={"prompt": "x"}) as resp:
                return status, error, resp.status

    status, error, after = run(body)
    assert (status, after) == (400, 200)
    assert error["error"]["type"] == "invalid_request_error"
    assert "too deeply" in error["error"]["message"]
    assert "Traceback" not in caplog.text and not caplog.records
    assert [line["status"] for line in read_log(log)] == [400, 400, 200]


def test_request_id_is_echoed_and_log_lines_match_requests(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"

    async def body() -> None:
        async with mock_server(log, output_tokens=6, tokens_per_chunk=2) as (srv, http):
            async def one(i: int, stream: bool) -> None:
                async with http.post(f"{srv.base_url}/completions",
                                     json={"prompt": "p", "stream": stream},
                                     headers={"X-Request-Id": f"req-{i}"}) as resp:
                    assert resp.headers["X-Request-Id"] == f"req-{i}"
                    if stream:
                        events = json_events(await read_events(resp))
                        assert events[0]["id"] == f"cmpl-req-{i}"
                    else:
                        assert (await resp.json())["id"] == f"cmpl-req-{i}"

            await asyncio.gather(*(one(i, stream=i % 2 == 0) for i in range(10)))

    run(body)
    lines = {line["request_id"]: line for line in read_log(log)}
    assert sorted(lines) == sorted(f"req-{i}" for i in range(10))
    for rid, line in lines.items():
        stream = int(rid.split("-")[1]) % 2 == 0
        assert line["stream"] is stream
        assert line["status"] == 200 and line["error_injected"] is None
        assert line["output_tokens"] == 6
        assert len(line["chunk_ns"]) == (3 if stream else 1)
        assert line["recv_ns"] <= line["first_chunk_ns"] == line["chunk_ns"][0]
        assert line["chunk_ns"][-1] <= line["done_ns"]


def test_keep_alive_and_connection_close_over_one_socket() -> None:
    async def body() -> None:
        async with mock_server(output_tokens=2) as (srv, _http):
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            req = (b'{"prompt":"x","max_tokens":2}')

            def request(close: bool) -> bytes:
                extra = b"Connection: close\r\n" if close else b""
                return (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + extra +
                        b"Content-Length: %d\r\n\r\n" % len(req) + req)

            for close in (False, False, True):
                writer.write(request(close))
                head = await reader.readuntil(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200 OK")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                assert b'"completion_tokens":2' in await reader.readexactly(length)
            assert await reader.read() == b""  # the server closed after Connection: close
            writer.close()
            await writer.wait_closed()

    run(body)
