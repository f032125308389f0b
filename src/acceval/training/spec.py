"""The study file's ``training`` section: platforms trained to one quality target.

Each platform entry either ingests logs of runs that already happened (``logs``), runs the
built-in workload (``builtin``), or runs the user's own script (``command``) that writes the
same step log. Price, costs, energy and platform use the same fields as an inference target.
Validated at the edge like the rest of the study (``extra="forbid"``, frozen). Formulas and
log formats: docs/training.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from acceval.economics.spec import Platform, Price, TargetCosts
from acceval.names import Name
from acceval.probes.spec import Energy

LogFormat = Literal["jsonl", "csv", "tensorboard", "mllog"]
TraceFormat = Literal["kineto", "neuron"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class QualityTarget(_Model):
    """The quality a run must reach: one bound on the evaluation metric."""

    max_eval_loss: float | None = Field(
        None, gt=0, description="Reached at the first evaluation with eval loss <= this.")
    min_accuracy: float | None = Field(
        None, gt=0, le=1, description="Reached at the first evaluation with accuracy >= this.")

    @model_validator(mode="after")
    def _one(self) -> QualityTarget:
        if (self.max_eval_loss is None) == (self.min_accuracy is None):
            raise ValueError("give exactly one of max_eval_loss or min_accuracy")
        return self

    @property
    def metric(self) -> Literal["eval_loss", "eval_accuracy"]:
        return "eval_loss" if self.max_eval_loss is not None else "eval_accuracy"

    @property
    def threshold(self) -> float:
        v = self.max_eval_loss if self.max_eval_loss is not None else self.min_accuracy
        assert v is not None
        return v

    def reached(self, value: float) -> bool:
        if self.max_eval_loss is not None:
            return value <= self.max_eval_loss
        return value >= self.threshold

    @property
    def text(self) -> str:
        return (f"eval loss <= {self.max_eval_loss:g}" if self.max_eval_loss is not None
                else f"accuracy >= {self.threshold:g}")


class Columns(_Model):
    """Which column (JSONL key, CSV header, TensorBoard tag, MLPerf key) holds each field.

    ``None`` drops a field. Times are seconds since the run started, or Unix timestamps
    (made relative to the run's start)."""

    step: str = Field("step", description="Optimizer step (an integer).")
    time_s: str | None = Field("t_s", description="Seconds since the run started (or a Unix "
                               "timestamp).")
    loss: str | None = Field("loss", description="Training loss of the step.")
    grad_norm: str | None = Field("grad_norm", description="Gradient norm before clipping.")
    tokens: str | None = Field("tokens", description="Tokens the step processed (all ranks).")
    step_s: str | None = Field("step_s", description="Wall seconds of the whole step.")
    data_s: str | None = Field("data_s", description="Seconds of the step spent waiting for "
                               "input data.")
    eval_loss: str | None = Field("eval_loss", description="Evaluation loss.")
    eval_accuracy: str | None = Field("eval_accuracy", description="Evaluation accuracy (0-1).")
    event: str | None = Field("event", description="Event name: startup, checkpoint_save, "
                              "checkpoint_restore, interruption, restart, run_end.")
    duration_s: str | None = Field("duration_s", description="Seconds an event took.")


TimeUnit = Literal["s", "ms", "unix_s", "unix_ms"]
AccuracyUnit = Literal["fraction", "percent"]


class Units(_Model):
    """What a log's numbers are in, where the reader cannot tell from the values alone."""

    time: TimeUnit | None = Field(
        None, description="s or ms since the run started, or unix_s / unix_ms (Unix epoch "
        "stamps); default: detected (Unix stamps by their size; ms must be declared).")
    accuracy: AccuracyUnit | None = Field(
        None, description="fraction (0-1) or percent (0-100); default: detected (a value "
        "above 1 is a percent).")


class LogRun(_Model):
    """One run's log (and optionally its profiler trace)."""

    path: str = Field(description="The log file (TensorBoard: the event file or its folder), "
                      "relative to the study file.")
    trace: str | None = Field(None, description="A profiler trace of a few steps of this run: "
                              "PyTorch profiler (Kineto) JSON, or the Neuron profiler's JSON "
                              "export (system_profile.json or device_profile_model_<id>.json).")
    trace_format: TraceFormat | None = Field(
        None, description="kineto or neuron; default: from the trace's content.")
    traces: list[str] = Field(default_factory=list, description="Every other rank's "
                              "trace of the same steps (HTA reads one trace per rank); or "
                              "give trace as a folder holding one trace per rank.")
    seed: int | None = Field(None, description="The seed the run used, if known.")
    units: Units | None = Field(None, description="What the log's times and accuracy are "
                                "in, where they cannot be detected.")
    optional: bool = Field(False, description="A log with no data is noted, not a study "
                           "error (the run goes on without it).")


class Logs(_Model):
    """Runs that already happened, one log per run (or a folder of MLPerf result files)."""

    format: LogFormat | None = Field(
        None, description="jsonl, csv, tensorboard or mllog; default from the file name.")
    columns: Columns = Field(default_factory=Columns, description="Column mapping.")
    runs: list[LogRun] = Field(default_factory=list, max_length=100,
                               description="One entry per run.")
    dir: str | None = Field(None, description="A folder of MLPerf result files (every "
                            "result_*.txt in it, in name order, one run each), relative to "
                            "the study file; instead of runs.")

    @model_validator(mode="after")
    def _runs_or_dir(self) -> Logs:
        if (not self.runs) == (self.dir is None):
            raise ValueError("give exactly one of logs.runs or logs.dir")
        return self


class Kill(_Model):
    """The injected interruption of the built-in workload."""

    run: int = Field(0, ge=0, description="Which run (0-based) is interrupted.")
    rank: int = Field(1, ge=0, description="The rank killed (SIGKILL).")
    at_step: int = Field(ge=1, description="The step at which that rank is killed.")


class Builtin(_Model):
    """The built-in workload: the shipped tiny model trained data-parallel on the arithmetic
    task (torch.distributed: gloo on CPU, NCCL on CUDA)."""

    model: str = Field("builtin:tiny", description="The model whose architecture is trained "
                       "from a seeded initialisation.")
    processes: int = Field(1, ge=1, le=64, description="Data-parallel processes (ranks).")
    device: Literal["cpu", "cuda"] = Field("cpu", description="cpu (gloo) or cuda (NCCL).")
    precision: Literal["fp32", "bf16"] = Field("fp32", description="fp32, or bf16 autocast.")
    global_batch: int = Field(32, ge=1, description="Sequences per step over all ranks.")
    max_steps: int = Field(200, ge=1, le=1_000_000, description="Steps after which a run that "
                           "has not reached the target stops.")
    lr: float = Field(2e-3, gt=0, description="AdamW learning rate (linear warm-up).")
    eval_every: int = Field(5, ge=1, description="Steps between evaluations.")
    eval_sequences: int = Field(256, ge=1, description="Held-out sequences per evaluation.")
    checkpoint_every: int = Field(10, ge=1, description="Steps between checkpoints.")
    profile_steps: tuple[int, int] | None = Field(
        (6, 9), description="First and last step traced by the PyTorch profiler (run 0, "
        "every rank); null: no trace.")
    kill: Kill | None = Field(None, description="Kill one rank once and restart from the "
                              "last checkpoint.")
    threads: int = Field(1, ge=1, description="Intra-op threads per rank.")


class Command(_Model):
    """The user's own training script, run once per run; it writes the step log."""

    argv: list[str] = Field(min_length=1, description="The command; {log}, {trace}, {seed}, "
                            "{run} and {dir} are replaced.")
    format: LogFormat = Field("jsonl", description="The format of the log it writes.")
    columns: Columns = Field(default_factory=Columns, description="Column mapping.")
    timeout_s: float = Field(3600.0, gt=0, description="Longest one run may take.")


class ModelShape(_Model):
    """The trained model's size, for FLOPs per token (the built-in workload knows its own)."""

    params: float = Field(gt=0, description="Parameters, excluding the input embedding.")
    layers: int | None = Field(None, ge=1, description="Transformer layers (L).")
    heads: int | None = Field(None, ge=1, description="Attention heads (H).")
    head_dim: int | None = Field(None, ge=1, description="Head dimension (Q).")
    seq_len: int | None = Field(None, ge=1, description="Sequence length trained on (T).")


class TrainingPlatform(_Model):
    """One platform trained to the study's quality target."""

    name: Name = Field(
        description="Short unique name used in reports.")
    logs: Logs | None = Field(None, description="Ingest logs of runs that already happened.")
    builtin: Builtin | None = Field(None, description="Run the built-in workload.")
    command: Command | None = Field(None, description="Run your own training script.")
    platform: Platform = Field(default_factory=Platform, description="Hardware facts "
                               "(catalog id, chips, precision).")
    price: Price | None = Field(None, description="What a chip costs per hour; without it "
                                "the platform gets no bill.")
    costs: TargetCosts = Field(default_factory=TargetCosts, description="Bill items beyond "
                               "chip-hours.")
    energy: Energy = Field(default_factory=Energy, description="Energy probe and boundary.")
    model: ModelShape | None = Field(None, description="Model size for MFU (logs and "
                                     "commands; the built-in workload knows its own).")
    peak_tflops: float | None = Field(
        None, gt=0, description="Declared peak TFLOPS per chip at the declared precision, "
        "for MFU when the catalog has none (an assumption).")
    recompute: bool = Field(False, description="Activation recomputation is on (HFU counts "
                            "the recomputed forward).")

    @model_validator(mode="after")
    def _one_source(self) -> TrainingPlatform:
        given = [k for k in ("logs", "builtin", "command") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of logs, builtin or command")
        return self

    # The bill reads a target's portability and availability sections; training has none.
    @property
    def portability(self) -> None:
        return None

    @property
    def availability(self) -> None:
        return None


class Training(_Model):
    """Training on equal terms: time and cost to a quality target (docs/training.md)."""

    target: QualityTarget | None = Field(
        None, description="The quality every run must reach. Optional when every platform "
        "reads MLPerf logs of a known benchmark: the benchmark's own target from the rules "
        "is used; a declared target wins over it (the report says when they differ).")
    runs: int = Field(3, ge=1, le=100, description="Runs (seeds) per platform; MLPerf scoring "
                      "needs at least 3.")
    seed: int = Field(0, ge=0, description="Base seed; run i uses seed + i.")
    spike_z: float = Field(4.0, gt=0, description="A loss or gradient-norm spike: rolling "
                           "z-score above this.")
    spike_window: int = Field(20, ge=3, description="Steps in the rolling window.")
    platforms: list[TrainingPlatform] = Field(min_length=1, description="The platforms.")

    @model_validator(mode="after")
    def _names(self) -> Training:
        names = [p.name for p in self.platforms]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"training platform names must be unique; repeated: "
                             f"{', '.join(dupes)}")
        if self.target is None and any(p.logs is None for p in self.platforms):
            raise ValueError("training.target is required unless every platform reads MLPerf "
                             "logs (its benchmark's target then applies)")
        for p in self.platforms:
            b = p.builtin
            k = b.kill if b is not None else None
            if b is not None and k is not None and (
                    k.run >= self.runs or k.rank >= b.processes or k.at_step > b.max_steps):
                raise ValueError(f"{p.name}: builtin.kill needs run < runs, rank < processes "
                                 "and at_step <= max_steps")
        return self


__all__ = ["AccuracyUnit", "Builtin", "Columns", "Command", "Kill", "LogFormat", "LogRun", "Logs",
           "ModelShape", "QualityTarget", "TimeUnit", "TraceFormat", "Training",
           "TrainingPlatform", "Units"]
