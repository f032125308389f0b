"""The transformers engine runs the shipped weights on torch (the ``[torch]`` extra), on CPU.

It must agree with the ONNX Runtime GenAI fp32 build token for token: same weights, same
tokenizer, greedy decoding. Tests that run the model need the ``[torch]`` extra; the
skip names it, and ``make test`` installs it so CI runs them.
"""

from __future__ import annotations

import asyncio
import sys
from importlib.util import find_spec

import pytest

from acceval.engines.base import GenerationChunk, GenerationRequest, load_engine
from acceval.engines.batching import BatchedEngine
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.engines.torch_engine import TorchEngine
from acceval.errors import MissingExtra, UsageError
from acceval.models import resolve_model
from helpers.engines import text, with_engine

needs_torch = pytest.mark.skipif(
    find_spec("torch") is None or find_spec("transformers") is None,
    reason="the [torch] extra is not installed: pip install 'acceval[torch]'")

KNOWN = {"045+123=": "0168", "000+000=": "0000", "999+999=": "1998", "500+500=": "1000"}


def heldout(n: int) -> list[tuple[str, str]]:
    path = resolve_model("builtin:tiny").root / "heldout.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines()[:n]]
    return [(p, a) for p, a in rows]


async def answer(engine: BatchedEngine, prompt: str, max_tokens: int = 8) -> list[GenerationChunk]:
    return [c async for c in engine.generate(GenerationRequest("r", prompt, max_tokens))]





async def answers(e: BatchedEngine, prompts: list[str]) -> list[str]:
    return [text(c) for c in await asyncio.gather(*(answer(e, p) for p in prompts))]


@needs_torch
def test_known_prompts_get_the_right_sum_and_stop() -> None:
    async def body(e: BatchedEngine) -> list[list[GenerationChunk]]:
        return [await answer(e, p) for p in KNOWN]

    outs = with_engine(TorchEngine("builtin:tiny"), body)
    assert isinstance(outs, list)
    for (prompt, want), chunks in zip(KNOWN.items(), outs, strict=True):
        assert text(chunks) == want, prompt
        assert chunks[-1].finish_reason == "stop"
        assert sum(c.n_tokens for c in chunks) == len(want) + 1


@needs_torch
def test_batched_answers_equal_onnx_runtime_fp32_and_reach_the_recorded_accuracy() -> None:
    items = heldout(200)
    prompts = [p for p, _ in items]
    torch_engine = TorchEngine("builtin:tiny", max_batch=16, batch_window_ms=20)
    ours = with_engine(torch_engine, lambda e: answers(e, prompts))
    theirs = with_engine(OrtGenAIEngine("builtin:tiny", "fp32", max_batch=16),
                         lambda e: answers(e, prompts))
    assert isinstance(ours, list)
    assert ours == theirs
    acc = sum(o == a for o, (_, a) in zip(ours, items, strict=True)) / len(items)
    recorded = torch_engine.artifact.card["evaluation"]["results"]["transformers-fp32"]
    assert acc >= recorded["exact_match_first200"] - 0.01
    assert acc >= 0.95


@needs_torch
def test_batches_follow_max_batch() -> None:
    prompts = [p for p, _ in heldout(10)]

    async def body(e: BatchedEngine) -> tuple[int, int]:
        await answers(e, prompts)
        assert e.stats is not None
        return e.stats.batches, e.stats.max_batch_seen

    assert with_engine(TorchEngine("builtin:tiny", max_batch=4, batch_window_ms=50),
                       body) == (3, 4)


@needs_torch
def test_max_tokens_is_honoured() -> None:
    chunks = with_engine(TorchEngine("builtin:tiny"), lambda e: answer(e, "999+999=", 3))
    assert isinstance(chunks, list)
    assert text(chunks) == "199" and chunks[-1].finish_reason == "length"
    assert sum(c.n_tokens for c in chunks) == 3


@needs_torch
def test_identity_tokens_and_registration() -> None:
    engine = load_engine("transformers", model="builtin:small")
    assert isinstance(engine, TorchEngine) and engine.model_id == "small-torch"
    assert engine.count_tokens("001+002=") == 8
    assert engine.render_chat([("user", "001+002=")]) == "001+002="


@needs_torch
@pytest.mark.parametrize("kw", [{"device": "tpu"}, {"threads": 0}, {"max_batch": 0},
                                {"model": "builtin:nope"}])
def test_bad_options_are_usage_errors(kw: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        TorchEngine(**kw)  # type: ignore[arg-type]


@needs_torch
def test_an_ort_only_folder_is_refused() -> None:
    ort_dir = resolve_model("builtin:tiny").root / "ort-fp32"
    with pytest.raises(UsageError, match="no HF-format folder"):
        TorchEngine(str(ort_dir))


def test_missing_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtra) as info:
        TorchEngine()
    assert info.value.extra == "torch" and info.value.module == "torch"
