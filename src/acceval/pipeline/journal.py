"""The run's journal (runlog.json): saved after each point once its records are on disk, kept
beside result.json when the run ends, and read back by ``--resume`` (or, when there is none, a
stored result.json's log) to learn what an earlier session finished."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from acceval.errors import AccevalError, UsageError
from acceval.pipeline.disk_guard import DiskGuard
from acceval.results.files import write_text_durable
from acceval.results.runlog import JOURNAL_FILE, Journal, RunLog
from acceval.results.store import RecordWriter
from acceval.run_result import (
    RESULT_FILE,
    DamagedResult,
    RunResult,
    quarantine_result,
    schema_version_of,
)


def journal_saver(run_dir: Path, base_dir: Path, log: RunLog, writer: RecordWriter,
                  guard: DiskGuard) -> Callable[[], None]:
    """Saves runlog.json after each point, once that point's records are on disk."""
    path = run_dir / JOURNAL_FILE

    def save() -> None:
        if guard.error is not None:
            return
        writer.flush()
        writer.wait()
        try:
            write_text_durable(path, Journal(study_dir=str(base_dir.resolve()),
                                             log=log).model_dump_json())
        except OSError as exc:
            guard.fail(exc)

    return save


def keep_final_journal(run_dir: Path, base_dir: Path, log: RunLog) -> None:
    """The journal, kept with the run's final log once result.json is written: a damaged
    result.json is rebuilt from it and the records exactly (analysis.rebuild_damaged)."""
    with suppress(OSError):  # result.json is written; the journal is only its spare
        write_text_durable(run_dir / JOURNAL_FILE, Journal(
            study_dir=str(base_dir.resolve()), log=log).model_dump_json())


def prior_log(run_dir: Path) -> tuple[RunLog, Path]:
    """What an earlier session of ``run_dir`` logged, and the folder its study came from."""
    if not (run_dir / "study.yaml").exists():
        raise UsageError(f"{run_dir}: not a run folder (no study.yaml); --resume takes the "
                         "folder an interrupted `acceval run` wrote")
    if (run_dir / RESULT_FILE).exists():
        try:
            if schema_version_of(run_dir) < 2:
                raise UsageError(f"{run_dir}: written by acceval 0.1, which kept no run log "
                                 "to resume from; run the study again")
            stored = RunResult.load(run_dir)
            return stored.log, Path(stored.environment.study_dir or run_dir)
        except DamagedResult as exc:
            # Its journal knows what finished: resume from it (a finished run's result is
            # then written again, measuring nothing).
            moved = quarantine_result(run_dir)
            print(f"acceval: {RESULT_FILE} was damaged ({exc.problem}); moved to "
                  f"{moved.relative_to(run_dir)}, resuming from the run's journal and "
                  "records", file=sys.stderr)
    if (run_dir / JOURNAL_FILE).exists():
        try:
            journal = Journal.model_validate_json(
                (run_dir / JOURNAL_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise AccevalError(f"{run_dir}/{JOURNAL_FILE} could not be read ({exc}); "
                               "run the study again") from exc
        return journal.log, Path(journal.study_dir)
    # Killed before it kept a journal (an older version): nothing is known to be finished.
    created = dt.datetime.fromtimestamp((run_dir / "study.yaml").stat().st_mtime, dt.UTC)
    return RunLog(run_id=run_dir.name, created_utc=created.isoformat()), run_dir
