"""The orphan guard ends what a SIGKILLed process started (issue 30), including
grandchildren in sessions of their own (what Ray's helpers do), and nothing on a normal
exit."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil

_PARENT = """
import os, subprocess, sys, time
from acceval.watchdog import orphan_guard
with orphan_guard():
    # A child, and a grandchild that leaves the process group (start_new_session), as
    # Ray's raylet and its helpers do.
    kid = subprocess.Popen([sys.executable, "-c",
        "import subprocess, sys, time; "
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
        "start_new_session=True); print(g.pid, flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True)
    grandchild = int(kid.stdout.readline())
    print(kid.pid, grandchild, flush=True)
    if sys.argv[1] == "die":
        time.sleep(1.5)  # the watchdog has seen both
        os.kill(os.getpid(), 9)
    kid.kill(); kid.wait()
    print("left", flush=True)
"""


def _start(mode: str) -> tuple[subprocess.Popen[str], list[psutil.Process]]:
    proc = subprocess.Popen([sys.executable, "-c", _PARENT, mode], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    pids = [int(x) for x in proc.stdout.readline().split()]
    return proc, [psutil.Process(p) for p in pids]


def test_a_sigkilled_parent_takes_its_children_and_grandchildren_with_it() -> None:
    proc, procs = _start("die")
    assert proc.wait(timeout=60) == -signal.SIGKILL
    assert proc.stdout is not None
    proc.stdout.close()
    _, alive = psutil.wait_procs(procs, timeout=30)
    for p in alive:  # clean up before failing
        p.kill()
    assert not alive, f"outlived the parent: {[p.pid for p in alive]}"


def test_a_normal_exit_leaves_the_others_alone() -> None:
    proc, (_, grandchild) = _start("live")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "left"
    assert proc.wait(timeout=30) == 0
    proc.stdout.close()
    try:
        time.sleep(1.0)  # a watchdog that misread the exit would have sent SIGTERM by now
        assert grandchild.is_running()  # not the guard's to end: the parent said done
    finally:
        grandchild.kill()
