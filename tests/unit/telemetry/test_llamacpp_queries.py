"""llama.cpp's prefix-cache lookups, derived from what it publishes (its prompt_tokens counts
only the tokens it computed), so that the hit rate is the same hits / lookups as vLLM's."""

from __future__ import annotations

import pytest

from acceval.report._telemetry import _hits
from acceval.telemetry.summary import TelemetryPoint, TelemetryStat, _llamacpp_queries


def test_lookups_are_the_cached_and_the_computed_tokens_together() -> None:
    stats = {"prefix_cache_hits": TelemetryStat(rate_per_s=10.0, scrapes=5),
             "prompt_tokens": TelemetryStat(rate_per_s=38.0, scrapes=4)}
    _llamacpp_queries(stats)
    q = stats["prefix_cache_queries"]
    assert q.rate_per_s == pytest.approx(48.0) and q.scrapes == 4
    assert _hits(TelemetryPoint(index=0, label="p", metrics=stats)) == "20.8%"


def test_nothing_is_derived_without_both_counters_or_over_a_published_one() -> None:
    only_hits = {"prefix_cache_hits": TelemetryStat(rate_per_s=10.0, scrapes=5)}
    _llamacpp_queries(only_hits)
    assert "prefix_cache_queries" not in only_hits
    published = {"prefix_cache_hits": TelemetryStat(rate_per_s=1.0, scrapes=2),
                 "prompt_tokens": TelemetryStat(rate_per_s=1.0, scrapes=2),
                 "prefix_cache_queries": TelemetryStat(rate_per_s=5.0, scrapes=2)}
    _llamacpp_queries(published)
    assert published["prefix_cache_queries"].rate_per_s == 5.0
