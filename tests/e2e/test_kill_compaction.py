"""`acceval run` SIGKILLed inside the compaction of its records (issue 30): `report` counts
each request the server logged exactly once, and `--resume` finishes the run.

Before the fix the compacted file was written, then the parts removed, and every reader
read both: a kill in between doubled every count."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acceval.results.store import PARTS_DIR, RECORDS_FILE, read_records
from helpers.cli import run_cli, write_study

KILLSITE = Path(__file__).resolve().parents[1] / "helpers" / "killsite"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    log = tmp_path / "served.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval.serve", "mock", "--port", "0", "--option", "ttft_ms=1",
         "--option", "output_tokens=2", "--log", str(log)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    port = re.search(r":(\d+)/v1", proc.stdout.readline()).group(1)  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1", log, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)
        proc.stdout.close()


def _served(log: Path) -> int:
    return sum(1 for _ in log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


@pytest.mark.parametrize("step", [3, 7])
def test_a_kill_inside_compaction_counts_each_request_once(
        tmp_path: Path, server: tuple[str, Path, subprocess.Popen[str]], step: int) -> None:
    base_url, log, serving = server
    study = write_study(tmp_path / "s.yaml", {
        "name": "compact",
        "tasks": {"source": "builtin:arithmetic", "count": 30, "seed": 1, "max_tokens": 4},
        "targets": [{"name": "m", "endpoint": {"base_url": base_url, "model": "mock"}}],
        "load": [{"concurrency": [1, 3]}],
    })
    env = {**os.environ, "ACCEVAL_KILL_COMPACTION_STEP": str(step),
           "PYTHONPATH": f"{KILLSITE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    runs = tmp_path / "runs"
    proc = subprocess.run([sys.executable, "-m", "acceval", "run", str(study), "--out",
                           str(runs), "--no-progress"], env=env, capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == -9, proc.stderr  # it died inside compaction, at that step
    # The server's log is complete once it stops; and a resume must need no server.
    serving.terminate()
    serving.wait(timeout=20)
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    assert not (run_dir / "result.json").exists()
    if step >= 6:  # the compacted file was renamed into place; parts are still there
        assert (run_dir / RECORDS_FILE).exists() and (run_dir / PARTS_DIR).exists()
    kept = read_records(run_dir, ["request_id", "warmup"])
    ids = kept["request_id"].to_pylist()
    assert len(ids) == len(set(ids)) == _served(log) > 0
    measured = len(ids) - sum(kept["warmup"].to_pylist())

    rep = run_cli("report", str(run_dir), "--format", "json", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    points = json.loads(rep.stdout)["targets"][0]["points"]
    assert sum(p["summary"]["requests"] for p in points) == measured

    again = run_cli("run", "--resume", str(run_dir), "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (run_dir / "result.json").exists() and not (run_dir / PARTS_DIR).exists()
    assert read_records(run_dir).num_rows == _served(log)  # nothing was sent again
    assert "measuring nothing again" in again.stdout + again.stderr
    stored = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    assert sum(p["summary"]["requests"] for p in stored["targets"][0]["points"]) == measured
    assert not stored["log"]["interrupted"]
