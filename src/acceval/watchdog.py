"""The orphan guard: every process a run starts ends with it, however the run ends.

A run starts processes of its own: local servers, a private Ray (its GCS server, raylet,
workers and their helpers), Chromium for the agents, agent and training commands. Every exit
path that runs Python ends them (context managers, ``ray.shutdown``), but a SIGKILL of
acceval runs none of it, and Ray's helpers then live on under PID 1.

So a run starts a small watchdog (``python -m acceval.watchdog PID``) in a session of its
own, so that a kill of acceval's process group spares it. It holds the read end of a pipe
whose write end only acceval holds. While acceval lives, the watchdog notes every
descendant of acceval (pid and start time) twice a second: once acceval dies they are
re-parented and the tree is lost. When the pipe reaches end-of-file without the "done"
byte, or acceval's pid is gone (whatever killed it), it sends SIGTERM to each noted process
still alive with the same start time, and to what those started since they were noted, and
SIGKILL :data:`GRACE_S` later to those left and to what they started meanwhile. A run that
ends normally writes the byte, and the watchdog leaves at once.

The pipe, not ``prctl(PR_SET_PDEATHSIG)``: the death signal reaches only direct children,
is cleared by a set-uid exec and is Linux-only, while Ray's helpers are grandchildren that
set up their own sessions.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psutil

#: Seconds between snapshots of acceval's descendants.
TICK_S = 0.5
#: Seconds between SIGTERM and SIGKILL of what a dead run left.
GRACE_S = 3.0
DONE = b"q"


@contextmanager
def orphan_guard() -> Iterator[None]:
    """Start the watchdog for this process; on a normal exit tell it to leave."""
    try:
        proc = subprocess.Popen([sys.executable, "-m", "acceval.watchdog", str(os.getpid())],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no process to spare (descriptor or memory short): run unguarded
        yield
        return
    try:
        yield
    finally:
        assert proc.stdin is not None
        try:
            proc.stdin.write(DONE)
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _descendants(parent: psutil.Process) -> dict[int, float]:
    """``parent``'s descendants (pid: start time), the watchdog itself left out: it is the
    run's child until the run dies."""
    try:
        kids = parent.children(recursive=True)
    except psutil.Error:
        return {}
    me = os.getpid()
    out = {}
    for k in kids:
        if k.pid == me:
            continue
        try:
            out[k.pid] = k.create_time()
        except psutil.Error:
            continue
    return out


def _alive(noted: dict[int, float]) -> list[psutil.Process]:
    out = []
    for pid, started in noted.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            continue
    return out


def _with_descendants(procs: list[psutil.Process]) -> list[psutil.Process]:
    """``procs`` and every live descendant of theirs: what a noted process started after
    the last snapshot (a raylet's new worker) is still its child, so it is found here."""
    found = {p.pid: p for p in procs}
    for p in procs:
        with suppress(psutil.Error):
            found.update((k.pid, k) for k in p.children(recursive=True))
    found.pop(os.getpid(), None)
    return list(found.values())


def end_all(noted: dict[int, float], grace_s: float = GRACE_S) -> None:
    """SIGTERM every noted process still alive (the same start time: not a reused pid) and
    what they started since they were noted, then SIGKILL those left after ``grace_s`` and
    whatever they started meanwhile (a helper replacing one that ended)."""
    procs = _with_descendants(_alive(noted))
    for p in procs:
        with suppress(psutil.Error):
            p.send_signal(signal.SIGTERM)
    _, left = psutil.wait_procs(procs, timeout=grace_s)
    for p in _with_descendants(left):
        with suppress(psutil.Error):
            p.kill()


def watch(parent_pid: int, fd: int = 0) -> None:
    """Snapshot ``parent_pid``'s descendants until the pipe on ``fd`` says done (leave) or
    ends (the parent died: end them all)."""
    try:
        parent = psutil.Process(parent_pid)
        parent_started = parent.create_time()
    except psutil.Error:
        return
    # A first snapshot at once: what the run started while this interpreter was starting
    # (on a busy host, seconds) is noted now rather than a tick later.
    noted = _descendants(parent)
    while True:
        ready, _, _ = select.select([fd], [], [], TICK_S)
        if ready:
            data = os.read(fd, 1)
            if data == DONE:
                return
            if not data:
                break  # end of file: the parent is gone
        try:
            if not parent.is_running() or parent.create_time() != parent_started \
                    or parent.status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.Error:
            break
        noted.update(_descendants(parent))
    # A last look: what the dying parent started in its final half second.
    noted.update(_descendants(parent))
    end_all(noted)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is the run's
    watch(int(sys.argv[1]))


if __name__ == "__main__":
    main()


__all__ = ["GRACE_S", "TICK_S", "end_all", "orphan_guard", "watch"]
