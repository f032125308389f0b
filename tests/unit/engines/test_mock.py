"""The mock engine: output plans, chunking, answers, faults and option validation."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from acceval.engines.base import EngineFault, GenerationChunk, GenerationRequest, load_engine
from acceval.engines.mock import MockEngine, parse_error_kinds, wrong_answer
from acceval.errors import UsageError


def collect(engine: MockEngine, prompt: str, max_tokens: int = 100) -> list[GenerationChunk]:
    async def run() -> list[GenerationChunk]:
        req = GenerationRequest("r1", prompt, max_tokens)
        return [chunk async for chunk in engine.generate(req)]

    return asyncio.run(run())


def write_answers(tmp_path: Path, rows: list[dict[str, object]]) -> str:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_count_tokens_is_the_whitespace_word_count() -> None:
    engine = MockEngine()
    assert engine.count_tokens("what is  2 + 3?\n") == 5
    assert engine.count_tokens("") == 0


def test_filler_output_has_output_tokens_words_and_stops() -> None:
    chunks = collect(MockEngine(output_tokens=5), "anything")
    assert "".join(c.text for c in chunks) == "tok tok tok tok tok"
    assert [c.n_tokens for c in chunks] == [1, 1, 1, 1, 1]
    assert [c.finish_reason for c in chunks] == [None, None, None, None, "stop"]


def test_max_tokens_caps_output_with_finish_length() -> None:
    chunks = collect(MockEngine(output_tokens=20), "anything", max_tokens=7)
    assert sum(c.n_tokens for c in chunks) == 7
    assert chunks[-1].finish_reason == "length"


def test_tokens_per_chunk_groups_tokens_and_keeps_the_text() -> None:
    chunks = collect(MockEngine(output_tokens=10, tokens_per_chunk=3), "p")
    assert [c.n_tokens for c in chunks] == [3, 3, 3, 1]
    assert "".join(c.text for c in chunks) == " ".join(["tok"] * 10)
    assert chunks[-1].finish_reason == "stop"


def test_zero_output_tokens_yields_one_empty_final_chunk() -> None:
    chunks = collect(MockEngine(output_tokens=0), "p")
    assert [(c.text, c.n_tokens, c.finish_reason) for c in chunks] == [("", 0, "stop")]


def test_answers_file_gives_the_reference_when_correct_fraction_is_one(tmp_path: Path) -> None:
    path = write_answers(tmp_path, [{"prompt": "What is 2+3?", "reference": "The answer is 5"}])
    engine = MockEngine(answers=path, correct_fraction=1.0)
    chunks = collect(engine, "What is 2+3?")
    assert "".join(c.text for c in chunks) == "The answer is 5"
    assert sum(c.n_tokens for c in chunks) == 4
    assert "".join(c.text for c in collect(engine, "not in the file")).startswith("tok")


def test_answers_file_gives_a_wrong_answer_when_correct_fraction_is_zero(tmp_path: Path) -> None:
    path = write_answers(tmp_path, [{"prompt": "What is 2+3?", "reference": "5"}])
    engine = MockEngine(answers=path, correct_fraction=0.0)
    assert "".join(c.text for c in collect(engine, "What is 2+3?")) == "6"


def test_correct_fraction_is_deterministic_and_close_to_the_target(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [{"prompt": f"q{i}", "reference": str(i)} for i in range(400)]
    path = write_answers(tmp_path, rows)
    first = [MockEngine(answers=path, correct_fraction=0.7).answer_for(f"q{i}") for i in range(400)]
    again = [MockEngine(answers=path, correct_fraction=0.7).answer_for(f"q{i}") for i in range(400)]
    assert first == again
    correct = sum(answer == str(i) for i, answer in enumerate(first))
    assert 0.6 * 400 < correct < 0.8 * 400


def test_chat_answers_match_by_rendered_messages_or_last_user_message(tmp_path: Path) -> None:
    path = write_answers(tmp_path, [
        {"messages": [{"role": "user", "content": "Capital of France?"}], "reference": "Paris"},
        {"prompt": "2*21?", "reference": "42"},
    ])
    engine = MockEngine(answers=path)
    lone = engine.render_chat([("user", "Capital of France?")])
    assert engine.answer_for(lone) == "Paris"
    with_system = engine.render_chat([("system", "Be brief."), ("user", "2*21?")])
    assert engine.answer_for(with_system) == "42"


@pytest.mark.parametrize(("reference", "wrong"), [
    ("42", "43"), ("x = 1.9", "x = 1.0"), ("B", "A"), ("A", "B"), ("Paris", "wrong"),
    ("wrong", "incorrect"),
])
def test_wrong_answer_differs_from_the_reference(reference: str, wrong: str) -> None:
    assert wrong_answer(reference) == wrong


def test_fault_choice_is_reproducible_by_seed() -> None:
    def draws(seed: int) -> list[str | None]:
        engine = MockEngine(error_rate=0.3, seed=seed)
        return [engine.choose_fault() for _ in range(300)]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    faults = [f for f in draws(1) if f is not None]
    assert 50 < len(faults) < 130
    assert set(faults) == {"http500", "http429", "broken_stream", "malformed"}


def test_error_kind_weights_are_honoured() -> None:
    engine = MockEngine(error_rate=1.0, error_kinds={"http429": 1, "malformed": 0})
    assert {engine.choose_fault() for _ in range(50)} == {"http429"}
    assert MockEngine(error_rate=0.0).choose_fault() is None


@pytest.mark.parametrize(("kind", "action", "chunks_before"), [
    ("http500", EngineFault.HTTP, 0),
    ("http429", EngineFault.HTTP, 0),
    ("broken_stream", EngineFault.BROKEN_STREAM, 2),
    ("malformed", EngineFault.MALFORMED, 2),
])
def test_injected_fault_raises_engine_fault(kind: str, action: str, chunks_before: int) -> None:
    engine = MockEngine(output_tokens=4, error_rate=1.0, error_kinds=[kind])
    seen: list[GenerationChunk] = []

    async def run() -> None:
        async for chunk in engine.generate(GenerationRequest("r", "p", 100)):
            seen.append(chunk)

    with pytest.raises(EngineFault) as info:
        asyncio.run(run())
    assert info.value.action == action
    assert info.value.label == kind
    assert len(seen) == chunks_before
    if kind.startswith("http"):
        assert info.value.status == int(kind[4:])


def test_jitter_is_seeded_and_bounded() -> None:
    a = MockEngine(itl_ms=5, jitter_ms=2, seed=3)
    b = MockEngine(itl_ms=5, jitter_ms=2, seed=3)
    delays = [a._delay_ns(5.0) for _ in range(200)]
    assert delays == [b._delay_ns(5.0) for _ in range(200)]
    assert all(3_000_000 <= d <= 7_000_000 for d in delays)
    lognormal = MockEngine(jitter_ms=2, jitter="lognormal", seed=3)
    assert all(d >= 5_000_000 for d in (lognormal._delay_ns(5.0) for _ in range(200)))


def test_error_kinds_accepts_comma_text() -> None:
    assert parse_error_kinds("http500, broken_stream") == {"http500": 1.0, "broken_stream": 1.0}


@pytest.mark.parametrize("options", [
    {"ttft_ms": -1}, {"itl_ms": "fast"}, {"tokens_per_chunk": 0}, {"error_rate": 1.5},
    {"error_kinds": ["segfault"]}, {"correct_fraction": 2}, {"jitter": "gaussian"},
    {"answers": "/nonexistent/answers.jsonl"}, {"output_tokens": 2.5}, {"slots": -1},
    {"slots": 1.5},
])
def test_bad_options_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(UsageError, match="mock option"):
        MockEngine(**options)  # type: ignore[arg-type]


def test_bad_answers_line_names_the_line(tmp_path: Path) -> None:
    path = write_answers(tmp_path, [{"prompt": "q"}])
    with pytest.raises(UsageError, match=r"answers.jsonl:1"):
        MockEngine(answers=path)


def test_mock_is_registered_as_an_entry_point() -> None:
    engine = load_engine("mock", output_tokens=3, model_id="fake-7b")
    assert isinstance(engine, MockEngine)
    assert engine.model_id == "fake-7b"
    assert engine.output_tokens == 3


def test_unknown_option_is_a_usage_error_listing_the_accepted_ones() -> None:
    with pytest.raises(UsageError, match="accepts: ttft_ms"):
        load_engine("mock", ttft=50)


def _four_requests_on_two_slots() -> list[float]:
    """Two slots, four requests at once, 30 ms each: each request's time to done, in ms."""
    engine = MockEngine(slots=2, ttft_ms=30, output_tokens=1)

    async def one(i: int, t0: int) -> float:
        req = GenerationRequest(f"r{i}", "p", 10, received_ns=t0)
        async for _ in engine.generate(req):
            pass
        return (time.perf_counter_ns() - t0) / 1e6

    async def run() -> list[float]:
        t0 = time.perf_counter_ns()
        return list(await asyncio.gather(*(one(i, t0) for i in range(4))))

    return asyncio.run(run())


def test_slots_queue_requests_first_come_first_served() -> None:
    """The last two wait one service time. A sleep is never early, so these lower bounds
    hold on any host, however busy."""
    first, second, third, fourth = _four_requests_on_two_slots()
    assert min(first, second) >= 29
    assert min(third, fourth) >= 59


@pytest.mark.timing  # upper bounds on wall-clock time: a busy host stretches them
def test_slots_serve_within_one_service_time_each() -> None:
    first, second, third, fourth = _four_requests_on_two_slots()
    assert first < 55 and second < 55
    assert third < 110 and fourth < 110


def test_a_stream_closed_early_gives_its_slot_back() -> None:
    engine = MockEngine(slots=1, itl_ms=5, output_tokens=50)

    async def run() -> int:
        agen = engine.generate(GenerationRequest("a", "p", 100))
        await agen.__anext__()
        await agen.aclose()                       # the client went away mid-stream
        chunks = [c async for c in engine.generate(GenerationRequest("b", "p", 2))]
        return len(chunks)

    assert asyncio.run(asyncio.wait_for(run(), 5)) == 2
