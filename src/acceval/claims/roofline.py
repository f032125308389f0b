"""Roofline formulas: what one replica of a dense decoder could do on a chip, before renting it.

Pure functions over a chip's figures and a model's shape; every formula is written out, with
worked cases, in docs/planning.md. Bounds are optimistic by construction: compute, memory and
communication overlap perfectly, so a real server lands below them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

#: Bytes of one fp32 logit (the sampler reads the logits in fp32).
LOGIT_BYTES = 4.0
#: Tensors of width ``hidden`` alive at once during one prompt's prefill (the residual, the
#: normed input, the attention output and the MLP input): the activation working set.
ACTIVATION_TENSORS = 4


@dataclass(frozen=True, slots=True)
class Chip:
    """One chip's figures in base units; ``None`` where the catalog has none."""

    peak_flops: float | None  # FLOP/s at the compute precision
    memory_bytes: float | None
    memory_bw: float | None  # bytes/s
    link_bw: float | None  # bytes/s per chip, one direction
    domain: int | None = None  # chips in the scale-up domain


@dataclass(frozen=True, slots=True)
class Shape:
    """A decoder, resolved (KV heads and head size filled in); a mixture of experts when
    ``experts`` > 0, with ``active_experts`` routed per token."""

    name: str
    parameters: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    experts: int = 0
    active_experts: int = 0
    active_parameters: float | None = None

    @property
    def attention_width(self) -> int:
        return self.heads * self.head_dim

    @property
    def active(self) -> float:
        """Parameters one token uses (all of them for a dense model)."""
        return self.active_parameters or self.parameters

    @property
    def expert_parameters(self) -> float:
        """Parameters of one expert: total = shared + E·e and active = shared + k·e."""
        if not self.experts:
            return 0.0
        return (self.parameters - self.active) / (self.experts - self.active_experts)

    @property
    def shared_parameters(self) -> float:
        """Parameters every token uses (attention, embeddings, norms, shared layers)."""
        return self.active - self.active_experts * self.expert_parameters


@dataclass(frozen=True, slots=True)
class Bytes:
    """Bytes per element of the weights, the KV cache and the activations."""

    weight: float
    kv: float
    activation: float


@dataclass(frozen=True, slots=True)
class Step:
    """One forward step's time bound and what bounds it."""

    seconds: float
    bound: str  # memory, compute or communication
    flops: float
    bytes: float
    communication_s: float | None

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes


def weight_bytes(s: Shape, b: Bytes) -> float:
    return s.parameters * b.weight


def experts_touched(s: Shape, tokens: int) -> float:
    """Expected distinct experts per layer that ``tokens`` tokens route to (uniform
    routing): E · (1 − (1 − k/E)^tokens)."""
    if not s.experts:
        return 0.0
    return s.experts * (1 - (1 - s.active_experts / s.experts) ** tokens)


def weight_bytes_read(s: Shape, b: Bytes, tokens: int) -> float:
    """Weight bytes one forward pass over ``tokens`` tokens reads: the shared weights and
    the experts those tokens touch (every weight, for a dense model)."""
    if not s.experts:
        return weight_bytes(s, b)
    return (s.shared_parameters + experts_touched(s, tokens) * s.expert_parameters) * b.weight


def kv_bytes_per_token(s: Shape, b: Bytes) -> float:
    """Keys and values of every layer for one token: 2 · layers · kv_heads · head_dim · bytes."""
    return 2 * s.layers * s.kv_heads * s.head_dim * b.kv


def activation_bytes(s: Shape, b: Bytes, input_tokens: int, batch: int) -> float:
    """The working set: one prompt's prefill activations plus fp32 logits per sequence."""
    return (input_tokens * ACTIVATION_TENSORS * s.hidden * b.activation
            + batch * s.vocab * LOGIT_BYTES)


def usable_bytes(chip: Chip, chips: int, utilization: float) -> float | None:
    return None if chip.memory_bytes is None else utilization * chip.memory_bytes * chips


