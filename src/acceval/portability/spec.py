"""Study-file sections for portability: ``Target.portability`` (what the migration to this
target took), ``Target.exit`` (what leaving it would take) and ``Study.portability`` (the
reference target and the performance contract).

Validated at the edge like the rest of the study (``extra="forbid"``, frozen). Relative
paths are relative to the study file. docs/portability.md explains each field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Exportable = Literal["yes", "no", "partial", "n/a", "unknown"]
Depth = Literal["none", "prompting", "adapters", "fine_tuning", "post_training", "mid_training",
                "pre_training"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class CodeDiff(_Model):
    """Where the model/serving code of the reference and of this target live."""

    repo: str | None = Field(None, description="A git repository; compare `base` with `head`.")
    base: str | None = Field(None, description="Git ref of the reference platform's code.")
    head: str | None = Field(None, description="Git ref of this target's code.")
    paths: list[str] = Field(default_factory=list, description="Limit the diff to these paths.")
    reference_dir: str | None = Field(
        None, description="Instead of git: the reference code folder ...")
    target_dir: str | None = Field(None, description="... and this target's code folder.")

    @model_validator(mode="after")
    def _one_way(self) -> CodeDiff:
        git = self.repo is not None
        dirs = self.reference_dir is not None or self.target_dir is not None
        if git == dirs:
            raise ValueError("give either repo with base and head, or reference_dir and target_dir")
        if git and (self.base is None or self.head is None):
            raise ValueError("a git diff needs both base and head refs")
        if dirs and (self.reference_dir is None or self.target_dir is None):
            raise ValueError("a folder diff needs both reference_dir and target_dir")
        return self


class LogFile(_Model):
    """A trace or log to parse for operations that ran on another processor."""

    path: str = Field(description="The file (PyTorch profiler trace, ORT verbose log, Neuron "
                      "analyze report or compiler log).")
    format: Literal["torch_trace", "ort_log", "neuron"] | None = Field(
        None, description="Its format; detected from the content when omitted.")


class CompileLog(_Model):
    """A log that states compile time; every match of `regex` is summed."""

    path: str = Field(description="The compiler or server log.")
    regex: str = Field(
        r"(?i)compil\w*\D{0,40}?(\d+(?:\.\d+)?)\s*s(?:ec(?:ond)?s?)?\b",
        description="Regular expression whose first group is a number of seconds.")


class Tool(_Model):
    name: str = Field(description="A debugging or profiling tool that works on this target.")
    purpose: str | None = Field(None, description="What it shows (profile, memory, trace).")
    evidence: str | None = Field(None, description="URL, doc or command proving it works.")


class ArtifactSpec(_Model):
    """How to check that the weights move: one folder loaded in two runtimes."""

    path: str | None = Field(None, description="The artifact folder (or builtin:NAME).")
    runtime_a: str = Field("ortgenai", description="First runtime (an acceval engine name).")
    runtime_b: str = Field("numpy", description="Second runtime (numpy needs no torch; "
                           "transformers is the eager torch reference).")
    prompts: int = Field(32, ge=1, description="Prompts from the artifact's heldout.tsv.")
    min_agreement: float = Field(0.95, ge=0, le=1,
                                 description="Share of identical answers needed to pass.")
    portable: bool | None = Field(
        None, description="Declared verdict when no check can run here (e.g. NEFF files are "
        "bound to the neuronx-cc version and instance family).")
    note: str | None = Field(None, description="Why, with a source, for a declared verdict.")


class TargetPortability(_Model):
    """What moving the workload to this target took (the migration ledger's inputs)."""

    code: CodeDiff | None = Field(None, description="Model/serving code versus the reference.")
    compile_s: float | None = Field(
        None, ge=0, description="Declared compile time, seconds; the bill uses it too "
        "(costs.compile_s wins when both are given).")
    compile_log: CompileLog | None = Field(
        None, description="Parse compile time from a log; used by the ledger and the bill "
        "when no compile_s is declared.")
    fallback_logs: list[LogFile] = Field(
        default_factory=list, description="Traces/logs showing ops that ran on another "
        "processor.")
    tools: list[Tool] = Field(default_factory=list, description="Debugging/profiling tools.")
    adaptation_hours: float | None = Field(None, ge=0, description="Engineer hours spent "
                                           "porting to this target.")
    limitations: list[str] = Field(default_factory=list, description="Known limitations.")
    artifact: ArtifactSpec | None = Field(None, description="The artifact portability check.")


class Answer(_Model):
    """One exit-test answer; without evidence it is reported as unknown."""

    status: Exportable = Field("unknown", description="yes, no, partial, n/a or unknown.")
    formats: list[str] = Field(default_factory=list, description="Export formats.")
    answer: str | None = Field(None, description="The answer in words.")
    evidence: str | None = Field(None, description="URL, document or path backing it.")
    quote: str | None = Field(None, description="The sentence of that source.")


class ManagedService(_Model):
    """A hosted training/fine-tuning service, assessed on two separate axes."""

    name: str = Field(description="Service name, e.g. a hosted fine-tuning service.")
    customization_depth: Depth = Field(
        "none", description="Deepest stage the customer can change: none, prompting, adapters, "
        "fine_tuning, post_training, mid_training, pre_training.")
    depth_evidence: str | None = Field(None, description="Source for the depth.")
    depth_quote: str | None = Field(None, description="Its sentence.")
    model_ownership: Answer = Field(default_factory=Answer, description="Who owns the result?")
    weights_export: Answer = Field(default_factory=Answer, description="Can weights leave?")
    optimizer_state_export: Answer = Field(default_factory=Answer,
                                           description="Can optimizer state leave?")
    data_deletion: Answer = Field(default_factory=Answer, description="How is data deleted?")
    logs_retained: Answer = Field(default_factory=Answer, description="What logs remain?")
    service_end: Answer = Field(default_factory=Answer,
                                description="What happens when the service ends?")


class ExitSpec(_Model):
    """What leaving this target would take: exports, lost functions and the exit bill."""

    weights: Answer = Field(default_factory=Answer, description="Weights/checkpoints export.")
    optimizer_state: Answer = Field(default_factory=Answer, description="Optimizer state.")
    data: Answer = Field(default_factory=Answer, description="Training/eval data.")
    logs: Answer = Field(default_factory=Answer, description="Logs and metrics.")
    code: Answer = Field(default_factory=Answer, description="Model/serving code.")
    lost_functions: list[str] = Field(default_factory=list,
                                      description="Functions that would be lost on leaving.")
    engineering_hours: float | None = Field(
        None, ge=0, description="Hours to port away; default: the ledger's adaptation_hours.")
    revalidation_usd: float | None = Field(None, ge=0, description="Re-validation runs "
                                           "(accuracy, SLOs) on the new platform, USD.")
    recompile_usd: float | None = Field(None, ge=0, description="Re-compile/tune compute, USD.")
    egress_gb: float | None = Field(None, ge=0, description="Data and artifacts to move, GB.")
    stranded_commitment_usd: float | None = Field(
        None, ge=0, description="Remaining reserved/committed spend, USD.")
    resale_usd: float | None = Field(None, ge=0, description="Resale/transfer value of it.")
    dual_running_hours: float | None = Field(None, ge=0,
                                             description="Hours both fleets run in parallel.")
    fleet_usd_per_hour: float | None = Field(
        None, ge=0, description="The fleet being left, USD/hour; default: the measured "
        "target's chip rate x chips.")
    managed_service: ManagedService | None = Field(None, description="For a hosted service.")


class Contract(_Model):
    """The cost and latency contract a target must keep (performance portability)."""

    percentile: float = Field(95.0, gt=0, le=100, description="Percentile of the latency bounds.")
    ttft_ms: float | None = Field(None, gt=0, description="TTFT bound at the percentile.")
    tpot_ms: float | None = Field(None, gt=0, description="TPOT bound at the percentile.")
    e2e_ms: float | None = Field(None, gt=0, description="E2E latency bound at the percentile.")
    cost_per_correct_usd: float | None = Field(None, gt=0,
                                               description="Most a correct task may cost.")
    cost_ratio_to_reference: float | None = Field(
        None, gt=0, description="Most cost per correct task relative to the reference (1.1 = "
        "at most 10 % dearer).")
    min_accuracy: float | None = Field(None, ge=0, le=1, description="Accuracy floor.")


class StudyPortability(_Model):
    """Study-wide portability settings."""

    reference: str | None = Field(None, description="The reference target (the platform being "
                                  "migrated from).")
    contract: Contract | None = Field(
        None, description="Performance contract; default: the study's SLO bounds.")
