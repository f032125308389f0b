"""Compute against communication for a whole job: every rank's trace, and the slowest rank.

A data-parallel step ends when its slowest rank ends, so the job's figures are that rank's
(the one with the longest window), and every rank's own split is kept beside them: ranks
differ (on a real 128-rank NCCL trace rank 0 overlaps 11.8 % of its communication with
compute and rank 1 20.1 %). GPU traces are split with HTA's definitions over HTA's window
(:mod:`acceval.training.gpu_trace`); CPU and Neuron traces over their traced steps.
"""

from __future__ import annotations

from pathlib import Path

from acceval.training import metrics as m
from acceval.training.log import RunLog
from acceval.training.result import ComputeCommResult, RankSplitResult, StepSplitResult
from acceval.training.trace import StepSplit, TraceSplit, read_trace


def _steps(tr: TraceSplit) -> list[StepSplit]:
    """What the shares are taken over: HTA's kernel window on a GPU trace, else the steps."""
    rs = tr.rank_split
    if rs is None:
        return tr.steps
    return [StepSplit(step=rs.first_step or 0, duration_ms=rs.window_ms,
                      compute_ms=rs.compute_ms, communication_ms=rs.communication_ms,
                      overlap_ms=rs.overlap_ms, memory_ms=rs.memory_ms, idle_ms=rs.idle_ms)]


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def rank_result(tr: TraceSplit, index: int) -> RankSplitResult:
    steps = _steps(tr)
    window = sum(s.duration_ms for s in steps)
    compute = sum(s.compute_ms for s in steps)
    comm = sum(s.communication_ms for s in steps)
    over = sum(s.overlap_ms for s in steps)
    idle = sum(s.idle_ms for s in steps)
    rs = tr.rank_split
    marks = ((rs.first_step, rs.last_step) if rs is not None
             else (steps[0].step, steps[-1].step) if steps else (None, None))
    span = ("" if marks[0] is None else f"step {marks[0]}" if marks[0] == marks[1]
            else f"steps {marks[0]}–{marks[1]}")
    return RankSplitResult(
        rank=tr.rank if tr.rank is not None else index, source=tr.source, window_ms=window,
        compute_ms=compute, non_compute_ms=max(0.0, window - compute - idle),
        communication_ms=comm, overlap_ms=over, idle_ms=idle,
        compute_share=_share(compute, window),
        non_compute_share=_share(max(0.0, window - compute - idle), window),
        idle_share=_share(idle, window),
        overlap_share=_share(over, comm) if tr.overlap_known else None, steps=span)


def _notes(tr: TraceSplit, ranks: list[RankSplitResult], slowest: RankSplitResult) -> str:
    notes = list(tr.notes)
    if tr.whole_span and tr.kind in ("cpu", "gpu"):
        notes.append("no ProfilerStep marks: the busiest thread's whole span is one window")
    if tr.unread.count:
        notes.append(f"{tr.unread.count} of {tr.events} trace events not understood "
                     f"(e.g. {tr.unread.examples[0][:80]})")
    if len(ranks) > 1:
        notes.append(f"{len(ranks)} ranks traced; rank {slowest.rank} is the slowest and "
                     "bounds the step (the job's figures are its own)")
    elif tr.world_size and tr.world_size > 1:
        notes.append(f"only 1 of {tr.world_size} ranks traced: the job's figures are that "
                     "rank's, and another rank may be slower")
    return "; ".join(notes)


def compute_comm(runs: list[RunLog]) -> ComputeCommResult | None:
    """The first traced run's split, over every rank it traced."""
    log = next((r for r in runs if r.traces or r.trace), None)
    if log is None:
        return None
    paths = log.traces or ([log.trace] if log.trace else [])
    traces: list[TraceSplit] = []
    for path in paths:
        try:
            traces.append(read_trace(Path(path), log.trace_format))
        except (OSError, ValueError) as exc:
            return ComputeCommResult(source=path, kind="unread", note=f"not read: {exc}")
    ranks = [rank_result(tr, i) for i, tr in enumerate(traces)]
    at = max(range(len(ranks)), key=lambda i: (ranks[i].window_ms, -i))
    tr, slowest = traces[at], ranks[at]
    pairs = [(s.data_s, s.step_s) for s in log.steps if s.step_s and s.data_s is not None]
    step_total = sum(b for _, b in pairs)
    share = sum(a for a, _ in pairs) / step_total if step_total > 0 else None
    sat = m.saturation(_steps(tr), share, overlap_known=tr.overlap_known)
    return ComputeCommResult(
        source=tr.source, kind=tr.kind, backend=tr.backend, world_size=tr.world_size,
        steps=[StepSplitResult(step=s.step, duration_ms=s.duration_ms, compute_ms=s.compute_ms,
                               communication_ms=s.communication_ms, overlap_ms=s.overlap_ms,
                               memory_ms=s.memory_ms, idle_ms=s.idle_ms) for s in tr.steps],
        compute_share=sat.compute_share if sat else None,
        communication_share=sat.communication_share if sat else None,
        exposed_communication_share=sat.exposed_communication_share if sat else None,
        overlap_share=sat.overlap_share if sat else None,
        idle_share=sat.idle_share if sat else None, input_share=share,
        bound=sat.bound if sat else None, evidence=sat.evidence if sat else "no traced step",
        events=tr.events, unread=tr.unread.count, note=_notes(tr, ranks, slowest),
        ranks=ranks, slowest_rank=slowest.rank)


__all__ = ["compute_comm", "rank_result"]
