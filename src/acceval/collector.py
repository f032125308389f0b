"""Python's cyclic garbage collector held off over work that leaves no cycles behind.

A full collection walks every container alive, and it starts whenever enough new containers
have been made, whoever made them. Two stretches of acceval make containers by the hundred
thousand and leave no cycles:

* a load point (its requests): a full collection there took 50-70 ms, a lag spike on every
  request in flight, while a closed-loop request leaves no cyclic garbage and a 2,000-request
  open-loop point 328 objects;
* the analysis of a stored run (a training trace's JSON alone is some 100,000 containers):
  the collections in one ``report --recompute`` of 1 M records took 95 ms of its 0.8 s, 74 ms
  of them in one full pass that held every other thread still.

:func:`collector_paused` (or :func:`pause` ... :func:`resume`) holds the collector off for
such a stretch. What is alive when it starts is frozen out of later collections (as vLLM's
benchmark client does); the garbage of the stretch waits for its end to be collected as
usual. Nested or concurrent stretches (threads, or points gathered on one loop) share one
pause: the collector comes back, as it was before the first, when the last one ends
(:class:`Held`, which a load point's thread switching uses too).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Generic, TypeVar

_T = TypeVar("_T")


class Held(Generic[_T]):
    """A process-wide setting held while any stretch of work needs it. The first stretch to
    begin applies it (``apply`` returns what it replaced), the last to end gives that back
    (``restore``), whichever thread or task they run in and in whatever order they end."""

    def __init__(self, apply: Callable[[], _T], restore: Callable[[_T], None]) -> None:
        self._apply = apply
        self._restore = restore
        self._lock = threading.Lock()
        self._depth = 0
        self._before: _T | None = None

    def begin(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._before = self._apply()
            self._depth += 1

    def end(self) -> None:
        with self._lock:
            if self._depth == 0:
                raise RuntimeError("a held setting ended more often than it began")
            self._depth -= 1
            if self._depth == 0:
                before, self._before = self._before, None
                self._restore(before)  # type: ignore[arg-type]

    @contextmanager
    def held(self) -> Iterator[None]:
        self.begin()
        try:
            yield
        finally:
            self.end()


def _collector_off() -> bool:
    was = gc.isenabled()
    gc.freeze()
    gc.disable()
    return was


def _collector_back(was: bool) -> None:
    gc.unfreeze()
    if was:
        gc.enable()


_PAUSE = Held(_collector_off, _collector_back)


def pause() -> None:
    """Hold the collector off until the matching :func:`resume`."""
    _PAUSE.begin()


def resume() -> None:
    """End one :func:`pause`; the last one gives the collector back as it was before the
    first, with what was frozen collectable again."""
    _PAUSE.end()


def collector_paused() -> AbstractContextManager[None]:
    """No automatic collection inside (:func:`pause` ... :func:`resume`)."""
    return _PAUSE.held()
