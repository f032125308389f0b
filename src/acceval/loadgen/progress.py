"""A live progress line for the load generator (Rich), cheap on the hot path.

The runner calls :meth:`Progress.record` once per finished request: it only bumps counters.
Drawing happens in an asyncio task at most ``refresh_per_second`` times a second, on the
event loop itself (no refresh thread competing for the GIL with the sender). When the
console is not a terminal, or ``enabled=False``, nothing is drawn.
"""

from __future__ import annotations

import asyncio
import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from acceval.results.records import Record


class Progress:
    """Requests done, current rate, errors and elapsed time of the running load point."""

    def __init__(self, *, enabled: bool = True, console: Console | None = None,
                 refresh_per_second: float = 4.0) -> None:
        self.console = console or Console(stderr=True)
        self.active = enabled and self.console.is_terminal
        self.period_s = 1.0 / max(0.1, min(refresh_per_second, 4.0))
        self.label = ""
        self.total: int | None = None
        self.done = 0
        self.errors = 0
        self._started = 0.0
        self._rate = 0.0
        self._live: Live | None = None
        self._task: asyncio.Task[None] | None = None

    def record(self, rec: Record) -> None:
        """Count one finished request (hot path: two attribute updates)."""
        self.done += 1
        if rec.error_kind is not None:
            self.errors += 1

    def start_point(self, label: str, total: int | None = None) -> None:
        self.label = label
        self.total = total
        self.done = self.errors = 0
        self._rate = 0.0
        self._started = time.monotonic()
        if not self.active:
            return
        self._live = Live(self.render(), console=self.console, auto_refresh=False,
                          transient=False)
        self._live.start()
        self._task = asyncio.get_running_loop().create_task(self._refresh())

    def end_point(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._live is not None:
            self._live.update(self.render(), refresh=True)
            self._live.stop()
            self._live = None

    def close(self) -> None:
        """Stop drawing (idempotent); safe when no point is running."""
        self.end_point()

    def render(self) -> Text:
        elapsed = time.monotonic() - self._started if self._started else 0.0
        total = f"/{self.total}" if self.total else ""
        line = Text()
        line.append(f"{self.label}  ", style="bold")
        line.append(f"{self.done}{total} done  ")
        line.append(f"{self._rate:,.1f} req/s  ")
        line.append(f"{self.errors} errors  ", style="red" if self.errors else "")
        line.append(f"{int(elapsed) // 60:02d}:{elapsed % 60:04.1f} elapsed", style="dim")
        return line

    async def _refresh(self) -> None:
        last_done, last_t = self.done, time.monotonic()
        while True:
            await asyncio.sleep(self.period_s)
            now = time.monotonic()
            # Exponential smoothing keeps the rate readable under bursty arrivals.
            inst = (self.done - last_done) / max(now - last_t, 1e-9)
            self._rate = inst if self._rate == 0.0 else 0.5 * self._rate + 0.5 * inst
            last_done, last_t = self.done, now
            if self._live is not None:
                self._live.update(self.render(), refresh=True)
