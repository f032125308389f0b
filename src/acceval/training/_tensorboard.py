"""TensorBoard event files, read with tensorboard's own event reader (``EventAccumulator``).

Scalars are matched to fields by tag (the column mapping names tags); each scalar event is
one record. Tags the mapping does not name are counted as unused, and non-scalar data
(histograms, images, tensors, text) is counted as not read, by tag.
"""

from __future__ import annotations

import math
from pathlib import Path

from acceval.errors import MissingExtra
from acceval.input_files import DATA_MAX_BYTES, check_regular
from acceval.training.log import Eval, RunLog, Step
from acceval.training.spec import Columns

_STEP_FIELDS = ("loss", "grad_norm", "tokens", "step_s", "data_s")
_EVAL_FIELDS = ("eval_loss", "eval_accuracy")


def read_tensorboard(path: Path, cols: Columns) -> RunLog:
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
    except ImportError as exc:
        raise MissingExtra("training", "tensorboard") from exc
    # tensorboard opens the files itself: each must pass the bounded reader's checks first
    # (a FIFO or a device named *tfevents* would block or never end).
    files = [f for f in path.iterdir() if "tfevents" in f.name] if path.is_dir() else [path]
    for f in files:
        check_regular(f, max_bytes=DATA_MAX_BYTES, what="TensorBoard event file",
                      where="training.platforms[].logs")
    acc = ea.EventAccumulator(str(path), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    tags = acc.Tags()
    log = RunLog(source=str(path), format="tensorboard")
    by_tag = {getattr(cols, f): f for f in (*_STEP_FIELDS, *_EVAL_FIELDS)
              if getattr(cols, f) is not None}
    steps: dict[int, Step] = {}
    evals: dict[int, Eval] = {}
    first_wall: float | None = None
    for tag in tags.get("scalars", []):
        events = acc.Scalars(tag)
        log.lines += len(events)
        field = by_tag.get(tag)
        if field is None:
            log.unused[tag] = len(events)
            continue
        for e in events:
            # NaN is data for a loss or gradient norm (a diverged run), not for the rest.
            if not math.isfinite(e.wall_time) or (
                    field not in ("loss", "grad_norm") and not math.isfinite(e.value)):
                log.unread.add(f"{tag!r} step {e.step}: {e.value!r} is not a finite number")
                continue
            first_wall = e.wall_time if first_wall is None else min(first_wall, e.wall_time)
            if field in _EVAL_FIELDS:
                ev = evals.setdefault(e.step, Eval(e.step, e.wall_time))
                setattr(ev, "loss" if field == "eval_loss" else "accuracy", float(e.value))
            else:
                st = steps.setdefault(e.step, Step(e.step, e.wall_time))
                setattr(st, field, float(e.value))
    # "distributions" are the histograms again, compressed: not counted twice.
    for kind in ("histograms", "images", "audio", "tensors"):
        for tag in tags.get(kind, []) or []:
            log.unread.add(f"{kind[:-1]} {tag!r} (not a scalar)")
    origin = first_wall or 0.0
    for st in steps.values():
        st.t_s = None if st.t_s is None else st.t_s - origin
    for ev in evals.values():
        ev.t_s = None if ev.t_s is None else ev.t_s - origin
    log.steps = sorted(steps.values(), key=lambda s: (s.t_s or 0.0, s.step))
    log.evals = sorted(evals.values(), key=lambda e: (e.t_s or 0.0, e.step))
    return log
