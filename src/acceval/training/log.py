"""The step log of one training run, as every reader hands it to the metrics.

Whatever the source (JSONL, CSV, TensorBoard, MLPerf ``:::MLLOG``), a run becomes a
:class:`RunLog`: its steps, evaluations and events on one clock (seconds since the run
started), plus what the reader could not understand, counted and with examples. Missing is
``None``, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acceval.training.spec import TraceFormat

#: Event names the metrics read (anything else is kept and shown, but not used).
EVENTS = ("startup", "checkpoint_save", "checkpoint_restore", "interruption", "restart",
          "run_end", "energy")
MAX_EXAMPLES = 5


@dataclass(slots=True)
class Step:
    step: int
    t_s: float | None = None          # when the step ended, seconds since the run started
    loss: float | None = None
    grad_norm: float | None = None
    tokens: float | None = None
    step_s: float | None = None
    data_s: float | None = None
    line: int | None = None           # where in the file (for errors that name it)


@dataclass(slots=True)
class Eval:
    step: int
    t_s: float | None = None
    loss: float | None = None
    accuracy: float | None = None
    line: int | None = None

    def value(self, metric: str) -> float | None:
        return self.loss if metric == "eval_loss" else self.accuracy


@dataclass(slots=True)
class Event:
    kind: str
    t_s: float | None = None
    step: int | None = None
    duration_s: float | None = None
    value: float | None = None        # e.g. joules for ``energy``, CPU seconds for ``run_end``
    detail: str = ""
    line: int | None = None


@dataclass(slots=True)
class Unread:
    """What a reader could not understand: counted, with the first few examples."""

    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, what: str) -> None:
        self.count += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(what[:200])


@dataclass(slots=True)
class MlperfStamps:
    """What an MLPerf ``:::MLLOG`` file says about its timed region, in the log's own
    milliseconds since the epoch (MLPerf scores ``run_stop - run_start`` of these)."""

    benchmark: str | None = None          # submission_benchmark
    platform: str | None = None           # submission_platform
    org: str | None = None                # submission_org
    init_start_ms: float | None = None    # the first init_start (one per rank is allowed)
    init_stop_ms: float | None = None
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    status: str | None = None             # run_stop's metadata.status: success or aborted

    @property
    def run_s(self) -> float | None:
        """MLPerf's time to train of this run: ``run_stop - run_start``, in seconds."""
        if self.run_start_ms is None or self.run_stop_ms is None:
            return None
        return (self.run_stop_ms - self.run_start_ms) / 1000.0

    @property
    def init_s(self) -> float | None:
        """Initialization (``init_start`` to ``init_stop``): shown beside, never inside."""
        if self.init_start_ms is None or self.init_stop_ms is None:
            return None
        return (self.init_stop_ms - self.init_start_ms) / 1000.0


@dataclass(slots=True)
class RunLog:
    source: str
    format: str
    seed: int | None = None
    steps: list[Step] = field(default_factory=list)
    evals: list[Eval] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    lines: int = 0                    # records the reader saw (lines, scalar events)
    unread: Unread = field(default_factory=Unread)
    unused: dict[str, int] = field(default_factory=dict)  # understood, not needed (by key)
    trace: str | None = None          # path of the run's profiler trace, if any
    trace_format: TraceFormat | None = None  # None: from the trace's content
    traces: list[str] = field(default_factory=list)  # every rank's trace (``trace`` first)
    mlperf: MlperfStamps | None = None  # an MLLOG file's timed region and status

    def events_of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    @property
    def end_s(self) -> float | None:
        """When the run ended: its run_end event, else the last stamp it logged."""
        ends = [e.t_s for e in self.events_of("run_end") if e.t_s is not None]
        if ends:
            return max(ends)
        stamps = [t for t in (*(s.t_s for s in self.steps), *(e.t_s for e in self.evals),
                              *(e.t_s for e in self.events)) if t is not None]
        return max(stamps) if stamps else None


__all__ = ["EVENTS", "Eval", "Event", "MlperfStamps", "RunLog", "Step", "Unread"]
