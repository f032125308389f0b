"""The training scorecard as pure functions over step logs (formulas: docs/training.md).

Time to target (MLPerf-style scoring over seeds), stability (rolling z-score spikes, NaN
steps, divergence), restarts (work lost since the last checkpoint, time to resume), training
goodput with its badput split, MFU/HFU from FLOPs per token, and which resource saturates.
Missing is ``None``, never 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from acceval.training.log import RunLog, Step
from acceval.training.mlperf import GENERIC, BenchmarkRule, olympic
from acceval.training.spec import QualityTarget
from acceval.training.trace import StepSplit


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


# --- time to target ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Reached:
    step: int
    t_s: float | None
    value: float


def first_reaching(log: RunLog, target: QualityTarget) -> Reached | None:
    """The first evaluation (in log order) whose metric reaches the target."""
    for e in log.evals:
        v = e.value(target.metric)
        if v is not None and math.isfinite(v) and target.reached(v):
            return Reached(e.step, e.t_s, v)
    return None


@dataclass(frozen=True, slots=True)
class Score:
    """MLPerf-style time to target over repeated runs."""

    value_s: float | None            # mean of the scored runs; None when invalid
    valid: bool
    reason: str
    runs: int
    converged: int
    scored: tuple[int, ...]          # indexes of the runs averaged
    dropped: tuple[int, ...]         # fastest and slowest
    min_s: float | None              # spread over the converged runs
    max_s: float | None
    stdev_s: float | None
    window: tuple[float, float] | None  # min and max of the scored runs (the interval)


def mlperf_score(times_s: Sequence[float | None], *, min_runs: int = 3,
                 rule: BenchmarkRule | None = None) -> Score:
    """MLPerf's olympic scoring (:func:`acceval.training.mlperf.olympic`): with a
    benchmark's ``rule`` its own result-file count and drops (UNet3D drops 4 at each end);
    without, at least ``min_runs`` runs, the fastest and the slowest dropped, one run that
    never reached the target (``None``) allowed, counted as the slowest."""
    r = rule or replace(GENERIC, result_files=min_runs)
    n = len(times_s)
    ts = [t for t in times_s if t is not None]
    lo, hi = (min(ts), max(ts)) if ts else (None, None)
    sd = statistics.stdev(ts) if len(ts) > 1 else None
    o = olympic(list(times_s), r)
    kept = [t for i in o.kept if (t := times_s[i]) is not None]
    window = (min(kept), max(kept)) if o.valid and kept else None
    return Score(o.value_s, o.valid, o.reason, n, len(ts), o.kept, o.dropped, lo, hi, sd,
                 window)


# --- stability ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Spike:
    metric: str
    step: int
    t_s: float | None
    value: float
    z: float


def rolling_spikes(steps: Sequence[Step], metric: str, *, z: float,
                   window: int) -> list[Spike]:
    """Steps whose value sits more than ``z`` standard deviations above the mean of the
    ``window`` finite values before it (a spike is judged against its own past only)."""
    out: list[Spike] = []
    past: list[float] = []
    for s in steps:
        v = getattr(s, metric)
        if not _finite(v):
            continue
        if len(past) >= window:
            recent = past[-window:]
            mu = statistics.fmean(recent)
            sd = statistics.pstdev(recent)
            if sd > 0 and (v - mu) / sd > z:
                out.append(Spike(metric, s.step, s.t_s, float(v), (v - mu) / sd))
        past.append(float(v))
    return out


@dataclass(frozen=True, slots=True)
class Stability:
    loss_spikes: list[Spike]
    grad_norm_spikes: list[Spike]
    nan_steps: int               # steps whose loss or gradient norm is NaN or infinite
    diverged: bool
    divergence: str              # why (or why not)


def stability(steps: Sequence[Step], *, z: float, window: int) -> Stability:
    """Spikes of loss and gradient norm, NaN steps, and divergence: the run ends on a
    non-finite loss, or its last ``window`` losses average above its first ``window``."""
    nan = sum(1 for s in steps
              if any(v is not None and not math.isfinite(v) for v in (s.loss, s.grad_norm)))
    losses = [s.loss for s in steps if s.loss is not None]
    finite = [v for v in losses if math.isfinite(v)]
    if losses and not math.isfinite(losses[-1]):
        diverged, why = True, "the last logged loss is not finite"
    elif len(finite) >= 2 * window:
        first, last = statistics.fmean(finite[:window]), statistics.fmean(finite[-window:])
        diverged = last > first
        why = (f"mean loss of the last {window} steps {last:.4g} vs the first {window} "
               f"{first:.4g}")
    else:
        diverged, why = False, f"fewer than {2 * window} finite losses: not judged"
    return Stability(rolling_spikes(steps, "loss", z=z, window=window),
                     rolling_spikes(steps, "grad_norm", z=z, window=window), nan, diverged,
                     why)


# --- restarts ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Interruption:
    t_s: float
    checkpoint_step: int | None      # the last checkpoint before it (None: none was saved)
    reached_step: int | None         # the last step logged before it
    lost_steps: int
    lost_s: float                    # from the last checkpoint (or the first step) to it
    time_to_resume_s: float | None   # to the first new step after the restart
    time_to_recover_s: float | None  # to the first step past where it had been
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Restarts:
    interruptions: list[Interruption]
    checkpoint_saves: int
    checkpoint_save_s: float
    checkpoint_restores: int
    checkpoint_restore_s: float

    @property
    def count(self) -> int:
        return len(self.interruptions)

    @property
    def lost_s(self) -> float:
        return sum(i.lost_s for i in self.interruptions)


def restarts(log: RunLog) -> Restarts:
    """Each ``interruption`` event against the checkpoints saved before it and the steps
    logged after it."""
    saves = [e for e in log.events_of("checkpoint_save") if e.t_s is not None]
    restores = log.events_of("checkpoint_restore")
    timed = [(s.t_s, s) for s in log.steps if s.t_s is not None]
    out = []
    for ev in log.events_of("interruption"):
        if ev.t_s is None:
            continue
        t = ev.t_s
        ck = max(((e.t_s, e) for e in saves if e.t_s is not None and e.t_s <= t),
                 key=lambda x: x[0], default=None)
        before = [(ts, s) for ts, s in timed if ts <= t]
        after = [(ts, s) for ts, s in timed if ts > t]
        reached = before[-1][1].step if before else None
        ck_step = ck[1].step if ck is not None else None
        base = ck_step if ck_step is not None else 0
        since = ck[0] if ck is not None else (before[0][0] - (before[0][1].step_s or 0.0)
                                              if before else t)
        resume = next((ts for ts, s in after if s.step > base), None)
        recover = next((ts for ts, s in after if reached is not None and s.step > reached),
                       None)
        out.append(Interruption(
            t, ck_step, reached, max(0, (reached or base) - base), max(0.0, t - since),
            None if resume is None else resume - t,
            None if recover is None else recover - t, ev.detail))
    return Restarts(out, len(log.events_of("checkpoint_save")),
                    sum(e.duration_s or 0.0 for e in log.events_of("checkpoint_save")),
                    len(restores), sum(e.duration_s or 0.0 for e in restores))


def preserved_steps(log: RunLog, rs: Restarts) -> list[Step]:
    """The steps whose work survived: not logged between a checkpoint and an interruption
    that threw them away (the restart did those steps again)."""
    lost: set[int] = set()
    for it in rs.interruptions:
        base = it.checkpoint_step if it.checkpoint_step is not None else 0
        for i, s in enumerate(log.steps):
            if s.t_s is not None and s.t_s <= it.t_s and s.step > base:
                lost.add(i)
    return [s for i, s in enumerate(log.steps) if i not in lost]


# --- goodput -----------------------------------------------------------------------------------

BADPUT = ("startup", "data_loading", "checkpoint_save", "checkpoint_restore", "lost_work",
          "other")


@dataclass(frozen=True, slots=True)
class Goodput:
    wall_s: float
    productive_s: float
    badput_s: dict[str, float] = field(default_factory=dict)
    step_time_from: str = "step_s"       # or "stamps" when the log had no step durations

    @property
    def goodput(self) -> float | None:
        return self.productive_s / self.wall_s if self.wall_s > 0 else None


def _step_seconds(steps: Sequence[Step]) -> tuple[list[float], str]:
    if all(s.step_s is not None for s in steps):
        return [s.step_s or 0.0 for s in steps], "step_s"
    out, prev = [], None
    for s in steps:
        out.append(0.0 if prev is None or s.t_s is None else max(0.0, s.t_s - prev))
        prev = s.t_s if s.t_s is not None else prev
    return out, "stamps"


def goodput(log: RunLog, rs: Restarts) -> Goodput | None:
    """Productive step time over wall time; badput: start-up, data loading, checkpoint save
    and restore, work lost to interruptions, and the rest (evaluation, logging, stalls)."""
    wall = log.end_s
    if wall is None or wall <= 0:
        return None
    kept = preserved_steps(log, rs)
    if not kept:
        return None   # no steps logged (an MLPerf log's evaluations only): not measured
    secs, basis = _step_seconds(kept)
    data = sum(s.data_s or 0.0 for s in kept)
    productive = max(0.0, sum(secs) - data)
    bad = {
        "startup": sum(e.duration_s or 0.0 for e in log.events_of("startup")),
        "data_loading": data,
        "checkpoint_save": rs.checkpoint_save_s,
        "checkpoint_restore": rs.checkpoint_restore_s,
        "lost_work": rs.lost_s,
    }
    bad["other"] = max(0.0, wall - productive - sum(bad.values()))
    return Goodput(wall, productive, bad, basis)


# --- MFU ---------------------------------------------------------------------------------------

def flops_per_token(params: float, *, layers: int | None = None, heads: int | None = None,
                    head_dim: int | None = None, seq_len: int | None = None,
                    recompute: bool = False) -> float:
    """Training FLOPs per token (PaLM, App. B): 6N + 12·L·H·Q·T; with recomputation (HFU) the
    forward runs twice: 8N + 16·L·H·Q·T. N excludes the input embedding (a lookup)."""
    attn = 0
    if layers is not None and heads is not None and head_dim is not None \
            and seq_len is not None:
        attn = layers * heads * head_dim * seq_len
    return (8 if recompute else 6) * params + (16 if recompute else 12) * attn


def mfu(flops_token: float, tokens_per_s: float, peak_flops_per_s: float,
        chips: int = 1) -> float:
    """Model FLOPs utilisation: achieved model FLOP/s over the peak of every chip."""
    return flops_token * tokens_per_s / (peak_flops_per_s * chips)


def tokens_per_s(steps: Sequence[Step]) -> float | None:
    """Tokens over the steps' own time (their step_s), the throughput MFU is judged on."""
    pairs = [(s.tokens, s.step_s) for s in steps if s.tokens is not None and s.step_s]
    secs = sum(b for _, b in pairs)
    return sum(a for a, _ in pairs) / secs if secs > 0 else None


