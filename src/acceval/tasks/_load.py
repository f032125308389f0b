"""The study's ``tasks`` section → the task list: built-in generators, JSONL files, fixed text."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
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
    return _draw(spec, base_dir=base_dir, seed=spec.seed, limit=spec.count)


def _scheme(spec: Tasks) -> tuple[str, str]:
    scheme, sep, rest = spec.source.partition(":")
    if spec.source.strip() == "synthetic":
        return "synthetic", "-"
    if not sep or scheme not in SOURCES or not rest:
        raise StudyError("tasks.source: not a task source", [(
            "tasks.source", f"cannot read {spec.source!r}",
            "use builtin:NAME, jsonl:PATH, text:PROMPT, synthetic, sharegpt:PATH or "
            "mooncake:PATH; generators: " + ", ".join(generator_names()))])
    return scheme, rest


def _draw(spec: Tasks, *, base_dir: Path, seed: int, limit: int | None) -> list[Task]:
    """The source's tasks: ``limit`` of them (None: every task of a file), drawn with
    ``seed`` where the source is generated."""
    scheme, rest = _scheme(spec)
    count = spec.count if limit is None else limit
    if scheme == "builtin":
        return generate(rest.strip(), count=count, seed=seed, options=spec.options)
    if spec.options:
        raise StudyError(f"tasks.options: {scheme}: sources take no options", [(
            "tasks.options", f"options apply to builtin generators only, not {scheme}:",
            "remove tasks.options")])
    if scheme == "text":
        return text_tasks(rest, count)
    tok = load_tokenizer(spec.tokenizer, base_dir) if spec.tokenizer is not None else None
    if scheme == "synthetic":
        assert spec.synthetic is not None and tok is not None  # the spec checks both
        return synthetic_tasks(spec.synthetic, tok, count=count, seed=seed)
    path = Path(rest.strip()).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if scheme == "sharegpt":
        return read_conversations(path, limit=limit if limit is not None else 1 << 62,
                                  multi_turn=spec.multi_turn, tok=tok)
    if scheme == "mooncake":
        assert tok is not None
        return read_trace(path, limit=count, tok=tok, seed=seed)
    return read_tasks_jsonl(path, limit=limit)


#: Sources whose tasks are drawn with a seed: a fresh set is a new draw.
_GENERATED = frozenset({"builtin", "synthetic", "mooncake"})
#: Sources read from a file: a fresh set is the file's next ``count`` tasks.
_FILES = frozenset({"jsonl", "sharegpt"})


class TaskSets:
    """The tasks each load point sends (``tasks.per_point``).

    Point ``i`` of every target sends set :meth:`set_of` (i), so targets are compared on the
    same tasks point by point. Set 0 is the study's own tasks (:func:`load_tasks`). With
    ``same`` every point sends set 0. With ``fresh`` (the default) a generated source draws
    set ``k`` with a seed of its own and task ids ending ``@k``; a file gives set ``k`` its
    ``k``-th run of ``count`` tasks and wraps around when the file runs out (said in
    :attr:`note`, and visible in each point's ``task_set``); ``text:`` has one prompt only.
    A new set is handed to ``on_new`` before any point sends it (the scorer learns its
    answers, a mock server its references).
    """

    def __init__(self, spec: Tasks, *, base_dir: Path, first: list[Task] | None = None,
                 on_new: Callable[[list[Task]], None] | None = None) -> None:
        self.spec = spec
        self.base_dir = base_dir
        self.on_new = on_new
        first = first if first is not None else load_tasks(spec, base_dir=base_dir)
        self._sets: dict[int, list[Task]] = {0: first}
        scheme, _ = _scheme(spec)
        self.scheme = scheme
        self.n_sets: int | None = None          # None: as many as there are points
        self.note: str | None = None
        if spec.per_point == "same":
            self.n_sets = 1
        elif scheme == "text":
            self.n_sets = 1
            self.note = "text: is one fixed prompt: every point sends it"
        elif scheme in _FILES:
            pool = _draw(spec, base_dir=base_dir, seed=spec.seed, limit=None)
            self.n_sets = max(1, len(pool) // max(1, len(first)))
            for k in range(1, self.n_sets):
                self._sets[k] = pool[k * len(first):(k + 1) * len(first)]
            if self.n_sets == 1:
                self.note = (f"the file holds {len(pool)} tasks, not two sets of "
                             f"{len(first)}: every point sends the same tasks")
            else:
                self.note = (f"the file holds {self.n_sets} sets of {len(first)} tasks: a "
                             f"point after the first {self.n_sets} sends an earlier one's")

    @property
    def fresh(self) -> bool:
        return self.n_sets != 1

    def set_of(self, index: int) -> int:
        """The task set load point ``index`` sends."""
        return index if self.n_sets is None else index % self.n_sets

    def tasks(self, index: int) -> list[Task]:
        """The tasks load point ``index`` sends (drawn on first use)."""
        k = self.set_of(index)
        got = self._sets.get(k)
        if got is None:
            seed = int(np.random.SeedSequence([self.spec.seed, _TASK_SET_SLOT, k])
                       .generate_state(1)[0])
            drawn = _draw(self.spec, base_dir=self.base_dir, seed=seed,
                          limit=len(self._sets[0]))
            got = [dataclasses.replace(t, id=f"{t.id}@{k}") for t in drawn]
            self._sets[k] = got
            if self.on_new is not None:
                self.on_new(got)
        return got

    def known(self) -> list[Task]:
        """Every task of the sets drawn or read so far, set by set."""
        return [t for k in sorted(self._sets) for t in self._sets[k]]


#: Keeps the task sets' seeds apart from the study's other seeded draws.
_TASK_SET_SLOT = 0x7A5C
