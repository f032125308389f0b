"""SIGTERM (timeout, docker stop, CI cancellation) and SIGHUP stop a run the way Ctrl-C
does: what was measured is saved (records, result.json with the point it stopped inside,
report.html) and the local server is stopped with the run."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pyarrow.compute as pc
import pytest

from acceval.results.store import PARTS_DIR, read_records
from helpers.cli import start_long_run


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_mid_point_keeps_every_record_and_stops_the_server(
        tmp_path: Path, sig: signal.Signals) -> None:
    proc, runs = start_long_run(tmp_path, "termme", min_parts=2, capture=True)
    try:
        parts = list(runs.glob(f"*/{PARTS_DIR}/part-*.parquet"))
        assert len(parts) >= 2, "the run never wrote records"
        assert proc.poll() is None, "the run finished before it could be stopped"
        proc.send_signal(sig)  # to the run only: it must stop its server itself
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1, err
    assert "interrupted" in err and "Traceback" not in err
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    assert (run_dir / "report.html").exists()
    result = json.loads((run_dir / "result.json").read_text())
    assert result["interrupted"] is True
    (t,) = result["targets"]
    (point,) = t["points"]
    assert point["stopped_by"] == "interrupted"
    table = read_records(run_dir)
    assert 0 < table.num_rows < 5000
    measured = table.filter(pc.invert(table["warmup"])).num_rows
    assert point["summary"]["requests"] == measured  # every stored record is in the result
    pid = t["local_server"]["pid"]
    assert pid and not _alive(pid), "the local server outlived the run"


def test_sigterm_stops_a_run_started_with_sigint_ignored(tmp_path: Path) -> None:
    # A background job of a script starts with SIGINT ignored; SIGTERM must still stop the
    # run the way Ctrl-C does (it is turned into SIGINT inside).
    proc, runs = start_long_run(tmp_path, "bgjob", min_parts=2, capture=True,
                                ignore_sigint=True)
    try:
        assert proc.poll() is None, "the run finished before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 1, err
    assert "interrupted" in err and "Traceback" not in err
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    assert json.loads((run_dir / "result.json").read_text())["interrupted"] is True
