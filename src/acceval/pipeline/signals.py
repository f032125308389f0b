"""Signals during a run: SIGTERM and SIGHUP stop it the way Ctrl-C does, and once the run
is saving what it measured no further signal may interrupt it (docs/reliability.md)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

_STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                      if s is not None)


@contextmanager
def signals_stop_the_run() -> Iterator[Callable[[], None]]:
    """SIGTERM and SIGHUP (``timeout``, ``docker stop``, CI cancellation, a closed terminal)
    stop a run the way Ctrl-C does: sending stops, local servers are stopped, the records are
    flushed and the result and report are written from what was measured. The callable it
    yields marks the saving phase, during which further signals (Ctrl-C included) are ignored.
    Outside the main thread (a library caller's worker) signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    previous = {s: signal.getsignal(s) for s in (*_STOP_SIGNALS, signal.SIGINT)}

    def stop(signum: int, frame: FrameType | None) -> None:
        # Become a Ctrl-C: inside the event loop its runner cancels the measuring task
        # cleanly (requests in flight are cancelled, not left as stray task errors), and
        # outside it SIGINT raises KeyboardInterrupt where the run is.
        signal.raise_signal(signal.SIGINT)

    def saving() -> None:
        for s in previous:
            signal.signal(s, signal.SIG_IGN)

    for s in _STOP_SIGNALS:
        signal.signal(s, stop)
    # A process started with SIGINT ignored (any `cmd &` in a script, some CI runners) would
    # ignore the SIGINT that SIGTERM becomes, and run on: the run takes Ctrl-C's usual meaning.
    if not callable(previous[signal.SIGINT]):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield saving
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
