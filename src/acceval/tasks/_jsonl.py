"""Your own tasks from a JSONL file, and the answers file the mock server reads.

One task per line::

    {"id": "q1", "prompt": "2+2=", "reference": "4", "checker": {"type": "numeric"}}

Every line is validated; problems are collected (up to ``MAX_PROBLEMS``) and raised together as
one :class:`StudyError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from acceval.errors import StudyError
from acceval.input_files import JSONL_MAX_BYTES, read_text
from acceval.tasks._registry import CheckerFactory, Problem, SpecProblems, build_checker, join_path
from acceval.tasks._task import Task

MAX_PROBLEMS = 20
_KEYS = ("id", "prompt", "messages", "reference", "checker", "meta")


def _messages(raw: Any) -> tuple[tuple[str, str], ...]:
    """[{"role", "content"}, ...] or [[role, content], ...] → pairs; ValueError says what's off."""
    if not isinstance(raw, list) or not raw:
        raise ValueError("expected a non-empty list of {role, content} objects")
    out = []
    for j, m in enumerate(raw):
        if isinstance(m, Mapping) and set(m) == {"role", "content"}:
            role, content = m["role"], m["content"]
        elif isinstance(m, list) and len(m) == 2:
            role, content = m
        else:
            raise ValueError(f"[{j}]: expected {{\"role\": ..., \"content\": ...}}")
        if not isinstance(role, str) or not role or not isinstance(content, str):
            raise ValueError(f"[{j}]: role must be a non-empty string and content a string")
        out.append((role, content))
    return tuple(out)


def _reference(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool) or raw is None:
        raise ValueError("expected a string (or a number, or a JSON object for the json checker)")
    if isinstance(raw, int | float):
        return str(raw)
    if isinstance(raw, dict | list):
        return json.dumps(raw, sort_keys=True)
    raise ValueError("expected a string")


def _task_of(
    data: Any, default_id: str, registry: Mapping[str, CheckerFactory] | None
) -> tuple[Task | None, list[Problem]]:
    """One line's task, or the problems (paths relative to the line)."""
    if not isinstance(data, dict):
        return None, [("", "each line must be a JSON object", "")]
    problems: list[Problem] = [
        (str(k), "unknown field", f"allowed: {', '.join(_KEYS)}") for k in data if k not in _KEYS]
    task_id = data.get("id", default_id)
    if not isinstance(task_id, str | int) or isinstance(task_id, bool) or str(task_id) == "":
        problems.append(("id", "expected a non-empty string", ""))
    prompt = data.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        problems.append(("prompt", "expected a string", ""))
    messages: tuple[tuple[str, str], ...] = ()
    if "messages" in data:
        try:
            messages = _messages(data["messages"])
        except ValueError as exc:
            problems.append(("messages", str(exc), ""))
    elif prompt is None:
        problems.append(("prompt", "give `prompt` (text) or `messages` (chat)", ""))
    reference, reference_ok = "", True
    if "reference" in data:
        try:
            reference = _reference(data["reference"])
        except ValueError as exc:
            problems.append(("reference", str(exc), ""))
            reference_ok = False
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        problems.append(("meta", "expected an object", ""))
    checker = None
    if "checker" not in data:
        problems.append(("checker", "missing", 'give a checker, e.g. {"type": "exact"}, '
                                               "or null for a load-only task"))
    elif data["checker"] is not None and reference_ok:
        try:
            checker = build_checker(data["checker"], reference or None, registry)
        except SpecProblems as exc:
            problems += [(join_path("checker", p), m, h) for p, m, h in exc.problems]
    if problems:
        return None, problems
    if not messages and isinstance(prompt, str):
        messages = (("user", prompt),)
    return Task(id=str(task_id), prompt=prompt if isinstance(prompt, str) else None,
                messages=messages, reference=reference, checker=checker, meta=meta), []


def read_tasks_jsonl(
    path: Path, *, limit: int | None = None, registry: Mapping[str, CheckerFactory] | None = None
) -> list[Task]:
    """Every task of a JSONL file (the first ``limit`` if given); blank lines are skipped.

    The whole file is validated even when ``limit`` takes fewer tasks: a broken line is a
    broken task set, wherever it sits.
    """
    text = read_text(path, max_bytes=JSONL_MAX_BYTES, where="tasks.source", what="task file")
    tasks: list[Task] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    total = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{lineno}"
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            found: list[Problem] = [("", f"not valid JSON ({exc})", "one JSON object per line")]
            task = None
        else:
            task, found = _task_of(data, f"{path.stem}-{lineno}", registry)
        if task is not None:
            if task.id in seen:
                found = [("id", f"duplicate id {task.id!r} (first on line {seen[task.id]})", "")]
            else:
                seen[task.id] = lineno
                tasks.append(task)
        for p, m, h in found:
            total += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append((f"{where}" + (f":{p}" if p else ""), m, h))
    if total > len(problems):
        problems.append((path.name, f"... and {total - len(problems)} more not shown", ""))
    if problems:
        raise StudyError(f"{path}: {total} problem(s) in the task file", problems)
    if not tasks:
        raise StudyError(f"{path}: the task file has no tasks")
    return tasks if limit is None else tasks[:limit]


def _message_dicts(task: Task) -> list[dict[str, str]]:
    return [{"role": r, "content": c} for r, c in task.messages]


def write_answers_jsonl(tasks: Iterable[Task], path: Path, *, append: bool = False) -> None:
    """Write ``{"id", "prompt", "messages", "reference"}`` per task, for the mock server
    (``append``: after what the file holds).

    ``messages`` uses the OpenAI wire form ``[{"role", "content"}]`` so a server can match the
    request body it receives.
    """
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(json.dumps({"id": t.id, "prompt": t.prompt, "messages": _message_dicts(t),
                                 "reference": t.reference}, ensure_ascii=False) + "\n")
