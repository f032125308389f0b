"""Keeping API keys off disk and out of streams: which keys a study uses, and their removal.

A key lives in the environment (``api_key_env``) and in the headers of the clients that send
it. A server may echo it back anywhere (an error page, an answer, a chat reply's tool call,
a header), and a user's agent program, which runs with the user's environment, may print
what such a server said. Whatever acceval keeps or prints of those passes through
:func:`scrub` first, with the keys of the study.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from typing import BinaryIO

#: What an API key a server echoed back becomes, wherever acceval keeps or prints it.
REDACTED = "[redacted]"


def keys_of(names: Iterable[str | None]) -> tuple[str, ...]:
    """The keys held by the environment variables ``names`` (those set and non-empty), in
    a fixed order, each once."""
    values = (os.environ.get(n) for n in sorted({n for n in names if n}))
    return tuple(v for v in values if v)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by :data:`REDACTED`."""
    for s in secrets:
        if s and s in text:
            text = text.replace(s, REDACTED)
    return text


async def copy_scrubbed(source: asyncio.StreamReader, out: BinaryIO,
                        secrets: Sequence[str], chunk: int = 1 << 16) -> None:
    """Copy ``source`` to ``out`` until its end, with ``secrets`` replaced as they pass.

    A key may arrive split across two reads, so the last ``len(longest key) - 1`` bytes of
    each read wait for the next one (they cannot hold a whole key, and what replaced one
    holds none)."""
    keys = [s.encode() for s in secrets if s]
    hold = max((len(k) for k in keys), default=1) - 1
    pending = b""
    while data := await source.read(chunk):
        pending = _scrub_bytes(pending + data, keys)
        cut = len(pending) - hold
        if cut > 0:
            out.write(pending[:cut])
            out.flush()
            pending = pending[cut:]
    out.write(_scrub_bytes(pending, keys))
    out.flush()


def _scrub_bytes(data: bytes, keys: list[bytes]) -> bytes:
    for k in keys:
        data = data.replace(k, REDACTED.encode())
    return data


__all__ = ["REDACTED", "copy_scrubbed", "keys_of", "scrub"]
