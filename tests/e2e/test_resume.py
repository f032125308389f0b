"""``acceval run --resume RUN_DIR``: a killed or interrupted run continues in its folder; the
points it finished are kept, the unfinished ones are measured again, and the result says
which (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.results.runlog import JOURNAL_FILE
from acceval.results.store import read_records
from helpers.cli import mock_target, run_cli, run_cli_in_process, write_study


def _study(tmp_path: Path) -> Path:
    return write_study(tmp_path / "s.yaml", {
        "name": "resumable",
        "tasks": {"source": "builtin:arithmetic", "count": 200, "seed": 1, "max_tokens": 8},
        "targets": [mock_target("a", ttft_ms=5, itl_ms=1, output_tokens=4),
                    mock_target("b", ttft_ms=5, itl_ms=1, output_tokens=4)],
        "load": [{"concurrency": [1, 2], "min_duration_s": 1.5, "max_duration_s": 3,
                  "min_requests": 20}],
    })


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval", "run", str(_study(tmp_path)), "--out", str(runs),
         "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    return proc, runs


def _journaled(run_dir: Path) -> dict[str, list[dict[str, object]]]:
    try:
        log = json.loads((run_dir / JOURNAL_FILE).read_text())["log"]
    except (OSError, ValueError, KeyError):
        return {}
    return {t["name"]: t["points"] for t in log["targets"]}


def _wait_inside_second_target(runs: Path, proc: subprocess.Popen[str]) -> Path:
    """Until target a has finished both points and one of b's points is under way with
    records on disk."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        dirs = [p for p in runs.glob("*") if p.is_dir()]
        if dirs and len(_journaled(dirs[0]).get("a", [])) == 2:
            _, unfinished = _unfinished_records(dirs[0])
            if unfinished > 0:
                return dirs[0]
        time.sleep(0.05)
    raise AssertionError("the run never reached target b")


def _unfinished_records(run_dir: Path) -> tuple[set[tuple[str, int]], int]:
    """The points the journal kept, and how many stored records belong to none of them.

    The records are read before the journal: a record of a point the journal does not hold
    yet was then from a point still under way."""
    rows = read_records(run_dir, ["target", "load_index"])
    kept = {(t, int(str(p["index"]))) for t, pts in _journaled(run_dir).items() for p in pts}
    unfinished = sum(1 for t, i in zip(rows["target"].to_pylist(),
                                       rows["load_index"].to_pylist(), strict=True)
                     if (t, i) not in kept)
    return kept, unfinished


