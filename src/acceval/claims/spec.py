"""The study's ``claims:`` and ``plan:`` sections, and the shape of one vendor claim.

A claim keeps the axes it was measured on (model, precision, batch size, input and output
length, concurrency, latency target, software, quality); an axis the source does not state is
``None`` and the ledger flags it by name. A check maps a ratio claim onto two targets of the
run (which is the claim's subject, which its comparator, and what to measure). The plan
section describes the model the roofline planner sizes (docs/planning.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ClaimKind = Literal["up to", "more than", "at least", "about", "average", "typical", "peak",
                    "exact", "projected"]
#: What each kind of value means when it is read (the ledger prints it beside the value).
KIND_MEANING: dict[str, str] = {
    "up to": "the best point the vendor observed, not the distribution of workloads",
    "more than": "a lower bound at the vendor's chosen point",
    "at least": "a lower bound at the vendor's chosen point",
    "about": "an approximate figure ('almost', 'about')",
    "average": "a mean over workloads the source does not list",
    "typical": "a representative point the source chose",
    "peak": "a theoretical or system capacity, not a measured workload",
    "exact": "a stated figure",
    "projected": "a forecast for hardware not yet available",
}
#: The measures a claim check can compare, by the point summary field they read.
MEASURES: dict[str, str] = {
    "output_tokens_per_s": "output_token_throughput_tps",
    "requests_per_s": "request_throughput_rps",
    "goodput_rps": "goodput_rps",
    "correct_goodput_rps": "correct_goodput_rps",
}
Measure = Literal["output_tokens_per_s", "requests_per_s", "goodput_rps", "correct_goodput_rps"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClaimAxes(_Model):
    """The conditions a claim was measured under; ``None`` where the source does not say."""

    model: str | None = Field(None, description="Model the claim was measured with.")
    precision: str | None = Field(None, description="Numeric precision, e.g. fp8, bf16.")
    batch_size: int | None = Field(None, ge=1, description="Batch size.")
    input_tokens: int | None = Field(None, ge=1, description="Input (prompt) length.")
    output_tokens: int | None = Field(None, ge=1, description="Output length.")
    concurrency: int | None = Field(None, ge=1, description="Requests in flight.")
    latency_target: str | None = Field(None, description="Latency objective, as stated.")
    software: str | None = Field(None, description="Serving software and version.")
    quality: str | None = Field(None, description="Quality level the answers met.")


#: Axis names in the order the ledger shows them.
AXES: tuple[str, ...] = tuple(ClaimAxes.model_fields)


class ClaimSource(_Model):
    """Where a claim was read."""

    document: str = Field(description="The document (title, page or file).")
    date: str | None = Field(None, description="Its date, or the event it reports.")
    quote: str = Field(description="The sentence as published (original language).")
    location: str | None = Field(None, description="Where in the document (headline, body).")


class Claim(_Model):
    """One published claim: a value, what kind of value, of what, against what, from where."""

    id: str = Field(description="Ledger id, used by claims.check.")
    subject: str = Field(description="What the claim is about, e.g. 'Trn3 UltraServer'.")
    value: float = Field(description="The number as published.")
    unit: str = Field(description="'x' for a ratio to the comparator, else its unit "
                      "(PFLOPS, GB, TB/s, chips, %).")
    kind: ClaimKind = Field(description="up to, more than, average, typical, peak, ...")
    metric: str = Field(description="What is measured: performance, memory bandwidth, ...")
    comparator: str | None = Field(None, description="What the ratio is of, for 'x' claims.")
    subject_hardware: str | None = Field(None, description="Catalog id of the subject.")
    comparator_hardware: str | None = Field(None, description="Catalog id of the comparator.")
    scope: Literal["workload", "hardware"] = Field(
        "workload", description="hardware: a capacity figure, to which workload axes do not "
        "apply; workload: a measured result, which needs its axes.")
    measured_by: str = Field("vendor", description="Who measured it.")
    source: ClaimSource = Field(description="Document, date and quote.")
    axes: ClaimAxes = Field(default_factory=ClaimAxes, description="Measurement conditions.")
    note: str | None = Field(None, description="Caveats.")

    @model_validator(mode="after")
    def _ratio(self) -> Claim:
        if self.unit == "x" and self.comparator is None:
            raise ValueError("a ratio claim (unit 'x') needs its comparator")
        return self


class ClaimCheck(_Model):
    """A ratio claim mapped onto two targets of the run, to be compared point by point."""

    claim: str = Field(description="Id of a claim in the ledger.")
    subject: str = Field(description="The target standing for the claim's subject.")
    comparator: str = Field(description="The target standing for the claim's comparator.")
    measure: Measure = Field("output_tokens_per_s", description="What is compared at every "
                             "comparable point: output_tokens_per_s, requests_per_s, "
                             "goodput_rps (at the study's SLO), correct_goodput_rps.")


class Claims(_Model):
    """Vendor claims to show beside the run, and the ones to check against it."""

    builtin: bool = Field(True, description="Include the shipped claims (the launch "
                          "articles' Trainium3, Bedrock and Trainium4 claims).")
    file: str | None = Field(None, description="A YAML file with a `claims:` list (path "
                             "relative to the study file).")
    items: list[Claim] = Field(default_factory=list, description="Claims written inline.")
    check: list[ClaimCheck] = Field(default_factory=list,
                                    description="Ratio claims to compare with the run.")


Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"]


class ModelShape(_Model):
    """The model the planner sizes: a dense decoder, or a mixture of experts."""

    name: str = Field(description="Model name, shown in the plan.")
    parameters: float = Field(gt=0, description="Parameter count (all weights).")
    layers: int = Field(ge=1, description="Decoder layers.")
    hidden: int = Field(ge=1, description="Hidden size.")
    heads: int = Field(ge=1, description="Attention heads.")
    kv_heads: int | None = Field(None, ge=1, description="Key/value heads (default: heads).")
    head_dim: int | None = Field(None, ge=1, description="Head size (default hidden/heads).")
    vocab: int = Field(ge=1, description="Vocabulary size.")
    experts: int | None = Field(None, ge=2, description="Experts per MoE layer (a mixture of "
                                "experts; leave out for a dense model).")
    active_experts: int | None = Field(None, ge=1, description="Experts each token is routed "
                                       "to (top-k).")
    active_parameters: float | None = Field(None, gt=0, description="Parameters one token "
                                            "uses (shared + k experts).")

    @model_validator(mode="after")
    def _moe(self) -> ModelShape:
        moe = (self.experts, self.active_experts, self.active_parameters)
        if any(v is not None for v in moe) and any(v is None for v in moe):
            raise ValueError("a mixture of experts needs experts, active_experts and "
                             "active_parameters together")
        if self.experts is not None and self.active_experts is not None:
            if self.active_experts >= self.experts:
                raise ValueError("active_experts must be fewer than experts")
            if (self.active_parameters or 0) >= self.parameters:
                raise ValueError("active_parameters must be fewer than parameters")
        return self


class Context(_Model):
    """One input/output length the plan is computed at."""

    input_tokens: int = Field(ge=1, description="Prompt length.")
    output_tokens: int = Field(ge=1, description="Generated length.")


class TargetPlan(_Model):
    """What differs for one target: its model or precisions."""

    model: ModelShape | str | None = Field(None, description="Model, or builtin:NAME.")
    weights: Precision | None = Field(None, description="Weight precision.")
    kv_cache: Precision | None = Field(None, description="KV-cache precision.")
    compute: Literal["fp32", "bf16", "fp16", "fp8"] | None = Field(
        None, description="Precision of the matrix math (its catalog peak is used).")


class PlanSpec(_Model):
    """The roofline planner's inputs beyond the catalog (docs/planning.md)."""

    model: ModelShape | str = Field(description="The model: its shape, or builtin:NAME "
                                    "(read from the shipped model's config).")
    weights: Precision | None = Field(None, description="Weight precision (default: the "
                                      "target's platform.precision).")
    kv_cache: Precision | None = Field(None, description="KV-cache precision (default: "
                                       "fp32 for fp32 weights, else bf16).")
    compute: Literal["fp32", "bf16", "fp16", "fp8"] | None = Field(
        None, description="Precision of the matrix math (default: the weights' when they "
        "are fp32, bf16, fp16 or fp8, else bf16: weight-only quantisation).")
    contexts: list[Context] = Field(min_length=1, description="Input and output lengths.")
    memory_utilization: float = Field(0.9, gt=0, le=1, description="Share of device memory "
                                      "the server may use (vLLM's default is 0.9).")
    max_batch: int = Field(256, ge=1, description="Largest batch the server runs (vLLM's "
                           "default max_num_seqs is 256).")
    parallelism: Literal["tensor", "expert"] = Field(
        "tensor", description="How a replica spreads over its chips: tensor (every matrix "
        "split, two all-reduces per layer) or expert (experts spread, shared weights on "
        "every chip, two all-to-alls per layer; a mixture of experts only).")
    allreduce_latency_us: float | None = Field(
        None, ge=0, description="Fixed cost of one all-reduce (an assumption; without it "
        "communication is bandwidth only, an optimistic bound).")
    accuracy: float | None = Field(None, gt=0, le=1, description="Assumed accuracy for the "
                                   "planned cost per correct task before any run.")
    measure_host: bool = Field(False, description="Measure this host's peak FLOPS and memory "
                               "bandwidth (a micro-benchmark under 2 s) for CPU targets.")
    targets: dict[str, TargetPlan] = Field(default_factory=dict,
                                           description="Per-target overrides, by name.")


PRECISION_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0,
                                     "int8": 1.0, "fp4": 0.5, "int4": 0.5}
