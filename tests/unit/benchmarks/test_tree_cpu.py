"""The benchmark harness's CPU sampler counts a client's whole process tree, children started
after it began included, and reads the load window's share of it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from measure import TreeCpu

# A parent that starts a busy child after a moment, then both spin until a file appears.
_TREE = """
import os, subprocess, sys, time
stop = sys.argv[1]
def spin():
    while not os.path.exists(stop):
        pass
if len(sys.argv) > 2:
    spin()
else:
    time.sleep(0.3)
    child = subprocess.Popen([sys.executable, __file__, stop, "child"])
    spin()
    child.wait()
"""


def test_a_child_started_later_is_counted_and_the_listing_is_not_every_sample(
        tmp_path: Path) -> None:
    script = tmp_path / "tree.py"
    script.write_text(_TREE)
    stop = tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, str(script), str(stop)])
    cpu = TreeCpu(proc.pid)
    try:
        # Wait (bounded) until the sampler has listed the child: two processes known.
        deadline = time.monotonic() + 60
        while len(cpu.last) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(cpu.last) == 2
        time.sleep(0.5)
    finally:
        stop.touch()
        proc.wait(60)
        cpu.stop()
    # The tree was listed far less often than its CPU was read.
    assert len(cpu.series) > 5 * cpu.listings > 0
    # Both processes' CPU is in the series: CPU seconds, whatever the load (each
    # interpreter's start alone takes some), over the whole sampled window.
    first, last = cpu.series[0][0], cpu.series[-1][0]
    assert cpu.cpu_between(first, last) > 0
