"""SIGKILL of `acceval run --clients 2` (a private Ray, a local server) leaves no process
of its alive (issue 30): before the orphan guard, two Ray helpers were still running under
PID 1 40 s later.

Marked `timing`: whether there is a run to kill depends on host load. Ray gives its node a
fixed 30 s to register, and on this 2-core host under a load of 10-19 it did not in about
one try of three (the run then says so and exits, and the test is skipped with that
message); in the timing phase, with the rest of the suite done, it comes up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import psutil
import pytest

from acceval.results.store import PARTS_DIR
from helpers.cli import mock_target, write_study

pytestmark = pytest.mark.skipif(find_spec("ray") is None,  # looked up, not imported
                                reason="the [ray] extra is part of make test")


def _cmdlines(procs: list[psutil.Process]) -> dict[psutil.Process, str]:
    """Each process's command line; one that ended meanwhile is left out (listing a tree and
    reading it are not one step)."""
    out = {}
    for p in procs:
        try:
            out[p] = " ".join(p.cmdline())
        except psutil.Error:
            continue
    return out


@pytest.mark.timing
@pytest.mark.cpu_heavy
def test_sigkill_of_a_ray_run_leaves_no_helper(tmp_path: Path) -> None:
    study = write_study(tmp_path / "s.yaml", {
        "name": "orphans",
        "tasks": {"source": "builtin:arithmetic", "count": 2000, "seed": 1, "max_tokens": 8},
        "targets": [mock_target("m", ttft_ms=5, itl_ms=1, output_tokens=4)],
        "load": [{"concurrency": [2], "max_duration_s": 120}],
    })
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval", "run", str(study), "--out", str(runs),
         "--no-progress", "--clients", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    helpers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None \
                and len(list(runs.glob(f"*/{PARTS_DIR}/part-*.parquet"))) < 2:
            time.sleep(0.3)
        if proc.poll() is not None:
            err = proc.communicate()[1]
            if "could not start or join a private Ray" in err:  # said, not a traceback
                pytest.skip(f"Ray's node did not come up on this host: {err[-200:]}")
            pytest.fail(f"the run ended before it could be killed: {err[-2000:]}")
        time.sleep(1.0)  # the watchdog's snapshot is half a second old at most
        tree = _cmdlines(psutil.Process(proc.pid).children(recursive=True))
        watchdogs = [p for p in psutil.Process(proc.pid).children()
                     if "acceval.watchdog" in tree.get(p, "")]
        helpers = [p for p in tree if p not in watchdogs]
        names = " ".join(tree[p] for p in helpers)
        assert "raylet" in names and "gcs_server" in names and "acceval.serve" in names
        assert watchdogs, "no orphan guard was running"
        os.kill(proc.pid, signal.SIGKILL)  # acceval alone: none of its cleanup code runs
        proc.wait()
        _, alive = psutil.wait_procs(helpers + watchdogs, timeout=60)
        assert not alive, "outlived the run: " + "; ".join(
            " ".join(p.cmdline())[:80] for p in alive)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for p in helpers:
            if p.is_running():
                p.kill()
        if proc.stderr is not None:
            proc.stderr.close()
