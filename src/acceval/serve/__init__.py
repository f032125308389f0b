"""``acceval serve``: local engines behind an OpenAI-compatible HTTP API.

Public surface: ``serve_forever`` (blocking, for the CLI), ``start_server`` (in-process, for
tests), ``spawn_server`` (a child process, for runs that measure start-up or kill the server),
and ``parse_options`` for ``--option key=value`` lists. See docs/serve.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from acceval._lazy import exports
from acceval.errors import UsageError

if TYPE_CHECKING:
    from acceval.serve._process import LocalServer, spawn_server
    from acceval.serve._server import ServerHandle, serve_forever, start_server

# The server and its HTTP stack load when a name is used, not when a study's
# ``acceval.serve.spec`` is read.
__getattr__ = exports(__name__, {
    "LocalServer": "acceval.serve._process", "spawn_server": "acceval.serve._process",
    "ServerHandle": "acceval.serve._server", "serve_forever": "acceval.serve._server",
    "start_server": "acceval.serve._server"})


def parse_options(items: list[str]) -> dict[str, Any]:
    """Turn ``["ttft_ms=50", "answers=a.jsonl"]`` into a dict; values are JSON when they parse."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"engine option {item!r} must look like key=value")
        try:
            options[key] = json.loads(raw)
        except ValueError:
            options[key] = raw
    return options


__all__ = [
    "LocalServer",
    "ServerHandle",
    "parse_options",
    "serve_forever",
    "spawn_server",
    "start_server",
]
