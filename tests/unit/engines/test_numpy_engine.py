"""The numpy engine: a from-scratch Llama forward pass that needs no torch.

It must answer exactly as the ONNX Runtime GenAI fp32 build does on the shipped models (same
weights, same tokenizer, greedy), reach the accuracy recorded in each model's card, and keep
its last-position logits within float32 rounding of ORT's. Synthetic variants of the tiny
model's weights pin the conventions the shipped configs do not exercise (grouped-query
attention, tied embeddings) and the KV cache against recomputing the whole sequence.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import aiohttp
import numpy as np
import pytest

from acceval.engines.base import GenerationChunk, GenerationRequest, load_engine
from acceval.engines.numpy_engine import LlamaConfig, NumpyEngine, NumpyLlama
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.errors import UsageError
from acceval.models import resolve_model
from acceval.portability.artifact import LOGIT_READERS
from acceval.serve import start_server
from helpers.engines import text, with_engine

MODELS = ("tiny", "small")
N_LOGITS = 200  # prompts whose logits are compared with ORT's (one ORT generator each)
KNOWN = {"045+123=": "0168", "000+000=": "0000", "999+999=": "1998", "500+500=": "1000"}


def heldout(name: str) -> list[tuple[str, str]]:
    path = resolve_model(f"builtin:{name}").root / "heldout.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return [(p, a) for p, a in rows]


async def answer(engine: NumpyEngine | OrtGenAIEngine, prompt: str, max_tokens: int = 8,
                 request_id: str = "r") -> list[GenerationChunk]:
    return [c async for c in engine.generate(GenerationRequest(request_id, prompt, max_tokens))]





@cache
def all_answers(engine_name: str, model: str) -> tuple[str, ...]:
    """Answers to every held-out prompt (1000), batched; computed once per engine and model."""
    prompts = [p for p, _ in heldout(model)]
    engine = (NumpyEngine(f"builtin:{model}", batch_window_ms=20) if engine_name == "numpy"
              else OrtGenAIEngine(f"builtin:{model}", "fp32", batch_window_ms=20))

    async def body(e: NumpyEngine | OrtGenAIEngine) -> list[str]:
        outs = await asyncio.gather(*(answer(e, p, request_id=str(i))
                                      for i, p in enumerate(prompts)))
        return [text(c) for c in outs]

    outs = with_engine(engine, body)
    assert isinstance(outs, list)
    return tuple(outs)


@pytest.mark.parametrize("model", MODELS)
def test_answers_equal_ortgenai_fp32_on_every_heldout_prompt(model: str) -> None:
    ours, ort = all_answers("numpy", model), all_answers("ortgenai", model)
    assert len(ours) == len(heldout(model)) >= 200
    differ = [(p, a, b) for (p, _), a, b in zip(heldout(model), ours, ort, strict=True) if a != b]
    assert differ == []


@pytest.mark.parametrize("model", MODELS)
def test_accuracy_equals_the_cards_recorded_fp32_accuracy(model: str) -> None:
    items = heldout(model)
    card = resolve_model(f"builtin:{model}").card["evaluation"]["results"]["ortgenai-fp32"]
    ours = all_answers("numpy", model)
    assert card["n"] == len(items)
    acc = sum(o == a for o, (_, a) in zip(ours, items, strict=True)) / len(items)
    assert acc == card["exact_match"]


@pytest.mark.parametrize("model", MODELS)
def test_logits_match_ortgenai_within_float32_rounding(
        model: str, record_property: Callable[[str, object], None]) -> None:
    engine = NumpyEngine(f"builtin:{model}")
    prompts = [p for p, _ in heldout(model)[:N_LOGITS]]
    ours = engine.next_token_logits(prompts)
    ort = np.asarray(LOGIT_READERS["ortgenai"](engine.artifact.root,
                                               [engine.encode(p) for p in prompts]))
    assert ours.shape == ort.shape == (N_LOGITS, engine.config.vocab)
    diff = float(np.abs(ours - ort).max())
    record_property("max_abs_logit_diff", diff)  # 7.6e-6 (tiny), 1.1e-5 (small) here
    assert diff < 1e-4
    assert (ours.argmax(axis=1) == ort.argmax(axis=1)).all()


def tiny_weights() -> tuple[dict[str, object], dict[str, np.ndarray]]:
    from safetensors.numpy import load_file

    root = resolve_model("builtin:tiny").root
    return json.loads((root / "config.json").read_text()), \
        load_file(str(root / "model.safetensors"))


def test_kv_cache_steps_equal_recomputing_the_whole_sequence() -> None:
    cfg, w = tiny_weights()
    model = NumpyLlama(LlamaConfig.from_json(cfg, Path("tiny")), w)
    prompt = [[4 + int(c) for c in "045"] + [14] + [4 + int(c) for c in "123"] + [15]]
    cache_ = model.new_cache(1, 16)
    logits = model.forward(np.asarray(prompt), cache_, 0)
    seq = list(prompt[0])
    for _ in range(5):
        full = model.next_token_logits([seq])
        np.testing.assert_allclose(logits, full, atol=1e-5)
        nxt = int(logits.argmax())
        seq.append(nxt)
        logits = model.forward(np.asarray([[nxt]]), cache_, len(seq) - 1)


def test_grouped_query_attention_reads_kv_head_h_over_group() -> None:
    # Four query heads over two kv heads equal four kv heads where heads 0,1 share kv head 0
    # and 2,3 share kv head 1 (HF's repeat_kv); the other pairing would give other logits.
    cfg, w = tiny_weights()
    hd = int(cfg["head_dim"])  # type: ignore[call-overload]
    gqa_w, mha_w = dict(w), dict(w)
    for i in range(int(cfg["num_hidden_layers"])):  # type: ignore[call-overload]
        for n in ("k", "v"):
            key = f"model.layers.{i}.self_attn.{n}_proj.weight"
            kv = [w[key][h * hd:(h + 1) * hd] for h in (0, 2)]
            gqa_w[key] = np.concatenate(kv)
            mha_w[key] = np.concatenate([kv[0], kv[0], kv[1], kv[1]])
    gqa = NumpyLlama(LlamaConfig.from_json({**cfg, "num_key_value_heads": 2}, Path("g")), gqa_w)
    mha = NumpyLlama(LlamaConfig.from_json(cfg, Path("m")), mha_w)
    ids = [[4, 5, 6, 14, 7, 8, 9, 15], [13, 13, 13, 14, 13, 13, 13, 15]]
    np.testing.assert_allclose(gqa.next_token_logits(ids), mha.next_token_logits(ids),
                               atol=1e-5)


def test_tied_embeddings_use_the_embedding_matrix_as_lm_head() -> None:
    cfg, w = tiny_weights()
    untied = dict(w)
    untied["lm_head.weight"] = w["model.embed_tokens.weight"]
    tied = {k: v for k, v in w.items() if k != "lm_head.weight"}
    a = NumpyLlama(LlamaConfig.from_json({**cfg, "tie_word_embeddings": True}, Path("t")), tied)
    b = NumpyLlama(LlamaConfig.from_json(cfg, Path("u")), untied)
    ids = [[4, 5, 6, 14, 7, 8, 9, 15]]
    np.testing.assert_array_equal(a.next_token_logits(ids), b.next_token_logits(ids))


def test_known_prompts_stop_at_eos_and_stream_token_by_token() -> None:
    async def body(e: NumpyEngine | OrtGenAIEngine) -> list[list[GenerationChunk]]:
        return [await answer(e, p) for p in KNOWN]

    outs = with_engine(NumpyEngine("builtin:tiny"), body)
    assert isinstance(outs, list)
    for (prompt, want), chunks in zip(KNOWN.items(), outs, strict=True):
        assert text(chunks) == want, prompt
        assert chunks[-1].finish_reason == "stop"
        assert sum(c.n_tokens for c in chunks) == len(want) + 1  # digits + EOS
        assert [c.text for c in chunks[:-1]] == list(want)


@pytest.mark.parametrize("max_tokens", [1, 2, 3])
def test_max_tokens_is_honoured(max_tokens: int) -> None:
    async def body(e: NumpyEngine | OrtGenAIEngine) -> list[GenerationChunk]:
        return await answer(e, "045+123=", max_tokens=max_tokens)

    chunks = with_engine(NumpyEngine("builtin:tiny"), body)
    assert isinstance(chunks, list)
    assert text(chunks) == "0168"[:max_tokens]
    assert sum(c.n_tokens for c in chunks) == max_tokens
    assert chunks[-1].finish_reason == "length"


def test_serves_a_streamed_openai_completion() -> None:
    async def body() -> tuple[list[str], list[dict[str, object]]]:
        handle = await start_server(NumpyEngine("builtin:tiny"), engine_name="numpy")
        try:
            payload = {"model": "tiny-numpy", "prompt": "045+123=", "max_tokens": 8,
                       "stream": True}
            async with aiohttp.ClientSession() as http, \
                    http.post(f"{handle.base_url}/completions", json=payload) as resp:
                assert resp.status == 200
                raw = [line.decode().rstrip("\r\n") async for line in resp.content]
        finally:
            await handle.close()
        events = [x[len("data: "):] for x in raw if x.startswith("data: ")]
        return events, [json.loads(e) for e in events if e != "[DONE]"]

    events, chunks = asyncio.run(body())
    assert events[-1] == "[DONE]"
    content = [c for c in chunks if c["choices"]]
    texts = [c["choices"][0]["text"] for c in content]  # type: ignore[index]
    assert "".join(texts) == "0168"
    assert content[-1]["choices"][0]["finish_reason"] == "stop"  # type: ignore[index]
    assert chunks[0]["model"] == "tiny-numpy"
    assert chunks[-1]["usage"] == {"prompt_tokens": 8, "completion_tokens": 5,
                                   "total_tokens": 13}


def test_runs_where_torch_cannot_be_imported() -> None:
    # The demo installs [local] only: the engine must load and answer with torch unimportable.
    code = (
        "import sys, asyncio\n"
        "sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
        "from acceval.engines.numpy_engine import NumpyEngine\n"
        "from acceval.engines.base import GenerationRequest\n"
        "async def main():\n"
        "    e = NumpyEngine('builtin:small'); await e.start()\n"
        "    out = [c.text async for c in e.generate(GenerationRequest('r', sys.argv[1], 8))]\n"
        "    await e.stop(); return ''.join(out)\n"
        "print(asyncio.run(main()), 'torch' in sys.modules and sys.modules['torch'] is not None)\n"
    )
    prompt = heldout("small")[0][0]
    out = subprocess.run([sys.executable, "-c", code, prompt], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.split() == [all_answers("ortgenai", "small")[0], "False"]


def test_registered_as_numpy() -> None:
    engine = load_engine("numpy", model="builtin:small", threads=1)
    assert isinstance(engine, NumpyEngine)
    assert engine.model_id == "small-numpy"
    assert engine.count_tokens("045+123=") == 8
    assert engine.context_length == 64 and engine.eos_ids == (2,)


@pytest.mark.parametrize("kw", [{"max_batch": 0}, {"threads": 0}, {"model": "builtin:nope"}])
def test_bad_options_are_usage_errors(kw: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        NumpyEngine(**kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "words"), [
    ({"model_type": "gpt2"}, "is not 'llama'"),
    ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}}, "rope_type 'llama3'"),
    ({"hidden_act": "gelu"}, "hidden_act 'gelu'"),
])
def test_configs_it_cannot_run_are_refused_by_name(change: dict[str, object],
                                                   words: str) -> None:
    cfg, _ = tiny_weights()
    with pytest.raises(UsageError, match=words):
        LlamaConfig.from_json({**cfg, **change}, Path("m"))


def test_generate_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(answer(NumpyEngine("builtin:tiny"), "045+123="))
