"""A full disk or an unwritable output folder: said before the load when it can be seen then;
when the disk fills during a run, the run stops sending, keeps every part it wrote, writes
result.json and the report where it can, and ``--resume`` measures the rest once there is
room (docs/reliability.md)."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import acceval.checks
import acceval.results.store as store
from acceval.errors import AccevalError, StudyError
from acceval.pipeline import execute, resume
from acceval.results.store import read_records
from acceval.study import study_from_dict


def _study() -> dict[str, object]:
    return {
        "name": "disk",
        "tasks": {"source": "builtin:arithmetic", "count": 200, "seed": 1, "max_tokens": 8},
        "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
            "ttft_ms": 2, "itl_ms": 0, "output_tokens": 4}}}],
        "load": [{"concurrency": [2, 4], "min_duration_s": 3, "max_duration_s": 4,
                  "min_requests": 20}],
    }


class _FillsUp:
    """write_part that works ``room`` times, then fails as a full disk does."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.real = store.write_part
        self.refused = 0

    def __call__(self, table: object, final: Path) -> None:
        if self.room <= 0:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= 1
        self.real(table, final)  # type: ignore[arg-type]


def test_a_disk_that_fills_mid_run_stops_it_cleanly_and_resume_finishes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = study_from_dict(_study())
    full = _FillsUp(room=2)
    monkeypatch.setattr(store, "write_part", full)
    with pytest.raises(AccevalError) as err:
        execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    message = str(err.value)
    assert "No space left on device" in message and "stopped sending" in message
    assert "--resume" in message
    assert full.refused >= 1
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["interrupted"] is True
    assert "No space left on device" in result["warnings"][0]
    (t,) = result["log"]["targets"]
    assert len(t["points"]) < 2  # it stopped sending: the second point never ran
    kept = read_records(run_dir)
    assert f"{kept.num_rows} record(s) are kept" in message
    assert kept.num_rows > 0
    assert (run_dir / "report.html").exists()

    monkeypatch.setattr(store, "write_part", full.real)  # room again
    result2, same = resume(run_dir, progress=False)
    assert same == run_dir and not result2.interrupted
    assert [p.label for p in result2.targets[0].points] == ["concurrency 2", "concurrency 4"]
    assert all(p.stopped_by != "interrupted" for p in result2.targets[0].points)


def test_a_full_disk_that_refuses_the_result_too_keeps_the_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import acceval.results.files as files

    study = study_from_dict(_study())
    full = _FillsUp(room=1)
    monkeypatch.setattr(store, "write_part", full)
    real = files.durable_replace

    def no_room(tmp: Path, final: Path) -> None:
        if final.name in ("result.json", "report.html"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(tmp, final)

    monkeypatch.setattr(files, "durable_replace", no_room)
    with pytest.raises(AccevalError) as err:
        execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    assert "could not write result.json" in str(err.value)
    assert "acceval report" in str(err.value)
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert not (run_dir / "result.json").exists()
    assert not list(run_dir.glob(".*.tmp"))  # no half-written file left behind
    monkeypatch.undo()
    from acceval.analysis import load_result

    rebuilt = load_result(run_dir)
    assert rebuilt.targets[0].points and rebuilt.targets[0].points[0].sent > 0
    assert any("journal" in w for w in rebuilt.warnings)


def test_an_unwritable_or_full_output_folder_is_said_before_the_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = study_from_dict(_study())
    with pytest.raises(StudyError) as err:
        execute(study, base_dir=tmp_path, out_dir=Path("/proc/acceval-runs"), progress=False)
    assert any(p[0] == "--out" and "/proc" in p[1] for p in err.value.problems)

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    with monkeypatch.context() as m:  # a read-only mount: permission bits say writable
        m.setattr(acceval.checks.tempfile, "mkstemp", read_only)
        with pytest.raises(StudyError) as err:
            execute(study, base_dir=tmp_path, out_dir=tmp_path / "ro", progress=False)
    assert any(p[0] == "--out" and "cannot write" in p[1] and "Read-only" in p[1]
               for p in err.value.problems)
    monkeypatch.setattr(acceval.checks, "MIN_FREE_BYTES", 2**62)
    with pytest.raises(StudyError) as err:
        execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    assert any(p[0] == "--out" and "MiB free" in p[1] for p in err.value.problems)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_records_writer_gets_past_running_out_of_descriptors(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    from acceval.results.records import Record

    real = store.write_part
    calls = {"n": 0}

    def emfile_twice(table: object, final: Path) -> None:
        calls["n"] += 1
        if calls["n"] <= 2:
            raise OSError(errno.EMFILE, "Too many open files")
        real(table, final)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "write_part", emfile_twice)
    stops: list[OSError] = []
    w = store.RecordWriter(tmp_path, flush_every=5, on_error=stops.append)
    for i in range(23):
        w.add(Record(target="t", load_index=0, load_label="c", task_id=f"x{i}", request_id=i,
                     warmup=False, scheduled_ns=i, sent_ns=i, done_ns=i + 1))
        w.wait()
    w.finalize()
    assert not stops and w.error is None and w.retried == 2
    ids = sorted(read_records(tmp_path)["request_id"].to_pylist())
    assert ids == list(range(23))  # nothing lost, nothing twice
