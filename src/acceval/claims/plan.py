"""The roofline plan of one target: its catalog (or measured host) figures and the study's
model description turned into planned bounds, beside the measured points once a run exists.

Everything here is labelled planned: a bound says what the hardware could do with a perfect
server, never what a server did. The formulas are in :mod:`acceval.claims.roofline`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import Field

from acceval.claims.calibration import Calibration, calibrate
from acceval.claims.roofline import (
    PARALLELISMS,
    Bytes,
    Chip,
    Shape,
    activation_bytes,
    chip_seconds_per_task,
    communication_seconds,
    decode_step,
    kv_bytes_per_token,
    max_batch,
    prefill_step,
    ridge,
    serving_output_tps,
    usable_bytes,
    weight_bytes,
)
from acceval.claims.spec import PRECISION_BYTES, Context, ModelShape, PlanSpec
from acceval.economics.catalog import Fact, Hardware
from acceval.errors import StudyError
from acceval.results.runlog import HostBenchLog
from acceval.results.section import PointResult, Section, SourcedValue


class ScalePoint(Section):
    """The planned decode bound of one replica spread over ``chips`` by tensor parallelism."""

    chips: int
    fits: bool
    batch: int | None
    decode_tps_replica: float | None
    decode_tps_chip: float | None
    step_ms: float | None
    communication_share: float | None  # communication time / step time
    bound: str | None  # memory, compute or communication


class PlanContextResult(Section):
    """The plan at one input/output length (every number planned, none measured)."""

    input_tokens: int
    output_tokens: int
    chips: int  # the target's chips per replica
    weights_gb: float
    kv_gb_per_sequence: float
    activations_gb: float
    usable_gb: float
    fits: bool
    max_batch: int | None  # largest batch whose KV cache fits (None: does not fit)
    batch: int | None  # the batch the bounds are computed at (max_batch capped by plan)
    decode_tps_replica: float | None
    decode_tps_chip: float | None
    decode_bound: str | None  # memory, compute or communication
    decode_intensity: float | None  # FLOP per byte at that batch
    prefill_tps_chip: float | None
    prefill_bound: str | None
    prefill_intensity: float | None
    ridge: float | None  # peak FLOP/s over memory bytes/s
    communication_ms_per_token: float | None
    scaling: list[ScalePoint] = Field(default_factory=list)
    best_chips: int | None = None  # the replica size with the highest decode bound per chip
    scaling_note: str = ""
    cost_per_attempt_usd: float | None = None
    cost_per_correct_usd: float | None = None
    accuracy: float | None = None
    accuracy_origin: str | None = None  # measured (this run) or assumption (plan.accuracy)
    # Output tokens per second per chip of a replica serving the planned batch end to end
    # (its prefills, then its decode steps): the bound measured points are set against.
    serving_tps_chip: float | None = None
    calibration: Calibration | None = None


class PlanPoint(Section):
    """A measured load point beside its planned bound: measured efficiency."""

    label: str
    batch: int  # closed loop: the concurrency; open loop: the mean requests in flight
    open_loop: bool = False  # an open-loop point's throughput follows its offered rate
    input_tokens: float
    output_tokens: float
    measured_tps_chip: float
    bound_tps_chip: float | None
    efficiency: float | None  # measured / planned bound
    plausible: bool = True    # False: measured above the planned upper bound (flag: why)
    flag: str = ""
    above_bound: str | None = None  # measured above the bound: the likely cause


class PlanResult(Section):
    """The roofline plan of one target: what its hardware could do, labelled planned."""

    target: str
    hardware: str | None
    model: str
    parameters: float
    weights: str
    kv_cache: str
    compute: str
    inputs: dict[str, SourcedValue]  # peak FLOPS, memory, bandwidths, with provenance
    contexts: list[PlanContextResult] = Field(default_factory=list)
    measured: list[PlanPoint] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    origin: str = "planned"



_UNIT = {"TB/s": 1e12, "GB/s": 1e9, "GiB/s": 2.0**30, "TFLOPS": 1e12, "PFLOPS": 1e15,
         "GB": 1e9, "GiB": 2.0**30, "TB": 1e12}
GB = 1e9


@dataclass(frozen=True, slots=True)
class PlanTarget:
    """What the plan needs of one target of the study (and of its run, when there is one)."""

    name: str
    hardware: str | None
    chips: int
    precision: str | None
    usd_per_chip_hour: SourcedValue | None = None
    accuracy: float | None = None  # measured on this target
    points: list[PointResult] = field(default_factory=list)


def resolve_shape(model: ModelShape | str) -> Shape:
    """A model shape, from the study or from a shipped model's config (``builtin:NAME``)."""
    if isinstance(model, str):
        return _builtin_shape(model)
    heads = model.heads
    return Shape(model.name, model.parameters, model.layers, model.hidden, heads,
                 model.kv_heads or heads, model.head_dim or model.hidden // heads, model.vocab,
                 experts=model.experts or 0, active_experts=model.active_experts or 0,
                 active_parameters=model.active_parameters)


