"""What ``validate`` (and ``run``, before any load) checks of a training section's logs.

Every log path and trace exists and is readable, and every log holds data: a log that is
empty, binary or has nothing the column mapping understands is "no data", a different
outcome from a run that never reached the target, and a study error unless the study marks
that log ``optional``. Without a declared target, each platform's logs must name an MLPerf
benchmark whose target is one number. A reading that cannot be right (units, negative durations, an
accuracy above its range: :mod:`acceval.training.units`) is an error naming file and line.
"""

from __future__ import annotations

import os
from pathlib import Path

from acceval.errors import Problem, StudyError
from acceval.training.ingest import log_runs, rank_traces, read_log
from acceval.training.log import RunLog
from acceval.training.quality import resolve
from acceval.training.spec import LogRun, Logs, Training

_PROBE = 4096


def no_data(log: RunLog, path: Path) -> str | None:
    """Why a log holds nothing to score (None: it has data)."""
    st = log.mlperf
    if log.steps or log.evals or (st is not None and st.run_start_ms is not None):
        return None
    try:
        with path.open("rb") as f:
            head = f.read(_PROBE)
    except OSError:
        head = b""
    if b"\0" in head:
        return "binary, not a text log"
    if log.lines == 0:
        return "empty: no records"
    return (f"nothing mapped: none of its {log.lines} records has a step with a value the "
            f"columns name ({log.unread.count} not understood)")


def _readable(path: Path, where: str, what: str) -> list[Problem]:
    if not path.exists():
        return [(where, f"{what} {path} does not exist", "give a path relative to the "
                 "study file")]
    if not os.access(path, os.R_OK) or (path.is_file() and not _opens(path)):
        return [(where, f"{what} {path} is not readable", "fix its permissions")]
    return []


def _opens(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            f.read(1)
        return True
    except OSError:
        return False


def _run_problems(logs: Logs, run: LogRun, base_dir: Path,
                  where: str) -> tuple[list[Problem], RunLog | None]:
    path = base_dir / run.path
    out = _readable(path, f"{where}.path", "training log")
    for t in rank_traces(run, base_dir):
        out += _readable(Path(t), f"{where}.trace", "profiler trace")
    if out:
        return out, None
    try:
        log = read_log(path, logs.format, logs.columns, units=run.units)
    except StudyError as exc:
        return (list(exc.problems) or [(f"{where}.path", str(exc), "")]), None
    except OSError as exc:
        return [(f"{where}.path", f"training log {path} cannot be read: {exc}", "")], None
    why = no_data(log, path)
    if why is not None:
        return ([] if run.optional else [
            (f"{where}.path", f"no data in {path}: {why}",
             "check logs.format and logs.columns (docs/training.md), or mark the run "
             "optional: true")]), None
    return [], log


def log_problems(spec: Training, base_dir: Path) -> list[Problem]:
    """Every problem of the training logs, found before any load: paths, contents, and a
    quality target for each platform (declared, or its MLPerf benchmark's)."""
    out: list[Problem] = []
    for i, p in enumerate(spec.platforms):
        if p.logs is None:
            continue
        where = f"training.platforms[{i}].logs"
        try:
            runs = log_runs(p.logs, base_dir)
        except StudyError as exc:
            out += [(f"{where}.dir", msg, fix) for _, msg, fix in exc.problems]
            continue
        read: list[RunLog] = []
        for j, run in enumerate(runs):
            problems, log = _run_problems(p.logs, run, base_dir, f"{where}.runs[{j}]")
            out += problems
            read += [log] if log is not None else []
        tgt = resolve(spec.target, read) if read else None
        if tgt is not None and tgt.failure:
            out.append(("training.target" if tgt.target is None else where,
                        f"{p.name}: {tgt.failure}", "declare training.target, e.g. "
                        "{max_eval_loss: 1.8} or {min_accuracy: 0.75}"))
    return out


__all__ = ["log_problems", "no_data"]
