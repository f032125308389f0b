"""``spawn_server`` runs ``python -m acceval.serve`` as a child: ready, serve, stop, kill."""

from __future__ import annotations

import signal
from pathlib import Path

import aiohttp
import pytest
from serve_support import json_events, read_events, read_log, run

from acceval.errors import TargetError, UsageError
from acceval.serve import parse_options, spawn_server


def test_spawned_server_serves_logs_and_stops_cleanly(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"prompt": "What is 6*7?", "reference": "42"}\n')
    options = {"output_tokens": 3, "answers": str(answers), "error_kinds": ["http429"]}
    with spawn_server("mock", options=options, log_path=str(log),
                      model_name="tiny-chat") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.started_ns < server.ready_ns and server.pid > 0

        async def body() -> tuple[list[str], dict[str, object], dict[str, object]]:
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{server.base_url}/models") as resp:
                    models = await resp.json()
                async with http.get(server.base_url.removesuffix("/v1") + "/version") as resp:
                    version = await resp.json()
                async with http.post(f"{server.base_url}/completions",
                                     json={"prompt": "What is 6*7?", "stream": True,
                                           "model": "tiny-chat"},
                                     headers={"X-Request-Id": "spawned-1"}) as resp:
                    events = await read_events(resp)
            return events, models, version

        events, models, version = run(body)
        assert server.stop() == 0  # SIGTERM: a clean exit that flushes the log
        assert not server.alive()
    assert models["data"][0]["id"] == "tiny-chat"  # type: ignore[index]
    assert version["engine"] == "mock"
    text = "".join(c["choices"][0]["text"] for c in json_events(events) if c["choices"])
    assert text == "42"
    [line] = read_log(log)
    assert (line["request_id"], line["output_tokens"], line["status"]) == ("spawned-1", 1, 200)


def test_kill_is_immediate() -> None:
    server = spawn_server("mock", options={})
    assert server.kill() == -signal.SIGKILL
    assert not server.alive()


def test_a_server_that_cannot_start_raises_target_error_with_its_stderr() -> None:
    with pytest.raises(TargetError, match="error_rate"):
        spawn_server("mock", options={"error_rate": 2}, ready_timeout_s=30)
    with pytest.raises(TargetError, match="unknown engine 'nope'"):
        spawn_server("nope", options={}, ready_timeout_s=30)


def test_parse_options_reads_json_values_else_strings() -> None:
    assert parse_options(["ttft_ms=50", "error_kinds=[\"http500\"]", "answers=a.jsonl",
                          "jitter=uniform", "correct_fraction=0.8", "x="]) == {
        "ttft_ms": 50, "error_kinds": ["http500"], "answers": "a.jsonl", "jitter": "uniform",
        "correct_fraction": 0.8, "x": "",
    }
    with pytest.raises(UsageError, match="key=value"):
        parse_options(["ttft_ms"])
