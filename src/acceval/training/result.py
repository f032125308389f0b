"""The training section of a RunResult: what ``analyze`` found per platform and per run.

Typed like every other section (validated models, ``extra="forbid"``), so the renderers read
attributes. Curves are kept downsampled (at most :data:`MAX_POINTS` per run) so result.json
stays small; the raw logs stay in the run folder or where the study names them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from acceval.economics.bill import BillResult
from acceval.economics.energy import EnergyResult
from acceval.results.section import Section

MAX_POINTS = 400


class Curve(Section):
    """One run's loss and evaluation curves (seconds since the run started)."""

    step: list[int] = Field(default_factory=list)
    t_s: list[float | None] = Field(default_factory=list)
    loss: list[float | None] = Field(default_factory=list)
    eval_step: list[int] = Field(default_factory=list)
    eval_t_s: list[float | None] = Field(default_factory=list)
    eval_value: list[float | None] = Field(default_factory=list)


class SpikeResult(Section):
    metric: str
    step: int
    t_s: float | None
    value: float
    z: float


class StabilityResult(Section):
    loss_spikes: list[SpikeResult] = Field(default_factory=list)
    grad_norm_spikes: list[SpikeResult] = Field(default_factory=list)
    nan_steps: int = 0
    diverged: bool = False
    divergence: str = ""


class InterruptionResult(Section):
    t_s: float
    checkpoint_step: int | None
    reached_step: int | None
    lost_steps: int
    lost_s: float
    time_to_resume_s: float | None
    time_to_recover_s: float | None
    detail: str = ""


class RestartsResult(Section):
    count: int
    interruptions: list[InterruptionResult] = Field(default_factory=list)
    lost_s: float = 0.0
    checkpoint_saves: int = 0
    checkpoint_save_s: float = 0.0
    checkpoint_restores: int = 0
    checkpoint_restore_s: float = 0.0


class GoodputResult(Section):
    wall_s: float
    productive_s: float
    goodput: float | None
    badput_s: dict[str, float] = Field(default_factory=dict)
    step_time_from: str = "step_s"


class IngestResult(Section):
    """What reading one log found: records seen, not understood (with examples), unused."""

    source: str
    format: str
    records: int
    unread: int
    unread_examples: list[str] = Field(default_factory=list)
    unused: dict[str, int] = Field(default_factory=dict)


class TrainingRunResult(Section):
    index: int
    seed: int | None
    ingest: IngestResult
    reached: bool
    time_to_target_s: float | None
    step_to_target: int | None
    value_at_target: float | None
    last_value: float | None           # the last evaluation's metric
    wall_s: float | None
    cpu_s: float | None = None
    device_energy_j: float | None = None  # the whole run at the device (L0)
    energy_j: float | None = None      # the whole run, at the platform's boundary
    stability: StabilityResult
    restarts: RestartsResult
    goodput: GoodputResult | None = None
    curve: Curve = Field(default_factory=Curve)
    trace_ingest: IngestResult | None = None
    benchmark: str | None = None       # the MLPerf benchmark the log names
    init_s: float | None = None        # MLPerf initialization: shown beside, never inside
    run_status: str | None = None      # MLPerf run_stop status (success, aborted)
    note: str = ""                     # why a run that reached the target does not count


class TimeToTargetResult(Section):
    value_s: float | None
    valid: bool
    reason: str
    runs: int
    converged: int
    scored: list[int] = Field(default_factory=list)
    dropped: list[int] = Field(default_factory=list)
    min_s: float | None = None
    max_s: float | None = None
    stdev_s: float | None = None
    window_s: tuple[float, float] | None = None
    rule: str = ""                      # the scoring rule applied, in words
    benchmark: str | None = None        # the MLPerf benchmark whose rule applied
    result_files: int | None = None     # the result files that rule needs
    max_dropped: int = 1                # dropped at each end (UNet3D: 4)
    init_mean_s: float | None = None    # mean initialization of the runs (outside the score)


class MfuResult(Section):
    status: Literal["assessed", "not assessed"]
    reason: str
    mfu: float | None = None
    hfu: float | None = None
    flops_per_token: float | None = None
    tokens_per_s: float | None = None
    peak_tflops: float | None = None
    peak_source: str | None = None
    precision: str | None = None
    plausible: bool = True              # False: MFU or HFU above 100 % (flag says why)
    flag: str = ""                      # the implausibility and its likely cause


