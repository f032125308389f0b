"""Helpers for the ``acceval serve`` integration tests: run a server in-process, read SSE,
talk raw bytes to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

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
async def mock_server(log_path: Path | None = None, *, idle_timeout_s: float = 30.0,
                      head_timeout_s: float = 10.0, **options: Any
                      ) -> AsyncIterator[tuple[ServerHandle, aiohttp.ClientSession]]:
    handle = await start_server(MockEngine(**options), log_path=str(log_path) if log_path else None,
                                engine_name="mock", idle_timeout_s=idle_timeout_s,
                                head_timeout_s=head_timeout_s)
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


@dataclass(slots=True)
class RawAnswer:
    """What a raw-socket client got: the status (None if no answer came) and body bytes."""

    status: int | None
    head: bytes
    body: bytes
    closed: bool      # the server closed the connection (EOF)


async def raw_exchange(port: int, data: bytes | list[bytes], *, half_close: bool = False,
                       trickle: bytes = b"", trickle_gap_s: float = 0.05,
                       wait_s: float = 10.0) -> RawAnswer:
    """Send ``data`` (a list: piece by piece) on a fresh loopback connection, then ``trickle``
    a byte at a time, ``trickle_gap_s`` apart, and read until the server closes or ``wait_s``
    (a generous bound, not a timing check) passes. A reset raises: the server must close
    cleanly."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    received = bytearray()
    closed = False

    async def read_all() -> None:
        nonlocal closed
        while chunk := await reader.read(65536):
            received.extend(chunk)
        closed = True

    reading = asyncio.ensure_future(read_all())
    try:
        pieces = data if isinstance(data, list) else [data]
        for i, piece in enumerate(pieces):
            if i:
                await asyncio.sleep(trickle_gap_s)
            writer.write(piece)
        if half_close:
            writer.write_eof()
        for i in range(len(trickle)):
            if reading.done():
                break
            writer.write(trickle[i:i + 1])
            await asyncio.sleep(trickle_gap_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reading), wait_s)
    finally:
        reading.cancel()
        writer.close()
    if reading.done() and not reading.cancelled() and reading.exception() is not None:
        raise cast(BaseException, reading.exception())
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return RawAnswer(status, head, body, closed)