def allreduce_seconds(message_bytes: float, chips: int, link_bw: float,
                      latency_s: float = 0.0) -> float:
    """A ring all-reduce: each chip sends 2·(n−1)/n of the message over its link."""
    if chips <= 1:
        return 0.0
    return 2 * (chips - 1) / chips * message_bytes / link_bw + latency_s


class Parallelism(Protocol):
    """How one replica spreads over its chips: what each holds and what they exchange."""

    name: str

    def problem(self, s: Shape) -> str | None:
        """Why this model cannot be spread this way, or None."""
        ...

    def most_chips(self, s: Shape) -> int | None:
        """The largest replica this way allows (None: the scale-up domain decides)."""
        ...

    def resident_weight_bytes(self, s: Shape, b: Bytes, chips: int) -> float: ...

    def communication_seconds(self, s: Shape, b: Bytes, chip: Chip, chips: int, tokens: int,
                              latency_s: float = 0.0) -> float | None: ...


class TensorParallel:
    """Every weight matrix split over the chips; two all-reduces of the activations per
    layer (after attention and after the MLP)."""

    name = "tensor"

    def problem(self, s: Shape) -> str | None:
        return None

    def most_chips(self, s: Shape) -> int | None:
        return None

    def resident_weight_bytes(self, s: Shape, b: Bytes, chips: int) -> float:
        return weight_bytes(s, b)

    def communication_seconds(self, s: Shape, b: Bytes, chip: Chip, chips: int, tokens: int,
                              latency_s: float = 0.0) -> float | None:
        if chips <= 1:
            return 0.0
        if chip.link_bw is None:
            return None
        message = tokens * s.hidden * b.activation
        return 2 * s.layers * allreduce_seconds(message, chips, chip.link_bw, latency_s)


class ExpertParallel:
    """The experts spread over the chips, the shared weights (attention, embeddings) on
    every chip, the batch split evenly; each layer sends every token to its experts and back
    (two all-to-alls)."""

    name = "expert"

    def problem(self, s: Shape) -> str | None:
        return None if s.experts else f"{s.name} is dense: expert parallelism needs experts"

    def most_chips(self, s: Shape) -> int | None:
        return s.experts

    def resident_weight_bytes(self, s: Shape, b: Bytes, chips: int) -> float:
        return (chips * s.shared_parameters + s.experts * s.expert_parameters) * b.weight

    def communication_seconds(self, s: Shape, b: Bytes, chip: Chip, chips: int, tokens: int,
                              latency_s: float = 0.0) -> float | None:
        if chips <= 1:
            return 0.0
        if chip.link_bw is None:
            return None
        # Each chip holds tokens/n; each token goes to k experts, (n−1)/n of them elsewhere.
        sent = tokens / chips * s.active_experts * (chips - 1) / chips * s.hidden * b.activation
        return 2 * s.layers * (sent / chip.link_bw + latency_s)


TENSOR = TensorParallel()
PARALLELISMS: dict[str, Parallelism] = {"tensor": TENSOR, "expert": ExpertParallel()}


def communication_seconds(s: Shape, b: Bytes, chip: Chip, chips: int, tokens: int,
                          latency_s: float = 0.0, par: Parallelism = TENSOR) -> float | None:
    """Communication time of one forward pass over ``tokens`` tokens on ``chips`` chips."""
    return par.communication_seconds(s, b, chip, chips, tokens, latency_s)


def max_batch(s: Shape, b: Bytes, chip: Chip, chips: int, input_tokens: int,
              output_tokens: int, utilization: float, par: Parallelism = TENSOR) -> int | None:
    """The largest batch whose weights, KV cache (full context) and activations fit in the
    usable memory of ``chips`` chips; None when not even one sequence fits."""
    usable = usable_bytes(chip, chips, utilization)
    if usable is None:
        return None
    free = (usable - par.resident_weight_bytes(s, b, chips)
            - input_tokens * ACTIVATION_TENSORS * s.hidden * b.activation)
    per_sequence = kv_bytes_per_token(s, b) * (input_tokens + output_tokens) \
        + s.vocab * LOGIT_BYTES
    n = math.floor(free / per_sequence) if free > 0 else 0
    return n if n >= 1 else None


