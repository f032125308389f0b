"""Running a local engine inside a test: start it, use it, always stop it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from acceval.engines.base import Engine, GenerationChunk

E = TypeVar("E", bound=Engine)
T = TypeVar("T")


def text(chunks: list[GenerationChunk]) -> str:
    return "".join(c.text for c in chunks)


def with_engine(engine: E, body: Callable[[E], Awaitable[T]]) -> T:
    async def go() -> T:
        await engine.start()
        try:
            return await body(engine)
        finally:
            await engine.stop()
    return asyncio.run(go())
