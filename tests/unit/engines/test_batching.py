"""DynamicBatcher: grouping by window and size, per-request outputs, stop rules, failures.

The step function here is a tiny deterministic "model" (each row counts up from its last
prompt token, EOS when it reaches a stop value), so every expected output is known.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence

import pytest

from acceval.engines.base import GenerationChunk
from acceval.engines.batching import DynamicBatcher

EOS = 0


class CountingModel:
    """Row r yields last+1, last+2, ... and EOS after reaching ``stop_at``; records batches."""

    def __init__(self, stop_at: int = 10**9, fail: bool = False) -> None:
        self.stop_at = stop_at
        self.fail = fail
        self.batches: list[list[list[int]]] = []
        self.max_new: list[int] = []
        self.min_new: list[int] = []
        self.steps_run = 0
        self.threads: set[str] = set()

    def __call__(self, prompts: list[list[int]], max_new: int,
                 min_new: int = 0) -> Iterator[Sequence[int]]:
        self.batches.append(prompts)
        self.max_new.append(max_new)
        self.min_new.append(min_new)
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("runtime exploded")
        last = [p[-1] for p in prompts]
        for step in range(1, max_new + 1):
            self.steps_run += 1
            yield [EOS if v + step > self.stop_at else v + step for v in last]


def decode(ids: list[int]) -> str:
    return ",".join(str(i) for i in ids)


async def collect(b: DynamicBatcher, ids: list[int], n: int) -> list[GenerationChunk]:
    return [c async for c in b.submit(ids, n)]


def text_of(chunks: list[GenerationChunk]) -> str:
    return "".join(c.text for c in chunks)


async def run_with(model: CountingModel, jobs: list[tuple[list[int], int]], **kw: float) -> list[
        list[GenerationChunk]]:
    b = DynamicBatcher(model, decode, eos_ids=[EOS], **kw)  # type: ignore[arg-type]
    await b.start()
    try:
        return list(await asyncio.gather(*(collect(b, ids, n) for ids, n in jobs)))
    finally:
        await b.stop()


def test_requests_in_one_window_share_a_batch_and_get_their_own_tokens() -> None:
    model = CountingModel()
    jobs = [([1, 10 * i], 3) for i in range(1, 6)]
    outs = asyncio.run(run_with(model, jobs, max_batch=16, batch_window_ms=50))
    assert len(model.batches) == 1 and len(model.batches[0]) == 5
    for i, chunks in enumerate(outs, start=1):
        base = 10 * i
        assert text_of(chunks) == f"{base + 1},{base + 2},{base + 3}"
        assert [c.n_tokens for c in chunks] == [1, 1, 1]
        assert chunks[-1].finish_reason == "length"
        assert all(c.finish_reason is None for c in chunks[:-1])
    assert model.threads and "MainThread" not in model.threads


def test_max_batch_caps_batch_size() -> None:
    model = CountingModel()
    outs = asyncio.run(run_with(model, [([i], 2) for i in range(10)], max_batch=4,
                                batch_window_ms=50))
    assert sorted(len(b) for b in model.batches) == [2, 4, 4]
    assert [text_of(c) for c in outs] == [f"{i + 1},{i + 2}" for i in range(10)]


def test_zero_window_with_max_batch_one_runs_requests_alone() -> None:
    model = CountingModel()
    asyncio.run(run_with(model, [([i], 1) for i in range(3)], max_batch=1, batch_window_ms=0))
    assert [len(b) for b in model.batches] == [1, 1, 1]


def test_each_request_keeps_its_own_max_tokens_in_a_shared_batch() -> None:
    model = CountingModel()
    outs = asyncio.run(run_with(model, [([5], 1), ([7], 4)], max_batch=8, batch_window_ms=50))
    assert model.max_new == [4]
    assert text_of(outs[0]) == "6" and outs[0][-1].finish_reason == "length"
    assert text_of(outs[1]) == "8,9,10,11" and sum(c.n_tokens for c in outs[1]) == 4


def test_eos_stops_a_row_counts_one_token_and_ends_the_batch_early() -> None:
    model = CountingModel(stop_at=3)
    outs = asyncio.run(run_with(model, [([1], 50), ([2], 50)], max_batch=8, batch_window_ms=50))
    assert text_of(outs[0]) == "2,3" and outs[0][-1].finish_reason == "stop"
    assert sum(c.n_tokens for c in outs[0]) == 3      # two digits + EOS
    assert text_of(outs[1]) == "3" and outs[1][-1].finish_reason == "stop"
    assert model.steps_run == 3                       # not 50: every row had finished


def test_prompts_of_different_lengths_never_share_a_batch() -> None:
    model = CountingModel()
    jobs = [([1], 1), ([1, 2], 1), ([3], 1), ([4, 5], 1)]
    outs = asyncio.run(run_with(model, jobs, max_batch=8, batch_window_ms=50))
    assert sorted(sorted(len(p) for p in b) for b in model.batches) == [[1, 1], [2, 2]]
    assert [text_of(c) for c in outs] == ["2", "3", "4", "6"]


def test_zero_max_tokens_returns_nothing_without_running_the_model() -> None:
    model = CountingModel()
    outs = asyncio.run(run_with(model, [([1], 0)], batch_window_ms=0))
    assert outs == [[GenerationChunk(text="", n_tokens=0, finish_reason="length")]]
    assert model.batches == []


def test_runtime_failure_reaches_every_request_of_the_batch() -> None:
    model = CountingModel(fail=True)

    async def go() -> list[BaseException | list[GenerationChunk]]:
        b = DynamicBatcher(model, decode, eos_ids=[EOS], batch_window_ms=50)
        await b.start()
        try:
            return list(await asyncio.gather(*(collect(b, [i], 2) for i in range(3)),
                                             return_exceptions=True))
        finally:
            await b.stop()

    outs = asyncio.run(go())
    assert all(isinstance(o, RuntimeError) and "exploded" in str(o) for o in outs)


def test_a_cancelled_request_does_not_disturb_the_others() -> None:
    model = CountingModel()

    async def go() -> tuple[list[GenerationChunk], int]:
        b = DynamicBatcher(model, decode, eos_ids=[EOS], batch_window_ms=30)
        await b.start()
        try:
            gone = asyncio.create_task(collect(b, [100], 5))
            kept = asyncio.create_task(collect(b, [1], 5))
            await asyncio.sleep(0)
            gone.cancel()
            out = await kept
            return out, len(model.batches[0])
        finally:
            await b.stop()

    out, first_batch = asyncio.run(go())
    assert text_of(out) == "2,3,4,5,6"
    assert first_batch == 1  # the cancelled request left the queue before the batch formed


def test_submit_before_start_is_an_error() -> None:
    b = DynamicBatcher(CountingModel(), decode, eos_ids=[EOS])

    async def go() -> None:
        await collect(b, [1], 1)

    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(go())


@pytest.mark.parametrize("kw", [{"max_batch": 0}, {"batch_window_ms": -1.0}])
def test_bad_settings_are_rejected(kw: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        DynamicBatcher(CountingModel(), decode, eos_ids=[EOS], **kw)  # type: ignore[arg-type]


def test_stats_count_batches_and_requests() -> None:
    model = CountingModel()

    async def go() -> tuple[int, int, float | None]:
        b = DynamicBatcher(model, decode, eos_ids=[EOS], max_batch=3, batch_window_ms=50)
        await b.start()
        try:
            await asyncio.gather(*(collect(b, [i], 1) for i in range(6)))
            return b.stats.batches, b.stats.requests, b.stats.mean_batch
        finally:
            await b.stop()

    assert asyncio.run(go()) == (2, 6, 3.0)
