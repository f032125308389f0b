"""ignore_eos: a request asks for exactly max_tokens and gets them, on the batcher, the mock
and the shipped model's runtimes (ONNX Runtime GenAI stops a row at its EOS by itself, so the
batch asks it for a minimum length)."""

from __future__ import annotations

import asyncio

import pytest

from acceval.engines.base import GenerationChunk, GenerationRequest
from acceval.engines.batching import DynamicBatcher
from acceval.engines.mock import MockEngine
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.serve._openai import BadRequest, parse_request
from helpers.engines import with_engine

EOS = 0


class StopsAtThree:
    """Row yields 1, 2, EOS, 4, 5, ...: EOS at its third step."""

    def __init__(self) -> None:
        self.min_new: list[int] = []

    def __call__(self, prompts: list[list[int]], max_new: int, min_new: int = 0):  # type: ignore[no-untyped-def]
        self.min_new.append(min_new)
        for step in range(1, max_new + 1):
            yield [EOS if step == 3 else step for _ in prompts]


def tokens(chunks: list[GenerationChunk]) -> int:
    return sum(c.n_tokens for c in chunks)


async def _batched(model: StopsAtThree,
                   jobs: list[tuple[int, bool]]) -> list[list[GenerationChunk]]:
    b = DynamicBatcher(model, lambda ids: ",".join(map(str, ids)), eos_ids=[EOS],
                       batch_window_ms=30)
    await b.start()
    try:
        async def one(n: int, keep_on: bool) -> list[GenerationChunk]:
            return [c async for c in b.submit([9], n, ignore_eos=keep_on)]
        return list(await asyncio.gather(*(one(n, k) for n, k in jobs)))
    finally:
        await b.stop()


def test_the_batcher_runs_past_eos_only_for_ignore_eos_rows_and_batches_them_apart() -> None:
    model = StopsAtThree()
    plain, kept = asyncio.run(_batched(model, [(8, False), (8, True)]))
    assert tokens(plain) == 3 and plain[-1].finish_reason == "stop"
    assert tokens(kept) == 8 and kept[-1].finish_reason == "length"
    # The EOS stays among the generated ids (the tokenizer's decode drops special tokens)
    # and decoding went on after it.
    assert "".join(c.text for c in kept) == "1,2,0,4,5,6,7,8"
    assert sorted(model.min_new) == [0, 8]       # two batches: a minimum only for one


def test_the_mock_answers_exactly_max_tokens_under_ignore_eos() -> None:
    engine = MockEngine(output_tokens=3)

    async def run(n: int, keep_on: bool) -> list[GenerationChunk]:
        req = GenerationRequest("r", "p", n, ignore_eos=keep_on)
        return [c async for c in engine.generate(req)]

    assert tokens(asyncio.run(run(40, False))) == 3
    for n in (1, 3, 40):
        chunks = asyncio.run(run(n, True))
        assert tokens(chunks) == n and chunks[-1].finish_reason == "length"
        assert "".join(c.text for c in chunks).split() == ["tok"] * n


def test_the_server_reads_ignore_eos_and_refuses_a_non_boolean() -> None:
    assert parse_request(b'{"prompt":"a","ignore_eos":true}', chat=False).ignore_eos is True
    assert parse_request(b'{"prompt":"a"}', chat=False).ignore_eos is False
    with pytest.raises(BadRequest) as err:
        parse_request(b'{"prompt":"a","ignore_eos":"yes"}', chat=False)
    assert err.value.param == "ignore_eos"


@pytest.mark.parametrize("n", [12, 30])
def test_the_ortgenai_engine_generates_exactly_max_tokens_past_its_eos(n: int) -> None:
    async def body(e: OrtGenAIEngine) -> tuple[list[GenerationChunk], list[list[GenerationChunk]]]:
        plain = [c async for c in e.generate(GenerationRequest("a", "045+123=", n))]
        kept = await asyncio.gather(*(
            _collect(e, GenerationRequest(f"k{i}", "045+123=", n, ignore_eos=True))
            for i in range(3)))
        return plain, list(kept)

    plain, kept = with_engine(OrtGenAIEngine("builtin:tiny", "fp32", batch_window_ms=20), body)
    assert tokens(plain) == 5 and plain[-1].finish_reason == "stop"   # "0168" + EOS
    for chunks in kept:
        assert tokens(chunks) == n and chunks[-1].finish_reason == "length"
        assert "".join(c.text for c in chunks).startswith("0168")


async def _collect(e: OrtGenAIEngine, req: GenerationRequest) -> list[GenerationChunk]:
    return [c async for c in e.generate(req)]


def test_the_numpy_engine_generates_exactly_max_tokens_past_its_eos() -> None:
    from acceval.engines.numpy_engine import NumpyEngine

    async def body(e: NumpyEngine) -> list[GenerationChunk]:
        return [c async for c in e.generate(GenerationRequest("k", "045+123=", 20,
                                                                ignore_eos=True))]

    chunks = with_engine(NumpyEngine("builtin:tiny"), body)
    assert tokens(chunks) == 20 and chunks[-1].finish_reason == "length"
    assert "".join(c.text for c in chunks).startswith("0168")
