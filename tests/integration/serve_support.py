"""Helpers for the ``acceval serve`` integration tests: run a server in-process, read SSE."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import uvloop

from acceval.engines.mock import MockEngine
from acceval.serve import ServerHandle, start_server

T = TypeVar("T")


def run(coro_fn: Callable[[], Awaitable[T]]) -> T:
    """Run a test coroutine on uvloop, the loop ``acceval serve`` uses in production."""

    async def main() -> T:
        return await coro_fn()

    return uvloop.run(main())


@asynccontextmanager
async def mock_server(log_path: Path | None = None, **options: Any
                      ) -> AsyncIterator[tuple[ServerHandle, aiohttp.ClientSession]]:
    handle = await start_server(MockEngine(**options), log_path=str(log_path) if log_path else None,
                                engine_name="mock")
    try:
        async with aiohttp.ClientSession() as session:
            yield handle, session
    finally:
        await handle.close()


async def read_events(resp: aiohttp.ClientResponse) -> list[str]:
    """The ``data:`` payloads of an SSE response, in order, as text."""
    events = []
    async for raw in resp.content:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data: "):
            events.append(line[len("data: "):])
    return events


def json_events(events: list[str]) -> list[dict[str, Any]]:
    return [json.loads(e) for e in events if e != "[DONE]"]


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
