"""What serving engines publish about their own latency and token bookkeeping, by name.

A latency histogram's ``_sum`` and ``_count`` are counters: their increases over a load point,
divided, give the server's exact mean for the requests that finished in it (the buckets are
too coarse for percentiles: vLLM's E2E buckets start at 0.3 s). Each histogram maps to two
canonical counters, ``server_<quantity>_s_sum`` and ``server_<quantity>_count``.
:mod:`acceval.telemetry.latency` turns them into per-point means beside the client's.

Plain tables, no acceval imports: :mod:`acceval.telemetry.names` builds its mappings from them.
Names follow each project's own ``/metrics``: vLLM v1's was recorded from a real server
(tests/fixtures/vllm-metrics/), SGLang's and TGI's are from their documentation.
"""

from __future__ import annotations

from typing import Literal

Server = Literal["vllm", "sglang", "tgi"]

#: quantity -> what the server's histogram times (the server's clock, not the client's).
QUANTITIES: dict[str, str] = {
    "ttft": "arrival to the first token",
    "e2e": "arrival to the last token",
    "itl": "gap between successive decode steps of a request",
    "tpot": "a request's decode time over its output tokens after the first",
    "queue": "time waiting to be scheduled",
    "prefill": "time computing the prompt",
    "decode": "time generating after the first token",
    "inference": "prefill and decode",
}

#: (source, histogram family as published, quantity).
HISTOGRAMS: tuple[tuple[Server, str, str], ...] = (
    ("vllm", "vllm:time_to_first_token_seconds", "ttft"),
    ("vllm", "vllm:e2e_request_latency_seconds", "e2e"),
    ("vllm", "vllm:inter_token_latency_seconds", "itl"),
    ("vllm", "vllm:time_per_output_token_seconds", "itl"),   # v0's name for the same gaps
    ("vllm", "vllm:request_time_per_output_token_seconds", "tpot"),
    ("vllm", "vllm:request_queue_time_seconds", "queue"),
    ("vllm", "vllm:request_prefill_time_seconds", "prefill"),
    ("vllm", "vllm:request_decode_time_seconds", "decode"),
    ("vllm", "vllm:request_inference_time_seconds", "inference"),
    ("sglang", "sglang:time_to_first_token_seconds", "ttft"),
    ("sglang", "sglang:e2e_request_latency_seconds", "e2e"),
    ("sglang", "sglang:inter_token_latency_seconds", "itl"),
    ("sglang", "sglang:time_per_output_token_seconds", "itl"),
    ("sglang", "sglang:queue_time_seconds", "queue"),
    # TGI publishes no time to first token; its per-token mean is over the whole request.
    ("tgi", "tgi_request_duration", "e2e"),
    ("tgi", "tgi_request_queue_duration", "queue"),
    ("tgi", "tgi_request_inference_duration", "inference"),
    ("tgi", "tgi_request_mean_time_per_token_duration", "tpot"),
)

#: canonical counter -> (unit, meaning).
COUNTERS: dict[str, tuple[str, str]] = {
    "prompt_tokens_cached": ("tokens", "prompt tokens served from the prefix cache"),
    "iteration_tokens_sum": ("tokens", "tokens processed over the engine's steps"),
    "iterations": ("steps", "engine steps (forward passes)"),
    "requests_finished": ("requests", "requests the server finished"),
}

#: (source, sample name as the exposition parser reports it, canonical counter).
COUNTER_SAMPLES: tuple[tuple[Server, str, str], ...] = (
    ("vllm", "vllm:prompt_tokens_cached", "prompt_tokens_cached"),
    ("vllm", "vllm:iteration_tokens_total_sum", "iteration_tokens_sum"),
    ("vllm", "vllm:iteration_tokens_total_count", "iterations"),
    ("vllm", "vllm:request_success", "requests_finished"),
    ("sglang", "sglang:cached_tokens", "prompt_tokens_cached"),
    ("tgi", "tgi_request_success", "requests_finished"),
)


def sum_name(quantity: str) -> str:
    return f"server_{quantity}_s_sum"


def count_name(quantity: str) -> str:
    return f"server_{quantity}_count"




#: Families a reader of "not mapped" needs least: the web framework's request timings (the
#: client measures those better), the process and Python runtime, creation timestamps and
#: configuration info.
_BACKGROUND_PREFIXES = ("http_", "python_", "process_", "go_", "promhttp_")
_BACKGROUND_SUFFIXES = ("_created", "_info")
#: Names that say a family is about the engine's own work.
_ENGINE_PREFIXES = ("vllm:", "sglang:", "tgi_", "llamacpp:", "neuron", "DCGM_")


def rank_unmapped(names: list[str]) -> list[str]:
    """The families a scrape could not map, the engine's own first (``vllm:…``), then
    anything else, then the web framework's, runtime's and info families; by name within
    each."""
    def tier(name: str) -> int:
        if name.startswith(_BACKGROUND_PREFIXES) or name.endswith(_BACKGROUND_SUFFIXES):
            return 2
        return 0 if name.startswith(_ENGINE_PREFIXES) else 1
    return sorted(set(names), key=lambda n: (tier(n), n))


__all__ = ["COUNTERS", "COUNTER_SAMPLES", "HISTOGRAMS", "QUANTITIES", "count_name",
           "rank_unmapped", "sum_name"]
