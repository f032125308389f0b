"""The study's ``tasks`` section → the task list: built-in generators, JSONL files, fixed text."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from acceval.errors import StudyError
from acceval.tasks._generators import GENERATORS
from acceval.tasks._jsonl import read_tasks_jsonl
from acceval.tasks._task import Task
from acceval.tasks.spec import Tasks

SOURCES = ("builtin", "jsonl", "text")


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
    them when the file has fewer; ``text:PROMPT`` repeats one unchecked prompt ``count`` times.
    """
    scheme, sep, rest = spec.source.partition(":")
    if not sep or scheme not in SOURCES or not rest:
        raise StudyError("tasks.source: not a task source", [(
            "tasks.source", f"cannot read {spec.source!r}",
            "use builtin:NAME, jsonl:PATH or text:PROMPT; generators: "
            + ", ".join(generator_names()))])
    if scheme == "builtin":
        return generate(rest.strip(), count=spec.count, seed=spec.seed, options=spec.options)
    if spec.options:
        raise StudyError(f"tasks.options: {scheme}: sources take no options", [(
            "tasks.options", f"options apply to builtin generators only, not {scheme}:",
            "remove tasks.options")])
    if scheme == "text":
        return text_tasks(rest, spec.count)
    path = Path(rest.strip()).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return read_tasks_jsonl(path, limit=spec.count)
