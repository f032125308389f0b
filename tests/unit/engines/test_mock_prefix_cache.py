"""The mock's simulated prefix cache: leading blocks seen before, chained as vLLM's block
hashes are, and the cached tokens reported in usage."""

from __future__ import annotations

from acceval.engines.mock import MockEngine


def test_leading_blocks_seen_before_are_cached_in_order() -> None:
    m = MockEngine(prefix_cache_block=2)
    assert m.cached_prompt_tokens("a b c d e") == 0          # nothing seen yet
    assert m.cached_prompt_tokens("a b c d e") == 4          # two whole blocks; "e" is partial
    assert m.cached_prompt_tokens("a b x y") == 2            # the first block only
    assert m.cached_prompt_tokens("x y c d") == 0            # "c d" after another block
    assert MockEngine().cached_prompt_tokens("a b") is None  # no cache: not said


def test_the_cache_reaches_usage_and_metrics() -> None:
    from acceval.serve._openai import usage_json
    assert '"prompt_tokens_details":{"cached_tokens":3}' in usage_json(5, 2, 3)
    assert "cached_tokens" not in usage_json(5, 2)
