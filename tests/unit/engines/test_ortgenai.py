"""The ortgenai engine runs the shipped tiny model for real (the ``[local]`` extra)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from acceval.engines.base import EngineFault, GenerationChunk, GenerationRequest, load_engine
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.errors import MissingExtra, UsageError
from acceval.models import PRECISIONS, resolve_model
from helpers.engines import text, with_engine

KNOWN = {"045+123=": "0168", "000+000=": "0000", "999+999=": "1998", "500+500=": "1000",
         "123+877=": "1000", "007+093=": "0100"}
N_HELDOUT = 200
# Greedy decoding is deterministic, but another CPU's kernels may round differently and flip
# a near-tie; allow one task in a hundred.
TOLERANCE = 0.01


def heldout(name: str = "tiny") -> list[tuple[str, str]]:
    path = resolve_model(f"builtin:{name}").root / "heldout.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines()[:N_HELDOUT]]
    return [(p, a) for p, a in rows]


async def answer(engine: OrtGenAIEngine, prompt: str, max_tokens: int = 8,
                 request_id: str = "r") -> list[GenerationChunk]:
    req = GenerationRequest(request_id, prompt, max_tokens)
    return [c async for c in engine.generate(req)]





def test_known_prompts_get_the_right_sum_and_stop() -> None:
    async def body(e: OrtGenAIEngine) -> list[list[GenerationChunk]]:
        return [await answer(e, p) for p in KNOWN]

    outs = with_engine(OrtGenAIEngine("builtin:tiny", "fp32"), body)
    assert isinstance(outs, list)
    for (prompt, want), chunks in zip(KNOWN.items(), outs, strict=True):
        assert text(chunks) == want, prompt
        assert chunks[-1].finish_reason == "stop"
        assert sum(c.n_tokens for c in chunks) == len(want) + 1  # digits + EOS
        assert [c.text for c in chunks[:-1]] == list(want)       # streamed token by token


def test_concurrent_requests_are_batched_and_each_gets_its_own_answer() -> None:
    items = heldout()[:48]
    engine = OrtGenAIEngine("builtin:tiny", "fp32", max_batch=16, batch_window_ms=50)

    async def body(e: OrtGenAIEngine) -> tuple[list[str], list[str]]:
        together = await asyncio.gather(*(answer(e, p, request_id=str(i))
                                          for i, (p, _) in enumerate(items)))
        alone = [text(await answer(e, p)) for p, _ in items[:8]]
        return [text(c) for c in together], alone

    result = with_engine(engine, body)
    assert isinstance(result, tuple)
    together, alone = result
    assert together[:8] == alone                  # batching does not change an answer
    assert sum(t == a for t, (_, a) in zip(together, items, strict=True)) >= 45
    assert len(set(together)) > 40                # rows were not mixed up


def test_batch_sizes_follow_the_settings() -> None:
    items = heldout()[:20]
    engine = OrtGenAIEngine("builtin:tiny", "fp32", max_batch=8, batch_window_ms=50)

    async def body(e: OrtGenAIEngine) -> tuple[int, int]:
        await asyncio.gather(*(answer(e, p) for p, _ in items))
        assert e.stats is not None
        return e.stats.batches, e.stats.max_batch_seen

    assert with_engine(engine, body) == (3, 8)


def test_max_tokens_is_honoured() -> None:
    async def body(e: OrtGenAIEngine) -> list[GenerationChunk]:
        return await answer(e, "045+123=", max_tokens=2)

    chunks = with_engine(OrtGenAIEngine("builtin:tiny"), body)
    assert isinstance(chunks, list)
    assert text(chunks) == "01"
    assert sum(c.n_tokens for c in chunks) == 2
    assert chunks[-1].finish_reason == "length"


@pytest.mark.parametrize("precision", PRECISIONS)
def test_shipped_model_reaches_its_recorded_accuracy(precision: str) -> None:
    items = heldout()
    engine = OrtGenAIEngine("builtin:tiny", precision, max_batch=16)
    recorded = engine.artifact.card["evaluation"]["results"][f"ortgenai-{precision}"]

    async def body(e: OrtGenAIEngine) -> list[str]:
        outs = await asyncio.gather(*(answer(e, p) for p, _ in items))
        return [text(c) for c in outs]

    outs = with_engine(engine, body)
    assert isinstance(outs, list)
    acc = sum(o == a for o, (_, a) in zip(outs, items, strict=True)) / len(items)
    assert acc >= recorded["exact_match_first200"] - TOLERANCE
    if precision == "fp32":
        assert acc >= 0.95


def test_the_small_model_is_cheaper_and_less_accurate_than_tiny() -> None:
    tiny = resolve_model("builtin:tiny").card
    small = resolve_model("builtin:small").card
    assert small["training"]["params"] < tiny["training"]["params"] / 4
    acc = {name: c["evaluation"]["results"]["ortgenai-fp32"]["exact_match"]
           for name, c in (("tiny", tiny), ("small", small))}
    assert acc["small"] < acc["tiny"]


def test_tokens_chat_and_identity() -> None:
    engine = OrtGenAIEngine("builtin:tiny", "int8")
    assert engine.model_id == "tiny-int8"
    assert engine.count_tokens("045+123=") == 8
    assert engine.render_chat([("system", "be brief"), ("user", "045+"), ("user", "123=")]) \
        == "045+123="


def test_a_prompt_longer_than_the_context_is_a_client_error() -> None:
    async def body(e: OrtGenAIEngine) -> None:
        await answer(e, "1" * 200)

    with pytest.raises(EngineFault) as info:
        with_engine(OrtGenAIEngine("builtin:tiny"), body)
    assert info.value.status == 400 and info.value.label == "prompt_too_long"


def test_generate_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(answer(OrtGenAIEngine("builtin:tiny"), "045+123="))


def test_registered_as_ortgenai() -> None:
    engine = load_engine("ortgenai", model="builtin:small", precision="int4")
    assert isinstance(engine, OrtGenAIEngine) and engine.model_id == "small-int4"


@pytest.mark.parametrize("kw", [{"max_batch": 0}, {"max_batch": 33}, {"threads": 0},
                                {"precision": "fp8"}, {"model": "builtin:nope"}])
def test_bad_options_are_usage_errors(kw: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        OrtGenAIEngine(**kw)  # type: ignore[arg-type]


def test_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime_genai", None)
    with pytest.raises(MissingExtra) as info:
        OrtGenAIEngine()
    assert info.value.extra == "local" and info.value.module == "onnxruntime_genai"
