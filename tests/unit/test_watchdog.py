"""The orphan guard ends what a SIGKILLed process started (issue 30), including
grandchildren in sessions of their own (what Ray's helpers do), and nothing on a normal
exit."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

# In a guarded script: wait until the watchdog has taken two snapshots since this call, read
# from its voluntary context switches (it blocks in select() once between snapshots), not
# from a fixed sleep: on a busy host the watchdog may get no CPU for seconds.
_NOTED = """
import psutil
def watchdog_noted():
    me = psutil.Process()
    wd = next(p for p in me.children() if "acceval.watchdog" in " ".join(p.cmdline()))
    start = wd.num_ctx_switches().voluntary
    deadline = time.monotonic() + 60  # a bound on waiting, not on the outcome
    while wd.num_ctx_switches().voluntary < start + 3 and time.monotonic() < deadline:
        time.sleep(0.05)
"""

_PARENT = """
import os, subprocess, sys, time
from acceval.watchdog import orphan_guard
""" + _NOTED + """
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
        watchdog_noted()  # the watchdog has seen both
        os.kill(os.getpid(), 9)
    sys.stdin.readline()  # the test holds both before the kid goes
    kid.kill(); kid.wait()
    print("left", flush=True)
"""


def _start(mode: str) -> tuple[subprocess.Popen[str], list[psutil.Process]]:
    proc = subprocess.Popen([sys.executable, "-c", _PARENT, mode], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    pids = [int(x) for x in proc.stdout.readline().split()]
    procs = [psutil.Process(p) for p in pids]
    with contextlib.suppress(BrokenPipeError):  # "die" may be gone already: it reads nothing
        try:
            proc.stdin.write("go\n")
        finally:
            proc.stdin.close()
    return proc, procs


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


_RESPAWNS = """
import os, signal, subprocess, sys, time
from acceval.watchdog import orphan_guard
""" + _NOTED + """
with orphan_guard():
    # A helper that answers SIGTERM by starting a replacement in a session of its own, as
    # a raylet replaces a worker that ended: the replacement is born after every snapshot.
    kid = subprocess.Popen([sys.executable, "-c",
        "import signal, subprocess, sys, time\\n"
        "def replace(*_):\\n"
        "    g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\\n"
        "                         start_new_session=True)\\n"
        "    open(sys.argv[1], 'w').write(str(g.pid))\\n"
        "signal.signal(signal.SIGTERM, replace)\\n"
        "print('ready', flush=True)\\n"
        "while True: time.sleep(0.1)\\n", sys.argv[1]], stdout=subprocess.PIPE, text=True)
    kid.stdout.readline()
    print(kid.pid, flush=True)
    watchdog_noted()  # the watchdog has seen it
    os.kill(os.getpid(), 9)
"""


def test_what_a_helper_starts_while_it_is_ended_is_ended_too(tmp_path: Path) -> None:
    born = tmp_path / "replacement.pid"
    proc = subprocess.Popen([sys.executable, "-c", _RESPAWNS, str(born)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    kid = psutil.Process(int(proc.stdout.readline()))
    assert proc.wait(timeout=60) == -signal.SIGKILL
    proc.stdout.close()
    deadline = time.monotonic() + 60  # a bound on waiting, not on the outcome
    while not born.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    replacement = psutil.Process(int(born.read_text()))
    _, alive = psutil.wait_procs([kid, replacement], timeout=30)
    for p in alive:  # clean up before failing
        p.kill()
    assert not alive, f"outlived the run: {[' '.join(p.cmdline()) for p in alive]}"
