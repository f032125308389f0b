"""Engine options: one pydantic model per engine, checked before a server is spawned."""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from acceval.engines.base import EngineOptions, check_engine, engine_class, load_engine
from acceval.errors import UsageError

BUILTIN = ("mock", "ortgenai", "numpy", "transformers")


def _by_option(problems: list[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    return {option: (msg, hint) for option, msg, hint in problems}


@pytest.mark.parametrize("name", BUILTIN)
def test_options_model_matches_the_constructor(name: str) -> None:
    cls = engine_class(name)
    assert issubclass(cls.Options, EngineOptions)
    params = {p.name: p.default for p in inspect.signature(cls).parameters.values()}
    fields = {k: f.default for k, f in cls.Options.model_fields.items()}
    assert set(fields) == set(params)
    for key, default in params.items():
        want = list(default) if isinstance(default, tuple) else default
        assert fields[key] == want, key


def test_unknown_engine_suggests_the_close_one_and_lists_installed() -> None:
    ((option, msg, hint),) = check_engine("mokc", {})
    assert option == "" and "unknown engine 'mokc'" in msg
    assert "did you mean 'mock'" in hint
    assert all(name in hint for name in BUILTIN)


def test_unknown_option_suggests_the_close_one() -> None:
    probs = _by_option(check_engine("mock", {"ttft": 5}))
    assert "has no option 'ttft'" in probs["ttft"][0]
    assert "did you mean 'ttft_ms'" in probs["ttft"][1]


@pytest.mark.parametrize("options", [
    {"ttft_ms": -1}, {"itl_ms": "fast"}, {"tokens_per_chunk": 0}, {"error_rate": 1.5},
    {"error_kinds": ["segfault"]}, {"correct_fraction": 2}, {"jitter": "gaussian"},
    {"answers": "/nonexistent/answers.jsonl"}, {"output_tokens": 2.5}, {"ttft_ms": True},
])
def test_every_mock_option_the_engine_rejects_is_found_first(options: dict[str, Any]) -> None:
    (key,) = options
    assert key in _by_option(check_engine("mock", options))


def test_a_broken_answers_file_is_found_first(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"prompt": "q"}) + "\n", encoding="utf-8")
    probs = _by_option(check_engine("mock", {"answers": str(path)}))
    assert "answers.jsonl:1" in probs["answers"][0]


def test_the_study_placeholder_for_answers_is_accepted() -> None:
    assert check_engine("mock", {"answers": "@tasks"}) == []


@pytest.mark.parametrize(("name", "options", "option", "words"), [
    ("ortgenai", {"precision": "int3"}, "precision", "'fp32', 'int8' or 'int4'"),
    ("ortgenai", {"max_batch": 64}, "max_batch", "less than or equal to 32"),
    ("ortgenai", {"model": "builtin:huge"}, "model", "no built-in model 'builtin:huge'"),
    ("numpy", {"precision": "int4"}, "precision", "has no option 'precision'"),
    ("numpy", {"threads": 0}, "threads", "greater than or equal to 1"),
    ("transformers", {"device": "tpu"}, "device", "'cpu' or 'cuda[:N]'"),
])
def test_model_engine_options(name: str, options: dict[str, Any], option: str,
                              words: str) -> None:
    probs = _by_option(check_engine(name, options))
    assert words in probs[option][0]


def test_a_missing_folder_model_is_found(tmp_path: Path) -> None:
    probs = _by_option(check_engine("numpy", {"model": str(tmp_path / "nowhere")}))
    assert "neither builtin:NAME nor a directory" in probs["model"][0]


def test_good_options_have_no_problems() -> None:
    assert check_engine("mock", {"ttft_ms": 5, "itl_ms": 1, "error_kinds": "http500"}) == []
    assert check_engine("ortgenai", {"model": "builtin:tiny", "precision": "int4"}) == []
    assert check_engine("numpy", {"model": "builtin:tiny"}) == []


def test_a_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "onnxruntime_genai" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    ((option, msg, hint),) = check_engine("ortgenai", {})
    assert option == "" and "onnxruntime_genai" in msg
    assert hint == "pip install 'acceval[local]'"


def test_load_engine_rejects_what_the_options_model_rejects() -> None:
    with pytest.raises(UsageError, match=r"has no option 'ttft'.*did you mean 'ttft_ms'"):
        load_engine("mock", ttft=50)
    with pytest.raises(UsageError, match="ttft_ms"):
        load_engine("mock", ttft_ms=True)
