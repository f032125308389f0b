"""Roofline formulas: what one replica of a dense decoder could do on a chip, before renting it.

Pure functions over a chip's figures and a model's shape; every formula is written out, with
worked cases, in docs/planning.md. Bounds are optimistic by construction: compute, memory and
communication overlap perfectly, so a real server lands below them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
    """A dense decoder, resolved (KV heads and head size filled in)."""

    name: str
    parameters: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int

    @property
    def attention_width(self) -> int:
        return self.heads * self.head_dim


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


def kv_bytes_per_token(s: Shape, b: Bytes) -> float:
    """Keys and values of every layer for one token: 2 · layers · kv_heads · head_dim · bytes."""
    return 2 * s.layers * s.kv_heads * s.head_dim * b.kv


def activation_bytes(s: Shape, b: Bytes, input_tokens: int, batch: int) -> float:
    """The working set: one prompt's prefill activations plus fp32 logits per sequence."""
    return (input_tokens * ACTIVATION_TENSORS * s.hidden * b.activation
            + batch * s.vocab * LOGIT_BYTES)


def usable_bytes(chip: Chip, chips: int, utilization: float) -> float | None:
    return None if chip.memory_bytes is None else utilization * chip.memory_bytes * chips


def max_batch(s: Shape, b: Bytes, chip: Chip, chips: int, input_tokens: int,
              output_tokens: int, utilization: float) -> int | None:
    """The largest batch whose weights, KV cache (full context) and activations fit in the
    usable memory of ``chips`` chips; None when not even one sequence fits."""
    usable = usable_bytes(chip, chips, utilization)
    if usable is None:
        return None
    free = (usable - weight_bytes(s, b)
            - input_tokens * ACTIVATION_TENSORS * s.hidden * b.activation)
    per_sequence = kv_bytes_per_token(s, b) * (input_tokens + output_tokens) \
        + s.vocab * LOGIT_BYTES
    n = math.floor(free / per_sequence) if free > 0 else 0
    return n if n >= 1 else None


def allreduce_seconds(message_bytes: float, chips: int, link_bw: float,
                      latency_s: float = 0.0) -> float:
    """A ring all-reduce: each chip sends 2·(n−1)/n of the message over its link."""
    if chips <= 1:
        return 0.0
    return 2 * (chips - 1) / chips * message_bytes / link_bw + latency_s


def communication_seconds(s: Shape, b: Bytes, chip: Chip, chips: int, tokens: int,
                          latency_s: float = 0.0) -> float | None:
    """Tensor parallelism: two all-reduces of ``tokens × hidden`` activations per layer."""
    if chips <= 1:
        return 0.0
    if chip.link_bw is None:
        return None
    message = tokens * s.hidden * b.activation
    return 2 * s.layers * allreduce_seconds(message, chips, chip.link_bw, latency_s)


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
                input_tokens: int, output_tokens: int, latency_s: float = 0.0) -> Step | None:
    """One decode step of ``batch`` sequences at the mean context ``input + output / 2``:
    every weight is read once, every sequence's KV cache is read, and each token costs
    ``2 · parameters + 4 · layers · attention_width · context`` FLOPs."""
    context = input_tokens + output_tokens / 2
    flops = batch * (2 * s.parameters + 4 * s.layers * s.attention_width * context)
    nbytes = weight_bytes(s, b) + batch * kv_bytes_per_token(s, b) * context
    return _step(flops, nbytes, chip, chips,
                 communication_seconds(s, b, chip, chips, batch, latency_s))


def prefill_step(s: Shape, b: Bytes, chip: Chip, chips: int, input_tokens: int,
                 latency_s: float = 0.0) -> Step | None:
    """One prompt's prefill: ``2 · parameters · n + 2 · layers · attention_width · n²`` FLOPs
    (causal attention), the weights read once and the prompt's KV cache written."""
    n = input_tokens
    flops = 2 * s.parameters * n + 2 * s.layers * s.attention_width * n * n
    nbytes = weight_bytes(s, b) + n * kv_bytes_per_token(s, b)
    return _step(flops, nbytes, chip, chips,
                 communication_seconds(s, b, chip, chips, n, latency_s))


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


__all__ = ["Bytes", "Chip", "Shape", "Step", "activation_bytes", "allreduce_seconds",
           "chip_seconds_per_task", "communication_seconds", "decode_step", "kv_bytes_per_token",
           "max_batch", "prefill_step", "ridge", "serving_output_tps", "usable_bytes",
           "weight_bytes"]
