"""ShareGPT and OpenAI-messages conversations, and mooncake traces, as task sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from acceval.errors import StudyError
from acceval.tasks import load_tasks, to_prompt
from acceval.tasks._trace import BLOCK_TOKENS
from acceval.tasks.spec import Tasks
from helpers.tokenizer_file import bpe_tokenizer_file

SHAREGPT = [
    {"id": "a", "conversations": [
        {"from": "system", "value": "Be brief."}, {"from": "human", "value": "Hello there"},
        {"from": "gpt", "value": "the model answers every request"},
        {"from": "human", "value": "And then?"}, {"from": "gpt", "value": "tokens"}]},
    {"id": "b", "conversations": [{"from": "gpt", "value": "no question here"}]},
    {"id": "a", "conversations": [{"from": "human", "value": "Second part"}]},
]


def load(tmp_path: Path, source: str, **kw: Any) -> list[Any]:
    return load_tasks(Tasks(source=source, **kw), base_dir=tmp_path)


def test_a_sharegpt_array_gives_first_turns_skips_the_unaskable_and_keeps_ids_unique(
        tmp_path: Path) -> None:
    (tmp_path / "sg.json").write_text(json.dumps(SHAREGPT))
    got = load(tmp_path, "sharegpt:sg.json")
    assert [t.id for t in got] == ["a", "a#2"]
    assert got[0].messages == (("system", "Be brief."), ("user", "Hello there"))
    assert got[0].turns == () and got[0].checker is None and got[0].max_tokens is None
    assert to_prompt(got[0], api="chat", max_tokens=7).messages == got[0].messages


def test_with_a_tokenizer_the_first_answer_sets_the_output_length(tmp_path: Path) -> None:
    (tmp_path / "sg.json").write_text(json.dumps(SHAREGPT))
    tok = bpe_tokenizer_file(tmp_path)
    got = load(tmp_path, "sharegpt:sg.json", tokenizer=str(tok))
    answer = "the model answers every request"
    assert got[0].max_tokens == len(Tokenizer.from_file(str(tok)).encode(
        answer, add_special_tokens=False).ids)


def test_multi_turn_keeps_every_user_turn_and_drops_the_files_answers(tmp_path: Path) -> None:
    lines = [{"messages": [{"role": "user", "content": "one"},
                           {"role": "assistant", "content": "recorded"},
                           {"role": "user", "content": "two"},
                           {"role": "assistant", "content": "recorded"},
                           {"role": "user", "content": "three"}]}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (t,) = load(tmp_path, "sharegpt:c.jsonl", multi_turn=True)
    assert t.messages == (("user", "one"),) and t.turns == ("two", "three")
    assert t.id == "conv-0" and t.meta["turns"] == 3


@pytest.mark.parametrize(("content", "where"), [
    ('{"conversations": [{"from": "alien", "value": "x"}]}\n', "c.jsonl:1.from[0]"),
    ('{"chat": []}\n', "c.jsonl:1"), ("[1, 2", "tasks.source"),
    ('{"conversations": [{"from": "gpt", "value": "x"}]}\n', "tasks.source")])
def test_bad_conversation_files_say_where(tmp_path: Path, content: str, where: str) -> None:
    (tmp_path / "c.jsonl").write_text(content)
    with pytest.raises(StudyError) as err:
        load(tmp_path, "sharegpt:c.jsonl")
    assert [p for p, _, _ in err.value.problems] == [where]


def test_multi_turn_is_for_conversations_only() -> None:
    with pytest.raises(ValueError, match="multi_turn applies to sharegpt"):
        Tasks(source="builtin:arithmetic", multi_turn=True)


TRACE = [
    {"timestamp": 3000, "input_length": 700, "output_length": 52, "hash_ids": [0, 1]},
    {"timestamp": 0, "input_length": 1100, "output_length": 10, "hash_ids": [0, 2, 3]},
    {"timestamp": 3000, "input_length": 600, "output_length": 5, "hash_ids": [0]},
    {"timestamp": 4500, "input_length": 90, "output_length": 1, "hash_ids": []},
]


def test_a_mooncake_trace_gives_exact_lengths_shared_blocks_and_send_times(tmp_path: Path
                                                                          ) -> None:
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in TRACE))
    tokp = bpe_tokenizer_file(tmp_path)
    got = load(tmp_path, "mooncake:t.jsonl", tokenizer=str(tokp), seed=1)
    tok = Tokenizer.from_file(str(tokp))
    ids = [tok.encode(t.prompt, add_special_tokens=False).ids for t in got]
    # Timestamp order; lengths exact; output lengths asked for with ignore_eos.
    assert [t.at_ms for t in got] == [0, 3000, 3000, 4500]
    assert [len(i) for i in ids] == [1100, 700, 600, 90]
    assert [(t.max_tokens, t.ignore_eos) for t in got] == [(10, True), (52, True), (5, True),
                                                           (1, True)]
    # Hash block 0 is the same text, so the same leading tokens, in the three that share it.
    assert got[0].prompt[:50] == got[1].prompt[:50] == got[2].prompt[:50]
    assert ids[0][:BLOCK_TOKENS - 2] == ids[1][:BLOCK_TOKENS - 2]
    assert ids[0][BLOCK_TOKENS + 2:BLOCK_TOKENS + 40] != ids[1][BLOCK_TOKENS + 2:BLOCK_TOKENS + 40]
    assert to_prompt(got[1], api="completions", max_tokens=99).at_ns == 3_000_000_000


@pytest.mark.parametrize(("line", "field"), [
    ({"timestamp": -1, "input_length": 5, "output_length": 5}, "t.jsonl:1:timestamp"),
    ({"timestamp": 0, "input_length": 0, "output_length": 5}, "t.jsonl:1:input_length"),
    ({"timestamp": 0, "input_length": 5, "output_length": 5, "hash_ids": "x"},
     "t.jsonl:1:hash_ids"),
    ({"timestamp": 0, "input_length": 5, "output_length": 5, "prio": 1}, "t.jsonl:1:prio")])
def test_bad_trace_lines_name_the_line_and_field(tmp_path: Path, line: dict[str, Any],
                                                 field: str) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(StudyError) as err:
        load(tmp_path, "mooncake:t.jsonl", tokenizer="builtin:tiny")
    assert [p for p, _, _ in err.value.problems] == [field]
