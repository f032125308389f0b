"""A kill at any step of compaction reads back every record exactly once (issue 30).

A child process writes records in parts, then compacts them with every durable file step
(row group written, fsync, rename, removal) counted; the k-th step is a SIGKILL. For every
k until compaction runs through, the folder must read back each record exactly once, and
the next compaction must finish the job.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acceval.results.store import PARTS_DIR, RECORDS_FILE, RecordWriter, read_records
from acceval.runs_catalog import connect

HELPERS = Path(__file__).resolve().parents[2] / "helpers"
N = 35

_CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, {helpers!r})
import killpoints
from acceval.results.records import Record
from acceval.results.store import RecordWriter
run = Path(sys.argv[1]); start = int(sys.argv[2]); at = int(sys.argv[3])
w = RecordWriter(run, flush_every=10, flush_s=3600)
for i in range(start, start + {n}):
    w.add(Record(target="t" if i % 2 else "u", load_index=0, load_label="c1",
                 request_id=i, task_id=f"k{{i}}", sent_ns=i, done_ns=i + 5))
w.flush(); w.wait()
killpoints._patch()
killpoints.install(at)
w.finalize()
"""


def _compact_killed_at(run: Path, at: int, start: int = 0) -> int:
    code = _CHILD.format(helpers=str(HELPERS), n=N)
    proc = subprocess.run([sys.executable, "-c", code, str(run), str(start), str(at)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, -9), proc.stderr
    return proc.returncode


def _ids(run: Path) -> list[int]:
    return sorted(read_records(run, ["request_id"])["request_id"].to_pylist())


def test_a_kill_at_every_step_of_compaction_keeps_each_record_once(tmp_path: Path) -> None:
    killed_at = []
    for at in range(1, 60):
        run = tmp_path / f"k{at}"
        rc = _compact_killed_at(run, at)
        assert _ids(run) == list(range(N)), f"killed at step {at}"
        if rc == 0:
            break
        killed_at.append(at)
        # The next session's compaction (a report, a resume) finishes what was cut short.
        w = RecordWriter(run)
        w.finalize()
        assert _ids(run) == list(range(N)), f"compacted again after step {at}"
        assert (run / RECORDS_FILE).exists() and not (run / PARTS_DIR).exists()
    else:
        pytest.fail("compaction never ran through")
    # Steps: row groups and the close of the file, fsyncs, the rename, one removal per part.
    assert len(killed_at) >= 8


def test_a_resumed_run_compacts_again_without_losing_or_doubling(tmp_path: Path) -> None:
    """Parts written after a compaction (a resume) get numbers the file does not cover."""
    run = tmp_path / "r"
    assert _compact_killed_at(run, 10_000) == 0
    # Killed in the second compaction, right after the rename (before any part removal).
    for at in range(1, 40):
        again = tmp_path / f"r{at}"
        subprocess.run(["cp", "-r", str(run), str(again)], check=True)
        rc = _compact_killed_at(again, at, start=N)
        assert _ids(again) == list(range(2 * N)), f"killed at step {at}"
        if rc == 0:
            break


def test_the_sql_catalog_counts_each_record_once_after_a_kill(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = runs / "one"
    # Killed after the compacted file is renamed, with every part still there.
    for at in range(1, 60):
        if run.exists():
            subprocess.run(["rm", "-r", str(run)], check=True)
        _compact_killed_at(run, at)
        parts = list((run / PARTS_DIR).glob("part-*.parquet")) if (run / PARTS_DIR).exists() \
            else []
        if (run / RECORDS_FILE).exists() and len(parts) == 4:
            break
    else:
        pytest.fail("no kill left the compacted file and every part")
    with connect(runs) as con:
        row = con.execute("SELECT count(*), count(DISTINCT request_id) FROM records").fetchone()
    assert row == (N, N)
