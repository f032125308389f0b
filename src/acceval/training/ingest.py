"""Reading training logs: JSONL and CSV step logs with a column mapping, MLPerf ``:::MLLOG``
lines, and TensorBoard event files (with tensorboard's own event reader).

Every reader returns a :class:`~acceval.training.log.RunLog` on one clock (seconds since
the run started; Unix stamps are made relative to the run's start) and counts every line it
could not understand, with examples. Keys a reader understood but the metrics do not need
are counted by name in ``unused``. Formats and mappings: docs/training.md.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from acceval.errors import StudyError
from acceval.input_files import DATA_MAX_BYTES, loads_json, read_text
from acceval.training.log import Eval, Event, MlperfStamps, RunLog, Step
from acceval.training.mlperf import rule_for
from acceval.training.spec import Columns, LogFormat, LogRun, Logs, TraceFormat, Units
from acceval.training.units import apply_units

_MLLOG = ":::MLLOG"


#: Fields where NaN or infinity is data (a diverged run), not a bad line.
_MAY_DIVERGE = frozenset({"loss", "grad_norm"})


class _Bad(ValueError):
    """A mapped field holds something that is not a number."""


def _num(v: Any, *, finite: bool = True) -> float | None:
    """A number, or None when missing; ``finite``: NaN and infinities make the line unread
    (a time, a count, a duration). A loss or gradient norm is read with ``finite=False``:
    the stability metrics count a NaN there (nan_steps, diverged)."""
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        raise _Bad(f"{v!r} is not a number")
    if isinstance(v, int | float | str):
        try:
            x = float(v)
        except (ValueError, OverflowError):
            raise _Bad(f"{v!r} is not a number") from None
        if finite and not math.isfinite(x):
            raise _Bad(f"{v!r} is not a finite number")
        return x
    raise _Bad(f"{type(v).__name__} is not a number")


def _open_log(path: Path) -> io.StringIO:
    """The log's text, read within the bounded reader's limits (a regular file, at most
    :data:`~acceval.input_files.DATA_MAX_BYTES`; bad bytes replaced, as lines are counted)."""
    return io.StringIO(read_text(path, max_bytes=DATA_MAX_BYTES, what="training log",
                                 where="training.platforms[].logs", lenient=True),
                       newline=None)


def _int(v: Any) -> int | None:
    x = _num(v)
    if x is None:
        return None
    if not math.isfinite(x) or x != int(x):
        raise _Bad(f"step {v!r} is not an integer")
    return int(x)


def _get(d: Mapping[str, Any], key: str | None) -> Any:
    return d.get(key) if key is not None else None


def _record(d: Mapping[str, Any], cols: Columns, log: RunLog) -> bool:
    """One JSONL object or CSV row into the log; False when nothing in it was understood."""
    mapped = {k for k in cols.model_dump().values() if k is not None}
    step = _int(_get(d, cols.step))
    t = _num(_get(d, cols.time_s))
    kind = _get(d, cols.event)
    if kind is not None:
        if not isinstance(kind, str) or not kind:
            raise _Bad(f"event {kind!r} is not a name")
        log.events.append(Event(kind, t, step, _num(_get(d, cols.duration_s)),
                                _num(d.get("value")), str(d.get("detail") or "")))
        return True
    ev_loss, ev_acc = _num(_get(d, cols.eval_loss)), _num(_get(d, cols.eval_accuracy))
    fields = {name: _num(_get(d, getattr(cols, name)), finite=name not in _MAY_DIVERGE)
              for name in ("loss", "grad_norm", "tokens", "step_s", "data_s")}
    understood = False
    if step is not None and (ev_loss is not None or ev_acc is not None):
        log.evals.append(Eval(step, t, ev_loss, ev_acc))
        understood = True
    if step is not None and any(v is not None for v in fields.values()):
        log.steps.append(Step(step, t, fields["loss"], fields["grad_norm"], fields["tokens"],
                              fields["step_s"], fields["data_s"]))
        understood = True
    if understood:
        for k in d:
            if k not in mapped and k not in ("value", "detail"):
                log.unused[k] = log.unused.get(k, 0) + 1
    return understood


def _number_lines(log: RunLog, before: tuple[int, int, int], line: int) -> None:
    for items, n in ((log.steps, before[0]), (log.evals, before[1]), (log.events, before[2])):
        for x in items[n:]:
            x.line = line


def _rows(log: RunLog, rows: Iterable[tuple[str, Mapping[str, Any] | None]],
          cols: Columns, line_offset: int = 0) -> None:
    for raw, d in rows:
        log.lines += 1
        if d is None:
            log.unread.add(raw)
            continue
        before = (len(log.steps), len(log.evals), len(log.events))
        try:
            ok = _record(d, cols, log)
            _number_lines(log, before, log.lines + line_offset)
        except _Bad as exc:
            log.unread.add(f"{raw} ({exc})")
            continue
        if not ok:
            log.unread.add(raw)


def _jsonl_rows(path: Path) -> Iterable[tuple[str, Mapping[str, Any] | None]]:
    with _open_log(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                d = loads_json(line, non_finite="keep")
            except ValueError:
                yield line, None
                continue
            yield line, d if isinstance(d, dict) else None


def read_jsonl(path: Path, cols: Columns) -> RunLog:
    log = RunLog(source=str(path), format="jsonl")
    _rows(log, _jsonl_rows(path), cols)
    return log


def read_csv(path: Path, cols: Columns) -> RunLog:
    log = RunLog(source=str(path), format="csv")
    with _open_log(path) as f:
        reader = csv.DictReader(f)
        rows = ((",".join(str(v) for v in r.values()),
                 {k: v for k, v in r.items() if k is not None and v not in (None, "")})
                for r in reader)
        try:
            _rows(log, rows, cols, line_offset=1)   # the header is line 1
        except csv.Error as exc:  # a field over csv's limit, a NUL: the rest is unreadable
            raise StudyError(f"{path}: not a CSV log acceval can read after line "
                             f"{reader.line_num} ({exc})",
                             [(str(path), f"CSV error: {exc}",
                               "fix that line, or name a JSONL log instead")]) from None
    return log


# --- MLPerf :::MLLOG ---------------------------------------------------------------------------

#: MLPerf keys the metrics read, and what they become (the rest are counted as unused).
_MLLOG_EVENTS = {"run_stop": "run_end", "checkpoint_save": "checkpoint_save",
                 "checkpoint_restore": "checkpoint_restore"}
_MLLOG_STEP_KEYS = ("step", "step_num", "samples_count", "epoch_num", "epoch_count")


def _mllog_step(meta: Mapping[str, Any], cols: Columns) -> int | None:
    for key in (cols.step, *_MLLOG_STEP_KEYS):
        if key in meta:
            return _int(meta[key])
    return None


_SUBMISSION = {"submission_benchmark": "benchmark", "submission_platform": "platform",
               "submission_org": "org"}


def _mllog_stamp(st: MlperfStamps, key: str, t_ms: float | None,
                 meta: Mapping[str, Any]) -> None:
    if t_ms is None:
        raise _Bad(f"{key} without time_ms")
    if key == "init_start":   # one per rank is allowed: the first one starts the clock
        st.init_start_ms = t_ms if st.init_start_ms is None else min(st.init_start_ms, t_ms)
    elif key == "init_stop":
        st.init_stop_ms = t_ms
    elif key == "run_start":
        st.run_start_ms = t_ms
    else:
        st.run_stop_ms, st.status = t_ms, str(meta.get("status") or "") or None


def read_mllog(path: Path, cols: Columns) -> RunLog:
    """MLPerf logging lines (mlcommons/logging): ``:::MLLOG {json}``; everything else on the
    line before the marker (a launcher's prefix) is ignored.

    The clock starts at ``run_start`` (MLPerf's timed region; ``init_start``..``init_stop``
    is start-up, kept beside it), ``run_stop`` ends the run and carries its status;
    ``eval_accuracy`` is the evaluation, read as a loss when the named benchmark's target is
    a loss or log perplexity (the LLM benchmarks) or when ``columns.eval_loss`` names it;
    ``train_loss`` is the step loss."""
    log = RunLog(source=str(path), format="mllog")
    st = MlperfStamps()
    raw_evals: list[tuple[int, float | None, float | None, bool, int]] = []
    eval_loss_key = cols.eval_loss if cols.eval_loss != "eval_loss" else None
    loss_key = cols.loss if cols.loss not in (None, "loss") else "train_loss"
    with _open_log(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            log.lines += 1
            at = line.find(_MLLOG)
            if at < 0:
                log.unread.add(line)
                continue
            try:
                d = loads_json(line[at + len(_MLLOG):], non_finite="keep")
                key, t_ms = d["key"], _num(d.get("time_ms"))
                meta = d.get("metadata") or {}
                if not isinstance(key, str) or not isinstance(meta, dict):
                    raise _Bad("key or metadata of the wrong type")
                t = None if t_ms is None else t_ms / 1000.0
                if key in ("run_start", "init_start", "init_stop", "run_stop"):
                    _mllog_stamp(st, key, t_ms, meta)
                if key in _SUBMISSION:
                    setattr(st, _SUBMISSION[key], str(d.get("value")))
                elif key in _MLLOG_EVENTS:
                    log.events.append(Event(_MLLOG_EVENTS[key], t, _mllog_step(meta, cols),
                                            detail=str(meta.get("status") or ""),
                                            line=log.lines))
                elif key == "eval_accuracy" or key == eval_loss_key:
                    step = _mllog_step(meta, cols)
                    if step is None:
                        raise _Bad("an evaluation without a step, sample or epoch count")
                    raw_evals.append((step, t, _num(d.get("value")), key == eval_loss_key,
                                      log.lines))
                elif key == loss_key:
                    step = _mllog_step(meta, cols)
                    if step is None:
                        raise _Bad("a train loss without a step")
                    log.steps.append(Step(step, t, loss=_num(d.get("value"), finite=False),
                                          line=log.lines))
                elif key not in ("run_start", "init_start", "init_stop"):
                    log.unused[key] = log.unused.get(key, 0) + 1
            except (ValueError, KeyError, TypeError) as exc:
                log.unread.add(f"{line} ({exc})")
    rule = rule_for(st.benchmark)
    rule_loss = rule is not None and rule.metric == "eval_loss"
    for step, t, value, as_loss, at in raw_evals:
        loss = as_loss or rule_loss
        log.evals.append(Eval(step, t, value if loss else None, None if loss else value,
                              line=at))
    if st.init_start_ms is not None and st.init_stop_ms is not None:
        log.events.append(Event("startup", st.init_stop_ms / 1000.0, None, st.init_s))
    log.mlperf = st
    origin_ms = st.run_start_ms if st.run_start_ms is not None else st.init_start_ms
    return _relative_clock(log, None if origin_ms is None else origin_ms / 1000.0)


# --- the clock ---------------------------------------------------------------------------------

def _relative_clock(log: RunLog, origin: float | None) -> RunLog:
    """Stamps become seconds since ``origin`` (MLPerf's ``run_start``)."""
    if origin is None:
        return log
    items: list[Step | Eval | Event] = [*log.steps, *log.evals, *log.events]
    for x in items:
        if x.t_s is not None:
            x.t_s -= origin
    return log


Reader = Callable[[Path, Columns], RunLog]


def _tensorboard(path: Path, cols: Columns) -> RunLog:
    from acceval.training._tensorboard import read_tensorboard

    return read_tensorboard(path, cols)


READERS: dict[str, Reader] = {"jsonl": read_jsonl, "csv": read_csv, "mllog": read_mllog,
                              "tensorboard": _tensorboard}


def guess_format(path: Path) -> LogFormat:
    name = path.name
    if path.is_dir() or "tfevents" in name:
        return "tensorboard"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith((".log", ".txt", ".mllog")):
        return "mllog"
    raise StudyError(f"{path}: cannot tell the log format from the name",
                     [(str(path), "unknown log format", "set logs.format: jsonl, csv, "
                       "tensorboard or mllog")])


def log_runs(logs: Logs, base_dir: Path) -> list[LogRun]:
    """The runs a ``logs`` entry names: its ``runs``, or every ``result_*.txt`` (MLPerf's
    result file name) in its ``dir``, in name order."""
    if logs.dir is None:
        return list(logs.runs)
    folder = base_dir / logs.dir
    if not folder.is_dir():
        raise StudyError(f"training logs folder {folder} does not exist",
                         [(str(folder), "no such folder", "give logs.dir relative to the "
                           "study file")])
    files = sorted(folder.glob("result_*.txt"))
    if not files:
        raise StudyError(f"{folder}: no MLPerf result files (result_*.txt)",
                         [(str(folder), "no result_*.txt in it", "point logs.dir at a "
                           "benchmark's results folder, or list logs.runs")])
    # Relative to the study's folder, as a listed run's path is (or absolute, as logs.dir).
    return [LogRun(path=str(Path(logs.dir) / f.name)) for f in files]


_TRACE_NAMES = ("*.json", "*.json.gz")


def rank_traces(run: LogRun, base_dir: Path) -> list[str]:
    """Every rank's trace of a run: ``trace`` (a file, or a folder of one trace per rank)
    and ``traces``."""
    if run.trace is None:
        return [str(base_dir / t) for t in run.traces]
    first = base_dir / run.trace
    if first.is_dir():
        found = sorted({f for pat in _TRACE_NAMES for f in first.glob(pat)})
        return [str(f) for f in found] + [str(base_dir / t) for t in run.traces]
    return [str(first), *(str(base_dir / t) for t in run.traces)]


def read_log(path: Path, fmt: LogFormat | None, cols: Columns, *, seed: int | None = None,
             trace: str | None = None, trace_format: TraceFormat | None = None,
             units: Units | None = None, traces: list[str] | None = None) -> RunLog:
    """One run's log, whatever its format, in the order it was logged (a restart logs some
    steps twice: the metrics need that order to find the work lost). ``units`` says what
    its times and accuracy are in where they cannot be detected (:mod:`acceval.training.units`)."""
    if not path.exists():
        raise StudyError(f"training log {path} does not exist",
                         [(str(path), "no such file", "give a path relative to the study "
                           "file")])
    log = READERS[fmt or guess_format(path)](path, cols)
    all_traces = list(traces or ([trace] if trace else []))
    log.seed, log.trace, log.trace_format = seed, (all_traces[0] if all_traces else None), \
        trace_format
    log.traces = all_traces
    return apply_units(log, units)


__all__ = ["READERS", "guess_format", "log_runs", "rank_traces", "read_csv", "read_jsonl",
           "read_log", "read_mllog"]