def _step(flops: float, nbytes: float, chip: Chip, chips: int,
          comm_s: float | None) -> Step | None:
    if chip.memory_bw is None:
        return None
    terms = {"memory": nbytes / (chip.memory_bw * chips)}
    if chip.peak_flops is not None:
        terms["compute"] = flops / (chip.peak_flops * chips)
    if comm_s:
        terms["communication"] = comm_s
    bound = max(terms, key=lambda k: terms[k])
    return Step(terms[bound], bound, flops, nbytes, comm_s)


def decode_step(s: Shape, b: Bytes, chip: Chip, chips: int, batch: int,
                input_tokens: int, output_tokens: int, latency_s: float = 0.0,
                par: Parallelism = TENSOR) -> Step | None:
    """One decode step of ``batch`` sequences at the mean context ``input + output / 2``:
    the weights are read once (the shared ones on every chip that holds them, the experts
    the batch touches), every sequence's KV cache is read, and each token costs
    ``2 · active parameters + 4 · layers · attention_width · context`` FLOPs."""
    context = input_tokens + output_tokens / 2
    flops = batch * (2 * s.active + 4 * s.layers * s.attention_width * context)
    nbytes = (_read(s, b, chips, batch, par)
              + batch * kv_bytes_per_token(s, b) * context)
    return _step(flops, nbytes, chip, chips,
                 par.communication_seconds(s, b, chip, chips, batch, latency_s))


def _read(s: Shape, b: Bytes, chips: int, tokens: int, par: Parallelism) -> float:
    """Weight bytes read by all chips in one pass: replicated shared weights count once per
    chip that holds them."""
    replicated = par.resident_weight_bytes(s, b, chips) - weight_bytes(s, b)
    return weight_bytes_read(s, b, tokens) + replicated


def prefill_step(s: Shape, b: Bytes, chip: Chip, chips: int, input_tokens: int,
                 latency_s: float = 0.0, par: Parallelism = TENSOR) -> Step | None:
    """One prompt's prefill: ``2 · active parameters · n + 2 · layers · attention_width ·
    n²`` FLOPs (causal attention), the weights read once and the prompt's KV cache written."""
    n = input_tokens
    flops = 2 * s.active * n + 2 * s.layers * s.attention_width * n * n
    nbytes = _read(s, b, chips, n, par) + n * kv_bytes_per_token(s, b)
    return _step(flops, nbytes, chip, chips,
                 par.communication_seconds(s, b, chip, chips, n, latency_s))


def serving_output_tps(batch: int, output_tokens: int, prefill: Step, decode: Step) -> float:
    """Output tokens per second of one replica serving ``batch`` requests end to end: their
    prefills, then ``output_tokens`` decode steps."""
    return batch * output_tokens / (batch * prefill.seconds + output_tokens * decode.seconds)


def chip_seconds_per_task(batch: int, output_tokens: int, chips: int, prefill: Step,
                          decode: Step) -> float:
    """Chip-seconds one request holds at the bound: its prefill and its share of the steps."""
    return chips * (prefill.seconds + output_tokens * decode.seconds / batch)


def ridge(chip: Chip) -> float | None:
    """FLOP per byte above which a kernel is compute-bound."""
    if chip.peak_flops is None or chip.memory_bw is None:
        return None
    return chip.peak_flops / chip.memory_bw


__all__ = [
    "PARALLELISMS",
    "TENSOR",
    "Bytes",
    "Chip",
    "ExpertParallel",
    "Parallelism",
    "Shape",
    "Step",
    "TensorParallel",
    "activation_bytes",
    "allreduce_seconds",
    "chip_seconds_per_task",
    "communication_seconds",
    "decode_step",
    "experts_touched",
    "kv_bytes_per_token",
    "max_batch",
    "prefill_step",
    "ridge",
    "serving_output_tps",
    "usable_bytes",
    "weight_bytes",
    "weight_bytes_read",
]
