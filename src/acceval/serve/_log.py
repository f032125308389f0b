"""The server's ground-truth log: one JSON line per generation request.

Lines are buffered in memory and written at most a second apart (and on close), never
fsynced per line, so logging costs the hot path one compact dump (orjson: non-ASCII text is
written as UTF-8, not escaped).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TextIO

from acceval._json import dumps_line

FLUSH_INTERVAL_S = 1.0
_MAX_BUFFERED = 20_000


class GroundTruthLog:
    """Appends request lines to ``path``; call ``start`` inside the loop and ``close`` at exit."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Append: a server restarted after fault injection keeps the earlier lines.
        self._file: TextIO | None = self.path.open("a", encoding="utf-8")
        self._lines: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._timer = loop.call_later(FLUSH_INTERVAL_S, self._tick)

    def write(self, entry: dict[str, Any]) -> None:
        self._lines.append(dumps_line(entry))
        if len(self._lines) >= _MAX_BUFFERED:
            self.flush()

    def flush(self) -> None:
        if self._file is None or not self._lines:
            return
        self._lines.append("")
        self._file.write("\n".join(self._lines))
        self._lines.clear()
        self._file.flush()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _tick(self) -> None:
        self.flush()
        if self._loop is not None and self._file is not None:
            self._timer = self._loop.call_later(FLUSH_INTERVAL_S, self._tick)