# --- which resource saturates ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Saturation:
    compute_share: float
    communication_share: float
    exposed_communication_share: float
    overlap_share: float | None       # of communication time
    idle_share: float
    input_share: float | None         # data loading over step time, from the step log
    bound: str                        # compute-bound, communication-bound, input-bound, idle
    evidence: str


def saturation(splits: Sequence[StepSplit], input_share: float | None, *,
               overlap_known: bool = True) -> Saturation | None:
    """The largest of compute, exposed communication and input waiting decides the bound;
    when idle time (net of the input waiting, which a trace shows as idle) is larger than all
    three, nothing saturates: the step waits on the host. ``overlap_known`` False (a trace
    form that cannot show compute during communication): overlap is None and every
    communication second counts as exposed."""
    total = sum(s.duration_ms for s in splits)
    if total <= 0:
        return None
    comp = sum(s.compute_ms for s in splits) / total
    comm = sum(s.communication_ms for s in splits) / total
    over = sum(s.overlap_ms for s in splits)
    comm_ms = sum(s.communication_ms for s in splits)
    exposed = (comm_ms - over) / total
    idle = sum(s.idle_ms for s in splits) / total
    shares = {"compute-bound": comp, "communication-bound": exposed,
              "input-bound": input_share or 0.0}
    bound = max(shares, key=lambda k: shares[k])
    # Waiting for input shows in a trace as idle time: idle is judged net of it.
    if idle - (input_share or 0.0) > shares[bound]:
        bound = "idle (host overhead or waiting)"
    inp = "not logged" if input_share is None else f"{input_share:.0%}"
    overlapped = (f"{(over / comm_ms if comm_ms else 0):.0%} overlapped with compute"
                  if overlap_known else "overlap with compute not measurable")
    evidence = (f"over {len(splits)} traced step(s): compute {comp:.0%}, communication "
                f"{comm:.0%} ({exposed:.0%} exposed, {overlapped}), idle "
                f"{idle:.0%}; data loading {inp} of step time (step log)")
    overlap = over / comm_ms if comm_ms and overlap_known else None
    return Saturation(comp, comm, exposed, overlap, idle, input_share, bound, evidence)


__all__ = ["BADPUT", "Goodput", "Interruption", "Reached", "Restarts", "Saturation", "Score",
           "Spike", "Stability", "first_reaching", "flops_per_token", "goodput", "mfu",
           "mlperf_score", "preserved_steps", "restarts", "rolling_spikes", "saturation",
           "stability", "tokens_per_s"]