def _sigkill_inside_a_point(tmp_path: Path) -> tuple[Path, set[tuple[str, int]], int]:
    """SIGKILL the run while one of b's points is under way with records on disk.

    The point can end between the look and the kill (a slow, loaded machine widens that
    window): then nothing is left unfinished, and the run is started again in a fresh folder,
    three times at most."""
    for attempt in range(3):
        base = tmp_path / f"try{attempt}"
        base.mkdir()
        proc, runs = _start(base)
        try:
            run_dir = _wait_inside_second_target(runs, proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        assert not (run_dir / "result.json").exists()
        kept, unfinished = _unfinished_records(run_dir)
        if unfinished > 0:
            return run_dir, kept, unfinished
    raise AssertionError("three kills in a row fell between two of b's points")


def test_sigkill_then_resume_keeps_the_finished_points_and_measures_the_rest(
        tmp_path: Path) -> None:
    run_dir, kept_points, unfinished = _sigkill_inside_a_point(tmp_path)
    before = read_records(run_dir)
    a_before = sorted(before.filter(pc.equal(before["target"], "a"))["request_id"].to_pylist())

    # What the journal kept is reported before any resume: a's points exactly.
    rep = run_cli("report", str(run_dir), "--format", "md", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "journal" in rep.stdout and "| a | concurrency 2 |" in rep.stdout

    res = run_cli("run", "--resume", str(run_dir), "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert result["interrupted"] is False
    (resumed,) = result["log"]["resumes"]
    assert resumed["kept"] == ["a: concurrency 1", "a: concurrency 2"] + (
        ["b: concurrency 1"] if ("b", 0) in kept_points else [])
    assert "b: concurrency 2" in resumed["remeasured"]
    assert resumed["set_aside"] == unfinished
    aside = pq.read_table(run_dir / "superseded" / "records-before-resume-1.parquet")
    assert aside.num_rows == unfinished
    assert any("resumed" in w and "b: concurrency 2" in w for w in result["warnings"])

    sessions = {(t["name"], p["label"]): p["session"]
                for t in result["log"]["targets"] for p in t["points"]}
    assert sessions[("a", "concurrency 1")] == sessions[("a", "concurrency 2")] == 0
    assert sessions[("b", "concurrency 2")] == 1
    by_target = {t["name"]: t for t in result["targets"]}
    assert [p["label"] for p in by_target["b"]["points"]] == ["concurrency 1", "concurrency 2"]
    assert all(p["stopped_by"] != "interrupted" for t in result["targets"]
               for p in t["points"])

    after = read_records(run_dir)
    ids = after["request_id"].to_pylist()
    assert len(ids) == len(set(ids))  # the resumed session's ids continue after the kept ones
    a_after = sorted(after.filter(pc.equal(after["target"], "a"))["request_id"].to_pylist())
    assert a_after == a_before  # a's records are the first session's, untouched
    # Every stored record belongs to a point of the result, and the new points come after
    # the kept ones on the run's one timeline.
    measured = {(t["name"], p["index"]): p["summary"]["requests"]
                for t in result["targets"] for p in t["points"]}
    counted = after.filter(pc.invert(after["warmup"])).group_by(
        ["target", "load_index"]).aggregate([("request_id", "count")])
    assert {(r["target"], r["load_index"]): r["request_id_count"]
            for r in counted.to_pylist()} == measured
    a_end = max(p["ended_ns"] for p in by_target["a"]["points"])
    assert by_target["b"]["points"][1]["started_ns"] > a_end
    assert (run_dir / "report.html").exists()
    # The journal stays, with the final log: a damaged result.json is rebuilt from it.
    assert json.loads((run_dir / JOURNAL_FILE).read_text())["log"]["finished_utc"]

    again = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert again.returncode == 2 and "nothing to resume" in again.stderr


def test_an_interrupted_run_resumes_from_its_result(tmp_path: Path) -> None:
    proc, runs = _start(tmp_path)
    try:
        run_dir = _wait_inside_second_target(runs, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 1 and f"acceval run --resume {run_dir}" in err
    stored = json.loads((run_dir / "result.json").read_text())
    assert stored["interrupted"] is True
    res = run_cli("run", "--resume", str(run_dir), "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert result["interrupted"] is False
    assert [len(t["points"]) for t in result["targets"]] == [2, 2]
    assert result["log"]["resumes"][0]["kept"][:2] == ["a: concurrency 1", "a: concurrency 2"]


def test_resume_needs_a_run_folder_alone(tmp_path: Path) -> None:
    study = _study(tmp_path)
    both = run_cli_in_process("run", str(study), "--resume", str(tmp_path), cwd=tmp_path)
    assert both.returncode == 2 and "RUN_DIR alone" in both.stderr
    neither = run_cli_in_process("run", cwd=tmp_path)
    assert neither.returncode == 2 and "--resume RUN_DIR" in neither.stderr
    not_a_run = run_cli_in_process("run", "--resume", str(tmp_path / "runs-nope"), cwd=tmp_path)
    assert not_a_run.returncode == 2
    (tmp_path / "empty").mkdir()
    empty = run_cli_in_process("run", "--resume", str(tmp_path / "empty"), cwd=tmp_path)
    assert empty.returncode == 2 and "not a run folder" in empty.stderr