def _builtin_shape(spec: str) -> Shape:
    from acceval.models import BUILTIN_PREFIX, models_dir

    name = spec.removeprefix(BUILTIN_PREFIX)
    root = models_dir() / name
    if not spec.startswith(BUILTIN_PREFIX) or not (root / "config.json").is_file():
        raise StudyError(f"plan.model: '{spec}' is not a shipped model",
                         [("plan.model", f"no shipped model '{spec}'",
                           "write the model's shape (parameters, layers, hidden, heads, "
                           "vocab) or builtin:tiny / builtin:small")])
    cfg = json.loads((root / "config.json").read_text(encoding="utf-8"))
    card = json.loads((root / "card.json").read_text(encoding="utf-8"))
    heads = int(cfg["num_attention_heads"])
    return Shape(spec, float(card["training"]["params"]), int(cfg["num_hidden_layers"]),
                 int(cfg["hidden_size"]), heads,
                 int(cfg.get("num_key_value_heads") or heads),
                 int(cfg.get("head_dim") or cfg["hidden_size"] // heads),
                 int(cfg["vocab_size"]))


def _precisions(spec: PlanSpec, t: PlanTarget) -> tuple[str, str, str]:
    over = spec.targets.get(t.name)
    weights = (over.weights if over else None) or spec.weights or t.precision
    if weights not in PRECISION_BYTES:
        raise StudyError(f"plan: target {t.name}: weight precision {weights!r} unknown",
                         [(f"plan.targets.{t.name}.weights", f"{weights!r} is not one of "
                           f"{', '.join(PRECISION_BYTES)}", "declare plan.weights")])
    kv = (over.kv_cache if over else None) or spec.kv_cache or (
        "fp32" if weights == "fp32" else "bf16")
    default_compute = weights if weights in ("fp32", "bf16", "fp16", "fp8") else "bf16"
    compute = (over.compute if over else None) or spec.compute or default_compute
    return weights, kv, compute


def _fact(f: Fact | None, value: float | None = None) -> SourcedValue | None:
    if f is None:
        return None
    return SourcedValue(value=f.value * _UNIT.get(f.unit, 1.0) if value is None else value,
                        origin="catalog", date=f.date,
                        source=f.source + (f" [{f.grade}]" if f.grade != "V" else "")
                        + ("" if value is None else f", {f.value:g} {f.unit} as published"))


def _inputs(hw: Hardware | None, compute: str, host: HostBenchLog | None,
            notes: list[str]) -> dict[str, SourcedValue]:
    """The chip's figures with their provenance: measured on this host, or the catalog's."""
    if hw is not None and hw.kind == "cpu" and host is not None:
        how = f"measured on this host ({host.method})"
        out = {"peak_flops": SourcedValue(value=host.peak_fp32_tflops * 1e12,
                                          origin="measured", source=how),
               "memory_bandwidth": SourcedValue(value=host.memory_bandwidth_tbs * 1e12,
                                                origin="measured", source=how)}
        if host.memory_bytes:
            out["memory"] = SourcedValue(value=float(host.memory_bytes), origin="measured",
                                         source="host memory (sysconf)")
        if compute != "fp32":
            notes.append(f"the host's peak was measured in fp32 and is used for {compute}")
        return out
    if hw is None:
        notes.append("no catalog entry for this target's hardware: no bound")
        return {}
    out = {}
    peak = hw.peak(compute)
    for name, fact in (("peak_flops", peak), ("memory", hw.memory),
                       ("memory_bandwidth", hw.memory_bandwidth),
                       ("link_bandwidth", hw.scale_up_bandwidth),
                       ("chips_per_node", hw.chips_per_node),
                       ("chips_per_domain", hw.chips_per_domain)):
        # Memory converts by the catalog's one rule (decimal GB, binary GiB and MiB).
        sv = _fact(fact, hw.memory_bytes if name == "memory" else None)
        if sv is not None:
            out[name] = sv
    if peak is None:
        notes.append(f"no {compute} peak in the catalog for {hw.id}: decode and prefill are "
                     "bounded by memory only")
    if hw.kind == "cpu":
        notes.append("a CPU host has no published figures: set plan.measure_host to measure "
                     "them")
    return out


def _chip(inputs: dict[str, SourcedValue]) -> Chip:
    def v(k: str) -> float | None:
        sv = inputs.get(k)
        return None if sv is None else sv.value

    domain = v("chips_per_domain") or v("chips_per_node")
    return Chip(v("peak_flops"), v("memory"), v("memory_bandwidth"), v("link_bandwidth"),
                int(domain) if domain else None)


def _replica_sizes(chip: Chip, chips: int, most: int | None = None) -> list[int]:
    """Powers of two up to the scale-up domain (or ``most``, the experts of an
    expert-parallel replica), the domain itself and the target's size."""
    top = max(min(chip.domain or chips, most or chip.domain or chips), chips)
    sizes = {chips, top}
    n = 1
    while n <= top:
        sizes.add(n)
        n *= 2
    return sorted(sizes)


#: Replica sizes within this share of the best decode bound per chip count as "as good".
FLAT = 0.01


def best_chips(points: list[ScalePoint]) -> tuple[int | None, int | None]:
    """(the smallest replica size with the highest decode bound per chip, the largest size
    that still holds it); adding chips past the second does not pay in proportion."""
    fitting = [p for p in points if p.decode_tps_chip is not None]
    if not fitting:
        return None, None
    top = max(p.decode_tps_chip or 0.0 for p in fitting)
    good = [p.chips for p in fitting if (p.decode_tps_chip or 0.0) >= top * (1 - FLAT)]
    return min(good), max(good)


def _scale(shape: Shape, b: Bytes, chip: Chip, ctx: Context, spec: PlanSpec,
           n: int) -> ScalePoint:
    lat = (spec.allreduce_latency_us or 0.0) * 1e-6
    par = PARALLELISMS[spec.parallelism]
    mb = max_batch(shape, b, chip, n, ctx.input_tokens, ctx.output_tokens,
                   spec.memory_utilization, par)
    if mb is None:
        return ScalePoint(chips=n, fits=False, batch=None, decode_tps_replica=None,
                          decode_tps_chip=None, step_ms=None, communication_share=None,
                          bound=None)
    batch = min(mb, spec.max_batch)
    step = decode_step(shape, b, chip, n, batch, ctx.input_tokens, ctx.output_tokens, lat,
                       par)
    if step is None:
        return ScalePoint(chips=n, fits=True, batch=batch, decode_tps_replica=None,
                          decode_tps_chip=None, step_ms=None, communication_share=None,
                          bound=None)
    share = (step.communication_s or 0.0) / step.seconds
    return ScalePoint(chips=n, fits=True, batch=batch, decode_tps_replica=batch / step.seconds,
                      decode_tps_chip=batch / step.seconds / n, step_ms=step.seconds * 1e3,
                      communication_share=share, bound=step.bound)


def _scaling_note(points: list[ScalePoint], chip: Chip, spec: PlanSpec) -> str:
    first, last = best_chips(points)
    if first is None or last is None:
        return "the model fits on no replica size up to the scale-up domain"
    if len(points) == 1:
        return (f"one replica size planned ({first} chip{'s' if first > 1 else ''}): the "
                "catalog gives no scale-up domain for this hardware")
    unit = "chip" if first == 1 else "chips"
    held = f"{first} {unit}" if first == last else f"{first} {unit} and holds to {last}"
    beyond = [p for p in points if p.chips > last and p.decode_tps_chip is not None]
    latency = ("" if spec.allreduce_latency_us else " (communication counted by bandwidth "
               "only; plan.allreduce_latency_us adds the fixed cost of each all-reduce)")
    if chip.link_bw is None and len(points) > 1:
        return (f"the decode bound per chip is highest at {held}; no chip-to-chip bandwidth "
                "in the catalog, so the communication of more chips is not counted")
    if not beyond:
        return (f"the decode bound per chip is highest at {held}, the largest replica "
                f"planned{latency}")
    worst = beyond[-1]
    comm = [p.chips for p in beyond if p.bound == "communication"]
    why = (f"; from {comm[0]} chips the step is communication-bound" if comm
           else f"; communication is {(worst.communication_share or 0) * 100:.0f}% of the "
           f"step at {worst.chips}")
    return (f"the decode bound per chip is highest at {held}; beyond it adding chips does not "
            f"produce a proportional improvement ({worst.decode_tps_chip or 0:,.0f} tok/s per "
            f"chip at {worst.chips}{why}){latency}")


def _context(shape: Shape, b: Bytes, chip: Chip, ctx: Context, spec: PlanSpec,
             t: PlanTarget) -> PlanContextResult:
    n = t.chips
    lat = (spec.allreduce_latency_us or 0.0) * 1e-6
    par = PARALLELISMS[spec.parallelism]
    mb = max_batch(shape, b, chip, n, ctx.input_tokens, ctx.output_tokens,
                   spec.memory_utilization, par)
    batch = None if mb is None else min(mb, spec.max_batch)
    usable = usable_bytes(chip, n, spec.memory_utilization)
    dec = pre = None
    if batch is not None:
        dec = decode_step(shape, b, chip, n, batch, ctx.input_tokens, ctx.output_tokens, lat,
                          par)
        pre = prefill_step(shape, b, chip, n, ctx.input_tokens, lat, par)
    sizes = _replica_sizes(chip, n, par.most_chips(shape))
    scaling = [_scale(shape, b, chip, ctx, spec, k) for k in sizes]
    best = best_chips(scaling)[0]
    comm = communication_seconds(shape, b, chip, n, batch or 1, lat, par)
    cost = correct = None
    acc, acc_origin = ((t.accuracy, "measured") if t.accuracy is not None
                       else (spec.accuracy, "assumption") if spec.accuracy is not None
                       else (None, None))
    rate = t.usd_per_chip_hour.value if t.usd_per_chip_hour is not None else None
    if dec is not None and pre is not None and batch is not None and rate is not None:
        cost = chip_seconds_per_task(batch, ctx.output_tokens, n, pre, dec) * rate / 3600
        correct = cost / acc if acc else None
    serving = (serving_output_tps(batch, ctx.output_tokens, pre, dec) / n
               if dec is not None and pre is not None and batch else None)
    return PlanContextResult(
        serving_tps_chip=serving,
        input_tokens=ctx.input_tokens, output_tokens=ctx.output_tokens, chips=n,
        weights_gb=par.resident_weight_bytes(shape, b, n) / GB,
        kv_gb_per_sequence=kv_bytes_per_token(shape, b)
        * (ctx.input_tokens + ctx.output_tokens) / GB,
        activations_gb=activation_bytes(shape, b, ctx.input_tokens, batch or 1) / GB,
        usable_gb=(usable or 0.0) / GB,
        fits=mb is not None, max_batch=mb, batch=batch,
        decode_tps_replica=batch / dec.seconds if dec and batch else None,
        decode_tps_chip=batch / dec.seconds / n if dec and batch else None,
        decode_bound=dec.bound if dec else None,
        decode_intensity=dec.intensity if dec else None,
        prefill_tps_chip=ctx.input_tokens / pre.seconds / n if pre else None,
        prefill_bound=pre.bound if pre else None,
        prefill_intensity=pre.intensity if pre else None, ridge=ridge(chip),
        communication_ms_per_token=(comm / batch * 1e3 if comm is not None and batch
                                    else None),
        scaling=scaling, best_chips=best, scaling_note=_scaling_note(scaling, chip, spec),
        cost_per_attempt_usd=cost, cost_per_correct_usd=correct, accuracy=acc,
        accuracy_origin=acc_origin)


#: A host's bandwidth benchmark copies this much (acceval.claims.host): weights smaller than
#: it can sit in the CPU's caches, which the measured DRAM bandwidth does not describe.
HOST_COPY_BYTES = 64 * 2**20


def above_bound_cause(shape: Shape, b: Bytes, inputs: dict[str, SourcedValue],
                      cached_prompt_fraction: float | None) -> str:
    """Why a measured point can exceed its planned upper bound: the bound's inputs were
    lower than what served it, or the server did less work than the bound counts."""
    causes = []
    bw = inputs.get("memory_bandwidth")
    weights = weight_bytes(shape, b)
    if bw is not None and bw.origin == "measured":
        if weights < HOST_COPY_BYTES:
            causes.append(
                f"the model's {weights / 2**20:.1f} MiB of weights fit in the CPU's caches, "
                "which serve them faster than the DRAM bandwidth the host benchmark measured "
                f"({(bw.value or 0.0) / 1e9:.1f} GB/s, a {HOST_COPY_BYTES // 2**20} MiB copy): "
                "the bound is low for this host, not the server faster than physics")
        else:
            causes.append("the host benchmark (one short measurement) found less FLOP/s or "
                          "bandwidth than the engine used: measure the host on a quiet machine")
    if cached_prompt_fraction:
        causes.append(f"{cached_prompt_fraction:.0%} of the prompt tokens came from the "
                      "prefix cache, whose prefill the bound counts")
    if bw is not None and bw.origin == "catalog":
        causes.append(f"the catalog's figures ({bw.source}) may be below what this chip "
                      "delivers, or the server counts output tokens differently from the "
                      "client")
    return "; ".join(causes) or "the bound's inputs are below what served this point"


def _measured(shape: Shape, b: Bytes, chip: Chip, spec: PlanSpec,
              t: PlanTarget, inputs: dict[str, SourcedValue] | None = None) -> list[PlanPoint]:
    """Each trusted measured point beside the bound at its own batch and lengths."""
    out = []
    lat = (spec.allreduce_latency_us or 0.0) * 1e-6
    par = PARALLELISMS[spec.parallelism]
    for p in t.points:
        s = p.summary
        if not p.trusted or not s.ok or s.output_token_throughput_tps is None \
                or not s.output_tokens_total or s.prompt_tokens_total is None:
            continue
        batch = (int(p.level) if p.requested_rate_rps is None
                 else max(1, round(s.mean_in_flight or 1.0)))
        t_in, t_out = s.prompt_tokens_total / s.ok, s.output_tokens_total / s.ok
        n_in, n_out = max(1, round(t_in)), max(1, round(t_out))
        dec = decode_step(shape, b, chip, t.chips, batch, n_in, n_out, lat, par)
        pre = prefill_step(shape, b, chip, t.chips, n_in, lat, par)
        bound = (serving_output_tps(batch, n_out, pre, dec) / t.chips
                 if dec is not None and pre is not None else None)
        measured = s.output_token_throughput_tps / t.chips
        eff = measured / bound if bound else None
        cause = (above_bound_cause(shape, b, inputs or {}, s.cached_prompt_fraction)
                 if eff is not None and eff > 1 else None)
        # An open-loop point follows its offered rate: its ratio is no efficiency claim.
        flag = ("" if p.requested_rate_rps is not None or cause is None or eff is None
                else f"implausible: measured {eff * 100:.0f} % of the planned upper bound; "
                "not used for any comparison")
        out.append(PlanPoint(label=p.label, batch=batch,
                             open_loop=p.requested_rate_rps is not None, input_tokens=t_in,
                             output_tokens=t_out, measured_tps_chip=measured,
                             bound_tps_chip=bound, efficiency=eff, plausible=not flag,
                             flag=flag, above_bound=cause))
    return out


def plan_target(spec: PlanSpec, t: PlanTarget, hw: Hardware | None,
                host: HostBenchLog | None = None) -> PlanResult:
    """The plan of one target: per context, the fit, the largest batch, the decode and
    prefill bounds, the replica sizes and the cost at the bound; per measured point, the
    measured efficiency."""
    over = spec.targets.get(t.name)
    shape = resolve_shape((over.model if over else None) or spec.model)
    why = PARALLELISMS[spec.parallelism].problem(shape)
    if why is not None:
        raise StudyError(f"plan: target {t.name}: {why}",
                         [("plan.parallelism", why, "use tensor, or give the model experts, "
                           "active_experts and active_parameters")])
    weights, kv, compute = _precisions(spec, t)
    b = Bytes(PRECISION_BYTES[weights], PRECISION_BYTES[kv],
              4.0 if compute == "fp32" else 2.0)
    notes: list[str] = []
    inputs = _inputs(hw, compute, host, notes)
    if t.usd_per_chip_hour is not None:
        inputs["usd_per_chip_hour"] = t.usd_per_chip_hour
    chip = _chip(inputs)
    contexts = [_context(shape, b, chip, ctx, spec, t) for ctx in spec.contexts] \
        if chip.memory_bytes is not None and chip.memory_bw is not None else []
    for c in contexts:
        c.calibration = calibrate(c, hardware=t.hardware, weights=weights,
                                  parameters=shape.parameters, chip=chip)
    if not contexts and hw is not None:
        notes.append("no memory size or bandwidth for this hardware: nothing to plan")
    if shape.experts:
        notes.append(f"mixture of experts ({shape.experts} experts, {shape.active_experts} "
                     f"per token, {shape.active:,.0f} active parameters), {spec.parallelism} "
                     "parallelism; routing taken as uniform")
    return PlanResult(target=t.name, hardware=t.hardware, model=shape.name,
                      parameters=shape.parameters, weights=weights, kv_cache=kv,
                      compute=compute, inputs=inputs, contexts=contexts,
                      measured=_measured(shape, b, chip, spec, t, inputs)
                      if contexts else [],
                      notes=notes)


__all__ = ["PlanTarget", "above_bound_cause", "plan_target", "resolve_shape"]
