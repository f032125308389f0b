"""Synthetic prompts hit their requested input lengths exactly under the tokenizer (a BPE file
with merges trained here, and the shipped model's), seeded; with a shared prefix and turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from acceval.errors import StudyError
from acceval.study import study_from_dict
from acceval.tasks import load_tasks, to_prompt
from acceval.tasks.spec import Tasks
from helpers.tokenizer_file import bpe_tokenizer_file


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bpe_tokenizer_file(tmp_path_factory.mktemp("tok"))


def count(path: Path, text: str) -> int:
    return len(Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids)


def tasks(tokenizer: str | Path, synthetic: dict[str, Any], *, count: int = 40, seed: int = 3,
          base_dir: Path = Path(".")) -> list[Any]:
    spec = Tasks(source="synthetic", tokenizer=str(tokenizer), count=count, seed=seed,
                 synthetic=synthetic)  # type: ignore[arg-type]
    return load_tasks(spec, base_dir=base_dir)


@pytest.mark.parametrize("lengths", [
    256, {"dist": "uniform", "min": 1, "max": 300},
    {"dist": "normal", "mean": 120, "stddev": 40, "min": 10, "max": 200}])
def test_every_prompt_has_exactly_its_drawn_length_under_a_bpe_file(bpe: Path,
                                                                    lengths: Any) -> None:
    got = tasks(bpe, {"input_tokens": lengths, "output_tokens": 16})
    drawn = [t.meta["input_tokens"] for t in got]
    assert [count(bpe, t.prompt) for t in got] == drawn
    if lengths == 256:
        assert set(drawn) == {256}
    elif isinstance(lengths, dict) and lengths["dist"] == "uniform":
        assert min(drawn) >= 1 and max(drawn) <= 300 and len(set(drawn)) > 10
    else:
        assert min(drawn) >= 10 and max(drawn) <= 200 and 90 < sum(drawn) / len(drawn) < 150


def test_the_shipped_tokenizer_counts_the_same_as_the_engines_do() -> None:
    from acceval.engines.ortgenai import OrtGenAIEngine

    got = tasks("builtin:tiny", {"input_tokens": {"dist": "uniform", "min": 5, "max": 40},
                                 "output_tokens": 8})
    engine = OrtGenAIEngine("builtin:tiny")  # its tokenizer only: nothing is loaded
    assert [engine.count_tokens(t.prompt) for t in got] == [t.meta["input_tokens"] for t in got]


def test_same_seed_same_prompts_and_lengths_a_new_seed_new_ones(bpe: Path) -> None:
    spec = {"input_tokens": {"dist": "uniform", "min": 10, "max": 50},
            "output_tokens": {"dist": "uniform", "min": 4, "max": 64}}
    a, b, c = tasks(bpe, spec), tasks(bpe, spec), tasks(bpe, spec, seed=4)
    assert [(t.prompt, t.max_tokens) for t in a] == [(t.prompt, t.max_tokens) for t in b]
    assert [t.prompt for t in a] != [t.prompt for t in c]


def test_outputs_ask_for_their_length_with_ignore_eos_and_no_checker(bpe: Path) -> None:
    got = tasks(bpe, {"input_tokens": 8, "output_tokens": {"dist": "uniform", "min": 1,
                                                           "max": 9}})
    assert all(t.checker is None and t.ignore_eos for t in got)
    assert {t.max_tokens for t in got} <= set(range(1, 10)) and len({t.max_tokens for t in got}) > 3
    p = to_prompt(got[0], api="chat", max_tokens=999)
    assert p.max_tokens == got[0].max_tokens and p.ignore_eos
    off = tasks(bpe, {"input_tokens": 8, "output_tokens": 5, "ignore_eos": False})
    assert not to_prompt(off[0], api="completions", max_tokens=999).ignore_eos


def test_a_shared_prefix_is_the_same_tokens_in_its_group_then_each_its_own(bpe: Path) -> None:
    got = tasks(bpe, {"input_tokens": 30, "output_tokens": 4, "prefix_tokens": 100,
                      "prefix_groups": 3}, count=9)
    tok = Tokenizer.from_file(str(bpe))
    ids = [tok.encode(t.prompt, add_special_tokens=False).ids for t in got]
    assert all(len(i) == 130 for i in ids)
    for g in range(3):
        group = [ids[k][:100] for k in range(g, 9, 3)]
        assert all(p == group[0] for p in group)
        assert ids[g][100:] != ids[g + 3][100:]          # each its own suffix
    assert ids[0][:100] != ids[1][:100]                  # groups differ
    assert [t.meta["prefix_group"] for t in got] == [0, 1, 2] * 3


def test_turns_are_further_user_messages_of_exact_length(bpe: Path) -> None:
    got = tasks(bpe, {"input_tokens": 20, "output_tokens": 4, "turns": 3}, count=5)
    assert all(len(t.turns) == 2 for t in got)
    assert {count(bpe, m) for t in got for m in t.turns} == {20}
    assert to_prompt(got[0], api="chat", max_tokens=1).turns == got[0].turns


def _problems(tasks_section: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises(StudyError) as err:
        study = study_from_dict({"name": "s", "tasks": tasks_section, "targets": [
            {"name": "a", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}]})
        load_tasks(study.tasks, base_dir=Path("/nonexistent"))
    return list(err.value.problems)


@pytest.mark.parametrize(("section", "path", "words"), [
    ({"source": "synthetic", "tokenizer": "builtin:tiny"}, "tasks", "synthetic"),
    ({"source": "synthetic", "synthetic": {"input_tokens": 5, "output_tokens": 5}}, "tasks",
     "tokenizer"),
    ({"source": "builtin:arithmetic", "synthetic": {"input_tokens": 5, "output_tokens": 5}},
     "tasks", "source: synthetic only"),
    ({"source": "synthetic", "tokenizer": "builtin:tiny",
      "synthetic": {"input_tokens": {"dist": "uniform", "min": 5}, "output_tokens": 5}},
     "tasks.synthetic.input_tokens", "min` and `max"),
    ({"source": "synthetic", "tokenizer": "no/such/tokenizer.json",
      "synthetic": {"input_tokens": 5, "output_tokens": 5}}, "tasks.tokenizer", "not a file"),
    ({"source": "synthetic", "tokenizer": "builtin:huge",
      "synthetic": {"input_tokens": 5, "output_tokens": 5}}, "tasks.tokenizer", "builtin:huge"),
])
def test_bad_synthetic_sections_name_the_field(section: dict[str, Any], path: str,
                                               words: str) -> None:
    problems = _problems(section)
    assert [p for p, _, _ in problems] == [path]
    assert words in problems[0][1]
