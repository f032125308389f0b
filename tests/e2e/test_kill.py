"""A run killed with SIGKILL halfway keeps a readable record of what it completed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from acceval.results.runlog import JOURNAL_FILE
from acceval.results.store import PARTS_DIR, read_records
from helpers.cli import run_cli, start_long_run


def test_sigkill_halfway_leaves_readable_records(tmp_path: Path) -> None:
    proc, runs = start_long_run(tmp_path, "killme", min_parts=2)
    try:
        parts = list(runs.glob(f"*/{PARTS_DIR}/part-*.parquet"))
        assert len(parts) >= 2, "the run never wrote records"
        assert proc.poll() is None, "the run finished before it could be killed"
    finally:
        # SIGKILL the run and its local server (same session): no cleanup code runs.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    assert not (run_dir / "result.json").exists()  # it really died mid-run
    table = read_records(run_dir)
    assert 0 < table.num_rows < 5000
    ids = table["request_id"].to_pylist()
    assert len(ids) == len(set(ids))
    # Every stored record is a finished request: stamped and classified or answered.
    assert table["done_ns"].null_count == 0
    assert all(r["error_kind"] is not None or r["output_text"] is not None
               for r in table.select(["error_kind", "output_text"]).to_pylist())
    # ... and the run can still be reported from what it kept.
    rep = run_cli("report", str(run_dir), "--format", "md", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "This run was interrupted" in rep.stdout
    assert "rebuilt from the run's journal" in rep.stdout
    assert "| m | concurrency 4 |" in rep.stdout
    # A run folder of a version that kept no journal: the fixed points from the records.
    (run_dir / JOURNAL_FILE).unlink()
    rep = run_cli("report", str(run_dir), "--format", "md", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "rebuilt from records" in rep.stdout and "| m | concurrency 4 |" in rep.stdout


def test_sigkill_of_the_run_takes_its_local_server_with_it(tmp_path: Path) -> None:
    import psutil

    from acceval.serve._process import OWNER_FILE, WORKDIR_PREFIX, clean_stale_workdirs

    proc, _ = start_long_run(tmp_path, "orphan")
    try:
        servers = [c for c in psutil.Process(proc.pid).children(recursive=True)
                   if "acceval.serve" in " ".join(c.cmdline())]
        assert servers, "no local server was running"
        workdirs = [d for d in Path(__import__("tempfile").gettempdir()).glob(
            f"{WORKDIR_PREFIX}*") if (d / OWNER_FILE).exists()
            and (d / OWNER_FILE).read_text() == str(proc.pid)]
        assert workdirs
        os.kill(proc.pid, signal.SIGKILL)  # the run only: no cleanup code of it runs
        proc.wait()
        _, alive = psutil.wait_procs(servers, timeout=10)
        assert not alive, "the local server outlived a SIGKILLed run"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # The next start cleans them: this call, or a local server another test started meanwhile
    # (a start cleans every dead owner's folder), but nothing may be left.
    cleaned = set(clean_stale_workdirs())
    assert all(d in cleaned or not d.exists() for d in workdirs)
    assert not any(d.exists() for d in workdirs)
