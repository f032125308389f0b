"""What a training log's numbers are in, and which readings are impossible.

Times: seconds or milliseconds since the run started, or Unix epoch stamps in seconds or
milliseconds. Unix stamps are told by their size (seconds from 1e9, 2001-09-09; milliseconds
from 1e11); milliseconds since the start look like seconds and must be declared
(``logs.runs[].units.time: ms``). Accuracy: a fraction, or a percent when a value is above 1
(or declared). A reading that cannot be right (a negative duration, a stamp before the run
started, an accuracy above 100 %, a mix of Unix and relative stamps) is a
:class:`~acceval.errors.StudyError` naming the file, the line and the fix: a log read wrong
would score a run wrong without a word. MLPerf ``:::MLLOG`` stamps are milliseconds by the
format and are read as such.
"""

from __future__ import annotations

from typing import Any

from acceval.errors import StudyError
from acceval.training.log import RunLog
from acceval.training.spec import TimeUnit, Units

#: A stamp from here up is a Unix time in seconds (2001-09-09) ...
UNIX_S = 1e9
#: ... and from here up one in milliseconds (1e11 s would be the year 5138).
UNIX_MS = 1e11


def _stamped(log: RunLog) -> list[Any]:
    return [*log.steps, *log.evals, *log.events]


def _where(log: RunLog, x: Any) -> str:
    line = getattr(x, "line", None)
    return f"{log.source}, line {line}" if line is not None else log.source


def _fail(log: RunLog, x: Any, what: str, fix: str) -> StudyError:
    where = _where(log, x)
    return StudyError(f"{where}: {what}", [(where, what, fix)])


def detect_time(log: RunLog) -> TimeUnit | None:
    """s (relative), unix_s or unix_ms from the stamps' size; None: no stamps."""
    stamps = [(x.t_s, x) for x in _stamped(log) if x.t_s is not None]
    if not stamps:
        return None
    lo = min(stamps, key=lambda p: p[0])
    hi = max(stamps, key=lambda p: p[0])
    kind: TimeUnit = "unix_ms" if hi[0] >= UNIX_MS else "unix_s" if hi[0] >= UNIX_S else "s"
    floor = UNIX_MS if kind == "unix_ms" else UNIX_S
    if kind != "s" and lo[0] < floor:
        raise _fail(log, lo[1], f"time {lo[0]:g} next to Unix stamps such as {hi[0]:g}: the "
                    "stamps mix two clocks", "log one clock (seconds since the start, or "
                    "Unix time) and declare it as logs.runs[].units.time")
    return kind


def _to_relative(log: RunLog, unit: TimeUnit) -> None:
    scale = 1000.0 if unit in ("ms", "unix_ms") else 1.0
    items = _stamped(log)
    for x in items:
        if x.t_s is not None:
            x.t_s /= scale
    if unit not in ("unix_s", "unix_ms"):
        return
    stamps = [x.t_s for x in items if x.t_s is not None]
    starts = [e.t_s - (e.duration_s or 0.0) for e in log.events_of("startup")
              if e.t_s is not None]
    origin = min([*stamps, *starts])
    for x in items:
        if x.t_s is not None:
            x.t_s -= origin


def _check_times(log: RunLog) -> None:
    for x in _stamped(log):
        if x.t_s is not None and x.t_s < 0:
            raise _fail(log, x, f"time {x.t_s:g} s is before the run started",
                        "declare logs.runs[].units.time (s, ms, unix_s or unix_ms)")
    for s in log.steps:
        for name in ("step_s", "data_s"):
            v = getattr(s, name)
            if v is not None and v < 0:
                raise _fail(log, s, f"{name} {v:g} is a negative duration",
                            f"fix the column mapped to {name} (a duration in seconds)")
    for e in log.events:
        if e.duration_s is not None and e.duration_s < 0:
            raise _fail(log, e, f"{e.kind} duration {e.duration_s:g} s is negative",
                        "fix the column mapped to duration_s (seconds)")


def _accuracy(log: RunLog, declared: str | None) -> None:
    accs = [(e.accuracy, e) for e in log.evals if e.accuracy is not None]
    if not accs:
        return
    top_v, top = max(accs, key=lambda p: p[0])
    low_v, low = min(accs, key=lambda p: p[0])
    percent = declared == "percent" or (declared is None and top_v > 1.0)
    ceiling = 100.0 if percent else 1.0
    if top_v > ceiling:
        raise _fail(log, top, f"accuracy {top_v:g} is above {ceiling:g}",
                    "an accuracy is a fraction (0-1) or a percent (0-100): fix the column, "
                    "or map the metric as eval_loss if it is not an accuracy")
    if low_v < 0:
        raise _fail(log, low, f"accuracy {low_v:g} is negative", "fix the column mapped to "
                    "eval_accuracy")
    if percent:
        for _, e in accs:
            assert e.accuracy is not None
            e.accuracy /= 100.0


def apply_units(log: RunLog, units: Units | None) -> RunLog:
    """The log on one clock (seconds since the run started) with accuracy as a fraction;
    raise :class:`StudyError` on a reading that cannot be right."""
    declared = units.time if units is not None else None
    if log.format in ("jsonl", "csv"):
        unit = declared or detect_time(log)
        if unit is not None:
            _to_relative(log, unit)
        _check_times(log)
    _accuracy(log, units.accuracy if units is not None else None)
    return log


__all__ = ["UNIX_MS", "UNIX_S", "apply_units", "detect_time"]
