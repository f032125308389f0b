"""The peers' workloads against acceval's own server: multi-turn conversations grow their
history turn by turn (the server's log says so), per-turn metrics come out of the records;
synthetic prompts arrive with exactly their token lengths and ignore_eos answers with exactly
the requested output lengths, on the mock and the shipped model's runtimes."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from serve_support import mock_server, read_log, run

from acceval.engines.base import Engine
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run_point
from acceval.metrics import summarize_point
from acceval.metrics.spec import SLO
from acceval.results.records import Record, records_to_table
from acceval.serve import start_server
from acceval.targets import OpenAITarget
from acceval.targets.spec import Endpoint
from acceval.tasks import load_tasks, to_prompt
from acceval.tasks.spec import Tasks

CONVERSATIONS = [Prompt(f"conv-{i}", messages=(("user", f"hello {i}"),), max_tokens=3,
                        turns=("and then", "one more thing please")) for i in range(3)]


async def _point(base_url: str, prompts: list[Prompt], spec: PointSpec, api: str
                 ) -> tuple[PointRun, list[Record]]:
    recs: list[Record] = []
    target = OpenAITarget("t", Endpoint(base_url=base_url, model="m", api=api))  # type: ignore[arg-type]
    try:
        res = await run_point(target, prompts, spec, recs.append, t0_ns=time.perf_counter_ns())
    finally:
        await target.close()
    return res, recs


@pytest.mark.parametrize("kind", ["concurrency", "constant"])
def test_a_conversation_grows_its_history_turn_by_turn_on_the_server(tmp_path: Path,
                                                                     kind: str) -> None:
    log = tmp_path / "server.jsonl"
    level = 2 if kind == "concurrency" else 50.0
    spec = PointSpec(index=0, label="p", kind=kind, level=level,  # type: ignore[arg-type]
                     min_requests=6, max_duration_s=10)

    async def go() -> tuple[PointRun, list[Record]]:
        async with mock_server(log, output_tokens=3, model_id="m") as (handle, _):
            return await _point(handle.base_url, CONVERSATIONS, spec, "chat")

    res, recs = run(go)
    # Six conversations of three turns: eighteen requests, every one accounted.
    assert res.sent == 18 == len(recs) and res.errors == 0
    assert sorted(r.request_id for r in recs) == list(range(18))
    by_conv: dict[tuple[str, int], list[Record]] = {}
    for r in recs:
        by_conv.setdefault((r.task_id, r.attempt), []).append(r)
    assert len(by_conv) == 6
    server = {int(e["request_id"]): e for e in read_log(log)}
    for turns in by_conv.values():
        turns.sort(key=lambda r: r.turn or 0)
        assert [r.turn for r in turns] == [0, 1, 2]
        # Each turn was sent after the previous one had its answer.
        assert all(b.sent_ns >= a.done_ns for a, b in pairwise(turns))  # type: ignore[operator]
        seen = [server[r.request_id] for r in turns]
        assert [e["messages"] for e in seen] == [1, 3, 5]
        tokens = [e["prompt_tokens"] for e in seen]
        assert tokens[0] < tokens[1] < tokens[2]
        assert [r.prompt_tokens for r in turns] == tokens
    # Later turns have no schedule of their own; only first turns are scheduled (open loop).
    firsts = [r for r in recs if r.turn == 0]
    assert all((r.scheduled_ns is None) == (kind == "concurrency") for r in firsts)
    assert all(r.scheduled_ns is None for r in recs if r.turn)

    summary = summarize_point(records_to_table(recs), slo=SLO(),
                              requested_rate_rps=res.requested_rate_rps)
    assert summary.turns is not None
    assert [(t.turn, t.requests, t.ok) for t in summary.turns] == [(k, 6, 6) for k in range(3)]
    means = [t.prompt_tokens_mean for t in summary.turns]
    assert means[0] < means[1] < means[2]  # type: ignore[operator]
    assert all(t.ttft_ms.count == 6 and t.e2e_ms.p50 is not None for t in summary.turns)


def test_a_failed_turn_ends_its_conversation(tmp_path: Path) -> None:
    spec = PointSpec(index=0, label="p", kind="concurrency", level=1, min_requests=4,
                     max_duration_s=10)

    async def go() -> tuple[PointRun, list[Record]]:
        async with mock_server(None, output_tokens=2, model_id="m", error_rate=0.5,
                               error_kinds="http500", seed=3) as (handle, _):
            return await _point(handle.base_url, CONVERSATIONS, spec, "chat")

    res, recs = run(go)
    assert res.sent == len(recs) and res.errors > 0
    for r in recs:
        if r.error_kind is not None:  # nothing after a failed turn of the same conversation
            later = [q for q in recs if q.task_id == r.task_id and q.attempt == r.attempt
                     and (q.turn or 0) > (r.turn or 0)]
            assert later == []


def _synthetic(count: int, output: int, lengths: Any) -> list[Prompt]:
    tasks = load_tasks(Tasks(source="synthetic", tokenizer="builtin:tiny", count=count, seed=5,
                             synthetic={"input_tokens": lengths,  # type: ignore[arg-type]
                                        "output_tokens": output}),
                       base_dir=Path("."))
    return [to_prompt(t, api="completions", max_tokens=1) for t in tasks]


async def _served(engine: Engine, prompts: list[Prompt], level: int = 4
                  ) -> tuple[PointRun, list[Record]]:
    handle = await start_server(engine, model_name="m")
    try:
        spec = PointSpec(index=0, label="p", kind="concurrency", level=level,
                         min_requests=len(prompts), max_duration_s=60)
        return await _point(handle.base_url, prompts, spec, "completions")
    finally:
        await handle.close()


def test_synthetic_prompts_and_ignore_eos_lengths_are_exact_on_ortgenai() -> None:
    prompts = _synthetic(12, 24, {"dist": "uniform", "min": 4, "max": 36})
    engine = OrtGenAIEngine("builtin:tiny", batch_window_ms=5)
    _, recs = asyncio.run(_served(engine, prompts))
    # What the synthetic source asked for, against what the server counted with the model's
    # own tokenizer and generated.
    asked = {t.id: t.meta["input_tokens"] for t in load_tasks(Tasks(
        source="synthetic", tokenizer="builtin:tiny", count=12, seed=5,
        synthetic={"input_tokens": {"dist": "uniform", "min": 4, "max": 36},  # type: ignore[arg-type]
                   "output_tokens": 24}), base_dir=Path("."))}
    assert all(r.error_kind is None for r in recs) and len(recs) == 12
    for r in recs:
        assert r.prompt_tokens == asked[r.task_id]
        assert r.output_tokens == 24 and r.tokens_from == "usage"
        assert r.finish_reason == "length"
    assert {r.prompt_tokens for r in recs} != {recs[0].prompt_tokens}   # lengths vary


def test_ignore_eos_lengths_are_exact_on_the_transformers_engine() -> None:
    pytest.importorskip("torch")  # the [torch] extra; the ortgenai test covers [local]
    from acceval.engines.torch_engine import TorchEngine

    prompts = _synthetic(4, 30, 10)
    _, recs = asyncio.run(_served(TorchEngine("builtin:tiny", batch_window_ms=5), prompts))
    assert [(r.prompt_tokens, r.output_tokens, r.finish_reason) for r in recs] == [
        (10, 30, "length")] * 4


def test_ignore_eos_lengths_are_exact_on_the_mock() -> None:
    prompts = _synthetic(6, 40, 8)

    async def go() -> tuple[PointRun, list[Record]]:
        async with mock_server(None, output_tokens=3, model_id="m") as (handle, _):
            spec = PointSpec(index=0, label="p", kind="concurrency", level=3, min_requests=6,
                             max_duration_s=10)
            return await _point(handle.base_url, prompts, spec, "completions")

    _, recs = run(go)
    assert [(r.output_tokens, r.finish_reason) for r in recs] == [(40, "length")] * 6
