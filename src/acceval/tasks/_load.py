"""The study's ``tasks`` section → the task list: built-in generators, JSONL files, fixed text."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from acceval.errors import StudyError
from acceval.tasks._conversations import read_conversations
from acceval.tasks._generators import GENERATORS
from acceval.tasks._jsonl import read_tasks_jsonl
from acceval.tasks._synthetic import load_tokenizer, synthetic_tasks
from acceval.tasks._task import Task
from acceval.tasks._trace import read_trace
from acceval.tasks.spec import Tasks

SOURCES = ("builtin", "jsonl", "text", "synthetic", "sharegpt", "mooncake")


def generator_names() -> list[str]:
    return sorted(GENERATORS)


def generate(name: str, *, count: int, seed: int, options: Mapping[str, Any] | None = None
             ) -> list[Task]:
    """``count`` tasks from the built-in generator ``name``. Same arguments, same tasks."""
    gen = GENERATORS.get(name)
    if gen is None:
        raise StudyError(f"unknown built-in task set '{name}'", [(
            "tasks.source", f"no generator named '{name}'",
            f"available: {', '.join('builtin:' + n for n in generator_names())}")])
    try:
        opts = gen.options.model_validate(dict(options or {}))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            allowed = ", ".join(gen.options.model_fields)
            hint = f"allowed options for {name}: {allowed}" if err["type"] == "extra_forbidden" \
                else "see docs/tasks.md"
            problems.append(("tasks.options" + (f".{loc}" if loc else ""),
                             err["msg"].removeprefix("Value error, "), hint))
        raise StudyError(f"tasks.options: {len(problems)} problem(s) for builtin:{name}",
                         problems) from None
    return gen.draw(random.Random(seed), count, opts)


def text_tasks(prompt: str, count: int) -> list[Task]:
    """``count`` copies of one fixed prompt with no checker: a pure load test."""
    return [Task(id=f"text-{i}", prompt=prompt, messages=(("user", prompt),), reference="",
                 checker=None) for i in range(count)]


def load_tasks(spec: Tasks, *, base_dir: Path) -> list[Task]:
    """The tasks a study asks for.

    ``builtin:NAME`` draws ``count`` tasks with ``seed`` and ``options``; ``jsonl:PATH`` (relative
    to ``base_dir``, the study file's folder) takes the file's first ``count`` tasks, or all of
    them when the file has fewer; ``text:PROMPT`` repeats one unchecked prompt ``count`` times;
    ``synthetic`` makes ``count`` prompts of exact token lengths under ``tokenizer``;
    ``sharegpt:PATH`` takes the first ``count`` conversations; ``mooncake:PATH`` the first
    ``count`` requests of a trace (docs/tasks.md).
    """
    scheme, sep, rest = spec.source.partition(":")
    if spec.source.strip() == "synthetic":
        scheme, sep, rest = "synthetic", ":", "-"
    if not sep or scheme not in SOURCES or not rest:
        raise StudyError("tasks.source: not a task source", [(
            "tasks.source", f"cannot read {spec.source!r}",
            "use builtin:NAME, jsonl:PATH, text:PROMPT, synthetic, sharegpt:PATH or "
            "mooncake:PATH; generators: " + ", ".join(generator_names()))])
    if scheme == "builtin":
        return generate(rest.strip(), count=spec.count, seed=spec.seed, options=spec.options)
    if spec.options:
        raise StudyError(f"tasks.options: {scheme}: sources take no options", [(
            "tasks.options", f"options apply to builtin generators only, not {scheme}:",
            "remove tasks.options")])
    if scheme == "text":
        return text_tasks(rest, spec.count)
    tok = load_tokenizer(spec.tokenizer, base_dir) if spec.tokenizer is not None else None
    if scheme == "synthetic":
        assert spec.synthetic is not None and tok is not None  # the spec checks both
        return synthetic_tasks(spec.synthetic, tok, count=spec.count, seed=spec.seed)
    path = Path(rest.strip()).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if scheme == "sharegpt":
        return read_conversations(path, limit=spec.count, multi_turn=spec.multi_turn, tok=tok)
    if scheme == "mooncake":
        assert tok is not None
        return read_trace(path, limit=spec.count, tok=tok, seed=spec.seed)
    return read_tasks_jsonl(path, limit=spec.count)
