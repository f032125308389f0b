"""The preflight: every endpoint answers and lists its model before any load is sent."""

from __future__ import annotations

import asyncio
import socket

import pytest

from acceval.errors import PreflightError
from acceval.study import Endpoint
from acceval.targets.preflight import endpoint_problems, preflight
from helpers.sse_server import ServerConfig, SSEServer


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _problems(config: ServerConfig, model: str, **ep: object) -> list[tuple[str, str, str]]:
    async def go() -> list[tuple[str, str, str]]:
        async with SSEServer(config) as srv:
            endpoint = Endpoint(base_url=srv.base_url, model=model, **ep)  # type: ignore[arg-type]
            problems = await endpoint_problems([("remote", endpoint)])
            assert srv.stats.requests == 1  # one GET /models, no generation request
            return problems

    return asyncio.run(go())


def test_a_server_that_lists_the_model_passes() -> None:
    assert _problems(ServerConfig(model="served"), "served") == []


def test_a_server_that_lists_another_model_is_named() -> None:
    ((where, msg, hint),) = _problems(ServerConfig(model="served"), "other")
    assert where == "target 'remote'"
    assert "lists served, not 'other'" in msg
    assert "--skip-preflight" in hint


def test_a_closed_port_fails_naming_the_target() -> None:
    ep = Endpoint(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m",
                  connect_timeout_s=2)
    with pytest.raises(PreflightError) as info:
        preflight([("down", ep), ("down-too", ep)])
    assert info.value.exit_code == 2
    assert [p[0] for p in info.value.problems] == ["target 'down'", "target 'down-too'"]
    assert "did not answer" in str(info.value) and "cannot connect" in str(info.value)


def test_an_unset_key_variable_fails_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCEVAL_PREFLIGHT_KEY", raising=False)
    ep = Endpoint(base_url="http://127.0.0.1:9/v1", model="m",
                  api_key_env="ACCEVAL_PREFLIGHT_KEY")
    with pytest.raises(PreflightError, match="ACCEVAL_PREFLIGHT_KEY"):
        preflight([("keyed", ep)])


def test_no_endpoints_is_nothing_to_do() -> None:
    preflight([])
