"""One vocabulary for what serving engines and accelerator exporters publish.

Each server names the same quantity its own way (vLLM ``vllm:num_requests_waiting``, SGLang
``sglang:num_queue_reqs``, TGI ``tgi_queue_size``, llama.cpp ``llamacpp:requests_deferred``).
A scrape maps every family it knows to a :data:`CANONICAL` name; the ones it does not know
are counted, never silently dropped. Names follow each project's documented ``/metrics``
output (docs/telemetry.md lists the sources).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acceval.telemetry import server_families as sf

Kind = Literal["gauge", "counter"]
Combine = Literal["sum", "mean"]


@dataclass(frozen=True, slots=True)
class Canonical:
    name: str
    unit: str
    kind: Kind          # a counter only grows: rates come from differences over a window
    combine: Combine    # several series of it on one server (one per model): add or average
    meaning: str


CANONICAL: dict[str, Canonical] = {c.name: c for c in (
    Canonical("running", "requests", "gauge", "sum", "requests being decoded"),
    Canonical("waiting", "requests", "gauge", "sum", "requests queued, not yet scheduled"),
    Canonical("batch_size", "requests", "gauge", "sum", "rows in the batch being decoded"),
    Canonical("kv_cache_usage", "ratio", "gauge", "mean", "share of the KV cache in use (0-1)"),
    Canonical("prefix_cache_hit_rate", "ratio", "gauge", "mean",
              "share of prompt tokens found in the prefix cache (0-1)"),
    Canonical("prefix_cache_hits", "tokens", "counter", "sum", "prefix-cache hits"),
    Canonical("prefix_cache_queries", "tokens", "counter", "sum", "prefix-cache lookups"),
    Canonical("preemptions", "requests", "counter", "sum", "requests preempted"),
    Canonical("prompt_tokens", "tokens", "counter", "sum", "prompt tokens processed"),
    Canonical("generation_tokens", "tokens", "counter", "sum", "tokens generated"),
    Canonical("power_w", "W", "gauge", "sum", "accelerator power draw"),
    Canonical("energy_j", "J", "counter", "sum", "accelerator energy since the exporter began"),
    Canonical("accelerator_util", "ratio", "gauge", "mean",
              "share of time the accelerator (GPU, NeuronCore) was busy (0-1)"),
)}

Source = Literal["vllm", "sglang", "tgi", "llamacpp", "dcgm", "neuron", "acceval"]


@dataclass(frozen=True, slots=True)
class Mapping:
    source: Source
    canonical: str
    scale: float = 1.0      # to the canonical unit (DCGM energy is mJ, its utilization %)
    device_label: str = ""  # the label that names the device, for per-device series
    # Only the series whose labels have these values (neuron-monitor publishes host and
    # device memory as one family told apart by ``memory_location``).
    where: tuple[tuple[str, str], ...] = ()
    # A bitmask gauge read as 1.0 when any of these bits is set, else 0.0 (DCGM's clock
    # event reasons), so that its mean over a point is the share of scrapes it was set.
    bits: int = 0


def _m(source: Source, canonical: str, scale: float = 1.0, device_label: str = "") -> Mapping:
    return Mapping(source, canonical, scale, device_label)


#: Family names (as the exposition parser reports them: a counter without its ``_total``,
#: a histogram's sum as ``<name>_sum``) to what they mean.
FAMILIES: dict[str, Mapping] = {
    # vLLM (v0 and v1 names; vLLM on Neuron, NxD Inference, uses the same ones)
    "vllm:num_requests_running": _m("vllm", "running"),
    "vllm:num_requests_waiting": _m("vllm", "waiting"),
    "vllm:kv_cache_usage_perc": _m("vllm", "kv_cache_usage"),   # a 0-1 ratio despite its name
    "vllm:gpu_cache_usage_perc": _m("vllm", "kv_cache_usage"),
    "vllm:gpu_prefix_cache_hit_rate": _m("vllm", "prefix_cache_hit_rate"),
    "vllm:prefix_cache_hits": _m("vllm", "prefix_cache_hits"),
    "vllm:prefix_cache_queries": _m("vllm", "prefix_cache_queries"),
    "vllm:num_preemptions": _m("vllm", "preemptions"),
    "vllm:prompt_tokens": _m("vllm", "prompt_tokens"),
    "vllm:generation_tokens": _m("vllm", "generation_tokens"),
    # SGLang
    "sglang:num_running_reqs": _m("sglang", "running"),
    "sglang:num_queue_reqs": _m("sglang", "waiting"),
    "sglang:token_usage": _m("sglang", "kv_cache_usage"),
    "sglang:cache_hit_rate": _m("sglang", "prefix_cache_hit_rate"),
    "sglang:prompt_tokens": _m("sglang", "prompt_tokens"),
    "sglang:generation_tokens": _m("sglang", "generation_tokens"),
    # Hugging Face TGI
    "tgi_batch_current_size": _m("tgi", "running"),
    "tgi_queue_size": _m("tgi", "waiting"),
    "tgi_request_input_length_sum": _m("tgi", "prompt_tokens"),
    "tgi_request_generated_tokens_sum": _m("tgi", "generation_tokens"),
    # llama.cpp's llama-server (--metrics)
    "llamacpp:requests_processing": _m("llamacpp", "running"),
    "llamacpp:requests_deferred": _m("llamacpp", "waiting"),
    "llamacpp:kv_cache_usage_ratio": _m("llamacpp", "kv_cache_usage"),
    "llamacpp:prompt_tokens": _m("llamacpp", "prompt_tokens"),
    "llamacpp:tokens_predicted": _m("llamacpp", "generation_tokens"),
    # Recent builds: prompt tokens taken from a slot's cache (prompt_tokens counts the rest).
    "llamacpp:prompt_tokens_cached": _m("llamacpp", "prefix_cache_hits"),
    # acceval serve's own, beside the vLLM names it also uses
    "acceval:batch_size": _m("acceval", "batch_size"),
}


# --- accelerator exporters: what the hardware is billed by, per device -------------------

#: Canonical names only the accelerator exporters publish.
EXPORTER_CANONICAL: dict[str, Canonical] = {c.name: c for c in (
    Canonical("device_memory_used_bytes", "bytes", "gauge", "sum",
              "accelerator memory in use (HBM / framebuffer)"),
    Canonical("device_memory_free_bytes", "bytes", "gauge", "sum", "accelerator memory free"),
    Canonical("throttled", "ratio", "gauge", "mean",
              "1 when the clocks were held down by power or temperature, else 0"),
    Canonical("xid_last", "code", "gauge", "mean", "the last XID error code (0: none)"),
    Canonical("execution_errors", "executions", "counter", "sum",
              "executions that ended in an error (neuron-monitor, all error types)"),
    Canonical("ecc_events", "events", "counter", "sum",
              "memory ECC events, corrected and not (neuron-monitor)"),
)}
CANONICAL.update(EXPORTER_CANONICAL)

#: DCGM's clock-event reasons that mean throttling (NVML's SW power cap, HW slowdown, SW and
#: HW thermal slowdown, power brake); idle, application clocks and sync boost do not.
DCGM_THROTTLE_BITS = 0x04 | 0x08 | 0x20 | 0x40 | 0x80
_NEURON_CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory",
                       "tensors")

#: NVIDIA dcgm-exporter (per ``gpu``, its default counters) and neuron-monitor's Prometheus
#: exporter (``neuron-monitor-prometheus.py``: per ``neuroncore``; it publishes no power).
EXPORTER_FAMILIES: dict[str, Mapping] = {
    "DCGM_FI_DEV_POWER_USAGE": _m("dcgm", "power_w", device_label="gpu"),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": _m("dcgm", "energy_j", 1e-3, device_label="gpu"),
    "DCGM_FI_DEV_GPU_UTIL": _m("dcgm", "accelerator_util", 1e-2, device_label="gpu"),
    "DCGM_FI_DEV_FB_USED": _m("dcgm", "device_memory_used_bytes", 2.0**20, device_label="gpu"),
    "DCGM_FI_DEV_FB_FREE": _m("dcgm", "device_memory_free_bytes", 2.0**20, device_label="gpu"),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": Mapping("dcgm", "throttled", device_label="gpu",
                                                  bits=DCGM_THROTTLE_BITS),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": Mapping("dcgm", "throttled", device_label="gpu",
                                                bits=DCGM_THROTTLE_BITS),
    "DCGM_FI_DEV_XID_ERRORS": _m("dcgm", "xid_last", device_label="gpu"),
    "neuroncore_utilization_ratio": _m("neuron", "accelerator_util", device_label="neuroncore"),
    "neuron_runtime_memory_used_bytes": Mapping(
        "neuron", "device_memory_used_bytes", where=(("memory_location", "neuron_device"),)),
    **{f"neuroncore_memory_usage_{part}": _m("neuron", "device_memory_used_bytes",
                                             device_label="neuroncore")
       for part in _NEURON_CORE_MEMORY},
    "execution_errors": _m("neuron", "execution_errors"),
    "hardware_ecc_events": _m("neuron", "ecc_events"),
}
FAMILIES.update(EXPORTER_FAMILIES)


def _add_server_families() -> None:
    """The latency histograms and token counters of acceval.telemetry.server_families: a
    histogram's ``_sum`` and ``_count`` are two counters each."""
    for quantity, meaning in sf.QUANTITIES.items():
        CANONICAL[sf.sum_name(quantity)] = Canonical(
            sf.sum_name(quantity), "s", "counter", "sum", f"server-side {meaning}, summed")
        CANONICAL[sf.count_name(quantity)] = Canonical(
            sf.count_name(quantity), "samples", "counter", "sum",
            f"server-side {meaning}: how many were timed")
    for name, (unit, meaning) in sf.COUNTERS.items():
        CANONICAL[name] = Canonical(name, unit, "counter", "sum", meaning)
    for source, family, quantity in sf.HISTOGRAMS:
        FAMILIES[f"{family}_sum"] = _m(source, sf.sum_name(quantity))
        FAMILIES[f"{family}_count"] = _m(source, sf.count_name(quantity))
    for source, sample, canonical in sf.COUNTER_SAMPLES:
        FAMILIES[sample] = _m(source, canonical)


_add_server_families()


def source_of(families: set[str]) -> str | None:
    """Which server or exporter a scrape came from, by the families it knows (None: none)."""
    found = sorted({FAMILIES[f].source for f in families if f in FAMILIES})
    if "acceval" in found:  # acceval serve publishes vLLM's names too
        return "acceval"
    return "+".join(found) or None


__all__ = ["CANONICAL", "DCGM_THROTTLE_BITS", "EXPORTER_CANONICAL", "EXPORTER_FAMILIES",
           "FAMILIES", "Canonical", "Mapping", "source_of"]