class StepSplitResult(Section):
    step: int
    duration_ms: float
    compute_ms: float
    communication_ms: float
    overlap_ms: float
    memory_ms: float
    idle_ms: float


class RankSplitResult(Section):
    """One rank's compute / communication / overlap / idle (HTA's definitions)."""

    rank: int | None
    source: str
    window_ms: float                    # GPU: HTA's kernel window; CPU: the traced steps
    compute_ms: float
    non_compute_ms: float
    communication_ms: float
    overlap_ms: float
    idle_ms: float
    compute_share: float | None = None
    non_compute_share: float | None = None
    idle_share: float | None = None
    overlap_share: float | None = None  # of communication time
    steps: str = ""                     # the iterations the window covers


class ComputeCommResult(Section):
    source: str
    kind: str
    backend: str | None = None
    world_size: int | None = None
    steps: list[StepSplitResult] = Field(default_factory=list)
    compute_share: float | None = None
    communication_share: float | None = None
    exposed_communication_share: float | None = None
    overlap_share: float | None = None
    idle_share: float | None = None
    input_share: float | None = None
    bound: str | None = None
    evidence: str = ""
    events: int = 0
    unread: int = 0
    note: str = ""
    ranks: list[RankSplitResult] = Field(default_factory=list)   # every traced rank
    slowest_rank: int | None = None     # the rank that bounds the step (the job's figures)


class TrainingCostResult(Section):
    """The bill of one run to target (the same items and boundary as inference)."""

    bill: BillResult
    cost_per_run_usd: float
    interval_usd: tuple[float, float] | None = None   # at the fastest/slowest converged run
    checkpoint_usd_per_run: float | None = None
    energy: EnergyResult | None = None


class PlatformTrainingResult(Section):
    name: str
    source: Literal["logs", "builtin", "command"]
    platform: dict[str, Any]
    failure: str | None = None
    runs: list[TrainingRunResult] = Field(default_factory=list)
    time_to_target: TimeToTargetResult | None = None
    cost: TrainingCostResult | None = None
    mfu: MfuResult | None = None
    compute_comm: ComputeCommResult | None = None
    provenance: dict[str, str] = Field(default_factory=dict)
    target: str | None = None           # the quality target this platform was scored at
    target_source: str = ""             # "declared" or the MLPerf rule it came from
    target_note: str = ""               # a declared target that differs from the rules

    def run(self, index: int) -> TrainingRunResult | None:
        return next((r for r in self.runs if r.index == index), None)


class TrainingStanding(Section):
    platform: str
    qualified: bool
    reasons: list[str] = Field(default_factory=list)
    cost_per_run_usd: float | None = None
    interval_usd: tuple[float, float] | None = None
    time_to_target_s: float | None = None
    rank: int | None = None


class TrainingVerdict(Section):
    """Cost per training run to target: the verdict's training lines (acceval.verdict)."""

    status: Literal["winner", "tie", "none-qualify", "not-priced"]
    winner: str | None = None
    tied: list[str] = Field(default_factory=list)
    headline: str
    lines: list[str] = Field(default_factory=list)
    standings: list[TrainingStanding] = Field(default_factory=list)
    ratio_to_runner_up: float | None = None


class TrainingResult(Section):
    target: str                         # "eval loss <= 1.9"
    metric: str
    threshold: float | None             # None: each platform's benchmark target applies
    runs_per_platform: int
    spike_z: float
    spike_window: int
    platforms: list[PlatformTrainingResult] = Field(default_factory=list)
    verdict: TrainingVerdict | None = None
    notes: list[str] = Field(default_factory=list)

    def platform(self, name: str) -> PlatformTrainingResult:
        for p in self.platforms:
            if p.name == name:
                return p
        raise KeyError(name)


__all__ = ["MAX_POINTS", "ComputeCommResult", "Curve", "GoodputResult", "IngestResult",
           "InterruptionResult", "MfuResult", "PlatformTrainingResult", "RankSplitResult",
           "RestartsResult",
           "SpikeResult", "StabilityResult", "StepSplitResult", "TimeToTargetResult",
           "TrainingCostResult", "TrainingResult", "TrainingRunResult", "TrainingStanding",
           "TrainingVerdict"]
