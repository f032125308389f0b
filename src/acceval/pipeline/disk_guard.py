"""The disk guard: the first failure writing the run's own files (records, journal) stops
the run's sending, as Ctrl-C does, and says what was kept and how to go on once there is room."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from acceval.results.store import RecordWriter


class DiskGuard:
    """The first error writing the run's own files (records, journal): the run stops
    sending, as on Ctrl-C, and says what was kept."""

    def __init__(self) -> None:
        self.error: OSError | None = None
        self._lock = threading.Lock()
        # Only a run on the main thread owns the process's Ctrl-C (see signals_stop_the_run).
        self._stops = threading.current_thread() is threading.main_thread()

    def fail(self, exc: OSError) -> None:
        """From any thread (the records writer's included): the first error stops the run."""
        with self._lock:
            first, self.error = self.error is None, self.error or exc
        if first and self._stops:
            _interrupt_main()


def _interrupt_main() -> None:
    """Ctrl-C for the main thread, delivered to that thread by the kernel. Raised from the
    records writer's thread instead, the signal's C handler would write to the event loop's
    wakeup fd from that thread while the main thread may be closing the loop and that fd
    (seen on a starved host: "Exception ignored when trying to write to the signal wakeup
    fd: [Errno 9] Bad file descriptor")."""
    main = threading.main_thread().ident
    if hasattr(signal, "pthread_kill") and main is not None:
        signal.pthread_kill(main, signal.SIGINT)
    else:
        signal.raise_signal(signal.SIGINT)


def disk_message(run_dir: Path, writer: RecordWriter, guard: DiskGuard) -> str | None:
    error = writer.error or guard.error
    if error is None:
        return None
    lost = (f"; {writer.unwritten} record(s) could not be written"
            if writer.unwritten else "")
    return (f"writing the run's files failed ({error}), so the run stopped sending; "
            f"{writer.written} record(s) are kept in {run_dir}{lost}")
