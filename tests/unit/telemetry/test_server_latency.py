"""Server-side latency from a real vLLM's /metrics: the histograms' sums and counts are
mapped, two recorded pages' increases give the server's exact means, and the report sets
them beside the client's. The pages were recorded from vLLM 0.32.0 (CPU) serving the shipped
tiny model (tools/vllm.py): ``vllm-before.txt`` after the warm-up, ``vllm-after.txt`` after
its load points (tests/fixtures/metrics/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.metrics import Distribution
from acceval.telemetry import parse_metrics
from acceval.telemetry.latency import server_latency, server_mean_ms
from acceval.telemetry.names import CANONICAL, FAMILIES
from acceval.telemetry.server_families import (
    HISTOGRAMS,
    QUANTITIES,
    count_name,
    rank_unmapped,
    sum_name,
)
from acceval.telemetry.summary import TelemetryStat

FIXTURES = Path(__file__).parents[2] / "fixtures" / "metrics"
BEFORE = (FIXTURES / "vllm-before.txt").read_text()
AFTER = (FIXTURES / "vllm-after.txt").read_text()

VLLM_HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds", "e2e": "vllm:e2e_request_latency_seconds",
    "itl": "vllm:inter_token_latency_seconds",
    "tpot": "vllm:request_time_per_output_token_seconds",
    "queue": "vllm:request_queue_time_seconds", "prefill": "vllm:request_prefill_time_seconds",
    "decode": "vllm:request_decode_time_seconds",
    "inference": "vllm:request_inference_time_seconds"}


def _oracle(text: str) -> dict[str, float]:
    """Every sample summed by name, read with prometheus-client directly (not acceval)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[s.name] = out.get(s.name, 0.0) + float(s.value)
    return out


def _values(text: str) -> dict[str, float]:
    scrape = parse_metrics(text)
    assert scrape.error is None and scrape.source == "vllm"
    return {r.metric: r.value for r in scrape.readings if r.device == ""}


def test_every_latency_histogram_of_the_recorded_page_is_mapped() -> None:
    got, want = _values(AFTER), _oracle(AFTER)
    for quantity, family in VLLM_HISTOGRAMS.items():
        assert got[sum_name(quantity)] == pytest.approx(want[f"{family}_sum"]), quantity
        assert got[count_name(quantity)] == want[f"{family}_count"], quantity
        assert want[f"{family}_count"] > 0
    assert got["prompt_tokens_cached"] == want["vllm:prompt_tokens_cached_total"]
    assert got["iterations"] == want["vllm:iteration_tokens_total_count"]
    assert got["iteration_tokens_sum"] == want["vllm:iteration_tokens_total_sum"]
    assert got["requests_finished"] == want["vllm:request_success_total"]
    unmapped = parse_metrics(AFTER).unmapped
    for family in VLLM_HISTOGRAMS.values():
        assert family not in unmapped


def test_every_table_entry_has_a_canonical_sum_and_count() -> None:
    for _, family, quantity in HISTOGRAMS:
        assert quantity in QUANTITIES
        assert FAMILIES[f"{family}_sum"].canonical == sum_name(quantity)
        assert CANONICAL[sum_name(quantity)].kind == "counter"
        assert CANONICAL[count_name(quantity)].unit == "samples"


def _stats_between(before: str, after: str, seconds: float) -> dict[str, TelemetryStat]:
    """What telemetry_section computes for a point whose window runs from one page to the
    other: every counter's rate over the same seconds."""
    a, b = _values(before), _values(after)
    return {k: TelemetryStat(rate_per_s=(b[k] - a[k]) / seconds, scrapes=2) for k in b
            if CANONICAL[k].kind == "counter" and k in a}


class _Summary:
    def __init__(self, ttft: float, e2e: float, tpot: float, itl: float) -> None:
        self.ttft_ms = Distribution(count=1, mean=ttft)
        self.e2e_ms = Distribution(count=1, mean=e2e)
        self.tpot_ms = Distribution(count=1, mean=tpot)
        self.itl_ms = Distribution(count=1, mean=itl)


def test_two_pages_give_the_servers_exact_means_whatever_the_window() -> None:
    before, after = _oracle(BEFORE), _oracle(AFTER)
    for seconds in (1.0, 7.3):
        stats = _stats_between(BEFORE, AFTER, seconds)
        for quantity, family in VLLM_HISTOGRAMS.items():
            n = after[f"{family}_count"] - before[f"{family}_count"]
            want = (after[f"{family}_sum"] - before[f"{family}_sum"]) / n * 1e3
            assert server_mean_ms(stats, quantity) == pytest.approx(want, rel=1e-9), quantity
    lat = server_latency(_stats_between(BEFORE, AFTER, 2.0), _Summary(60.0, 90.0, 5.0, 5.5))
    assert lat is not None
    assert lat.ttft.server_ms == pytest.approx(server_mean_ms(stats, "ttft"))
    assert lat.ttft.outside_ms == pytest.approx(60.0 - (lat.ttft.server_ms or 0.0))
    assert lat.e2e.outside_ms == pytest.approx(90.0 - (lat.e2e.server_ms or 0.0))
    assert lat.queue_ms is not None and lat.prefill_ms is not None and lat.decode_ms is not None
    cached = ((after["vllm:prompt_tokens_cached_total"] - before["vllm:prompt_tokens_cached_total"])
              / (after["vllm:prompt_tokens_total"] - before["vllm:prompt_tokens_total"]))
    assert lat.cached_prompt_share == pytest.approx(cached)
    assert 0 < cached < 1
    steps = ((after["vllm:iteration_tokens_total_sum"] - before["vllm:iteration_tokens_total_sum"])
             / (after["vllm:iteration_tokens_total_count"]
                - before["vllm:iteration_tokens_total_count"]))
    assert lat.tokens_per_step == pytest.approx(steps)


def test_no_histograms_no_section_and_no_requests_no_mean() -> None:
    assert server_latency({}, _Summary(1, 2, 3, 4)) is None
    idle = {sum_name("ttft"): TelemetryStat(rate_per_s=0.0, scrapes=3),
            count_name("ttft"): TelemetryStat(rate_per_s=0.0, scrapes=3)}
    assert server_mean_ms(idle, "ttft") is None   # nothing finished: no mean, not 0
    assert server_latency(idle, _Summary(1, 2, 3, 4)) is None
    with pytest.raises(KeyError):
        server_mean_ms(idle, "nonsense")


def test_the_unmapped_list_leads_with_the_engines_own_families() -> None:
    ranked = rank_unmapped(parse_metrics(AFTER).unmapped)
    assert ranked, "the recorded page has families acceval does not map"
    first_background = next((i for i, n in enumerate(ranked)
                             if n.startswith(("http_", "python_", "process_"))
                             or n.endswith(("_created", "_info"))), len(ranked))
    assert all(n.startswith("vllm:") for n in ranked[:3])
    assert all(not n.startswith(("http_", "python_", "process_"))
               for n in ranked[:first_background])
    assert rank_unmapped(["http_requests", "vllm:x", "other", "vllm:cache_config_info",
                          "vllm:x"]) == ["vllm:x", "other", "http_requests",
                                         "vllm:cache_config_info"]
