"""Server-side latency beside the client's, per load point.

The server's histograms (:mod:`acceval.telemetry.server_families`) give, over a point, the
increase of each ``_sum`` and ``_count``; their ratio is the server's own mean for the
requests that finished in the point's window. Set beside the client's mean of the same
quantity, the difference is what the request spent outside the server's clock: the network,
HTTP (the server's own API layer included: vLLM stamps arrival once its API server has
parsed the request, and a token when the engine's output reaches that process, before it is
detokenized and written) and the client. The server's queue, prefill and decode
means split a slow time to first token into waiting, computing the prompt and the rest.

The window is the counters' (:func:`acceval.telemetry.summary.telemetry_section`): from a
scrape before the point's start where nothing ran since, else the first inside it, to the
last at or before its end, so the means are those of requests that finished inside the
point, less up to a scrape interval at each edge; exact per-point counts need a scrape at
each boundary (tools/vllm.py takes them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import Field

from acceval.results.section import Section
from acceval.telemetry.server_families import QUANTITIES, count_name, sum_name


class _Rate(Protocol):
    @property
    def rate_per_s(self) -> float | None: ...


class _Distribution(Protocol):
    @property
    def mean(self) -> float | None: ...


class _Summary(Protocol):
    """What a point's summary gives the client side (acceval.metrics.PointSummary)."""

    @property
    def ttft_ms(self) -> _Distribution: ...
    @property
    def e2e_ms(self) -> _Distribution: ...
    @property
    def tpot_ms(self) -> _Distribution: ...
    @property
    def itl_ms(self) -> _Distribution: ...


class LatencyPair(Section):
    """One quantity's mean from both ends, in ms. ``outside_ms``: client less server."""

    client_ms: float | None = None
    server_ms: float | None = None
    outside_ms: float | None = None


class ServerLatency(Section):
    """A point's latency as the server timed it, beside the client's (means, ms)."""

    ttft: LatencyPair = Field(default_factory=LatencyPair)
    e2e: LatencyPair = Field(default_factory=LatencyPair)
    tpot: LatencyPair = Field(default_factory=LatencyPair)
    itl: LatencyPair = Field(default_factory=LatencyPair)
    queue_ms: float | None = None
    prefill_ms: float | None = None
    decode_ms: float | None = None
    inference_ms: float | None = None
    # Tokens per engine step (prompt and generated), from vLLM's iteration_tokens histogram.
    tokens_per_step: float | None = None
    # Share of prompt tokens the server served from its prefix cache (prompt_tokens_cached
    # over prompt_tokens).
    cached_prompt_share: float | None = None

    def any(self) -> bool:
        return any(v is not None for v in (
            self.ttft.server_ms, self.e2e.server_ms, self.tpot.server_ms, self.itl.server_ms,
            self.queue_ms, self.prefill_ms, self.decode_ms, self.inference_ms,
            self.tokens_per_step, self.cached_prompt_share))


def _ratio(stats: Mapping[str, _Rate], num: str, den: str) -> float | None:
    """Increase of ``num`` over increase of ``den`` in the same window (their rates share
    it: both are read from the same scrapes). None when either is missing or ``den`` is 0."""
    a, b = stats.get(num), stats.get(den)
    if a is None or b is None or a.rate_per_s is None or not b.rate_per_s:
        return None
    return a.rate_per_s / b.rate_per_s


def server_mean_ms(stats: Mapping[str, _Rate], quantity: str) -> float | None:
    if quantity not in QUANTITIES:
        raise KeyError(quantity)
    mean_s = _ratio(stats, sum_name(quantity), count_name(quantity))
    return None if mean_s is None else mean_s * 1e3


def _pair(client_ms: float | None, server_ms: float | None) -> LatencyPair:
    outside = (client_ms - server_ms if client_ms is not None and server_ms is not None
               else None)
    return LatencyPair(client_ms=client_ms, server_ms=server_ms, outside_ms=outside)


def server_latency(stats: Mapping[str, _Rate], summary: _Summary) -> ServerLatency | None:
    """The point's server-side means beside the client's; None when the server published
    none of them (llama.cpp, acceval serve)."""
    out = ServerLatency(
        ttft=_pair(summary.ttft_ms.mean, server_mean_ms(stats, "ttft")),
        e2e=_pair(summary.e2e_ms.mean, server_mean_ms(stats, "e2e")),
        tpot=_pair(summary.tpot_ms.mean, server_mean_ms(stats, "tpot")),
        itl=_pair(summary.itl_ms.mean, server_mean_ms(stats, "itl")),
        queue_ms=server_mean_ms(stats, "queue"),
        prefill_ms=server_mean_ms(stats, "prefill"),
        decode_ms=server_mean_ms(stats, "decode"),
        inference_ms=server_mean_ms(stats, "inference"),
        tokens_per_step=_ratio(stats, "iteration_tokens_sum", "iterations"),
        cached_prompt_share=_ratio(stats, "prompt_tokens_cached", "prompt_tokens"),
    )
    return out if out.any() else None


__all__ = ["LatencyPair", "ServerLatency", "server_latency", "server_mean_ms"]
