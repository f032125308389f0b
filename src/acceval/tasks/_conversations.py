"""Conversations as tasks: ShareGPT files and OpenAI-messages JSONL, the peers' chat data.

Accepted, as a JSON array or one object per line (JSONL):

- ShareGPT: ``{"id": ..., "conversations": [{"from": "human", "value": "..."}, {"from":
  "gpt", ...}]}`` (``human``/``user``, ``gpt``/``assistant``/``chatgpt``/``bing``/``bard``,
  ``system``);
- OpenAI messages: ``{"id": ..., "messages": [{"role": "user", "content": "..."}, ...]}``.

A conversation becomes one unchecked task: its system message and first user message. With
``multi_turn`` its later user messages become the task's turns, each sent with the history
and the target's own earlier answers (the file's answers are not sent). Without it, and with a
tokenizer, the task asks for as many tokens as the file's first answer had (vLLM bench's
ShareGPT sampling). A conversation without a user message is skipped; a file with none left
is an error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acceval.errors import StudyError
from acceval.input_files import read_text
from acceval.tasks._synthetic import TextTokenizer
from acceval.tasks._task import Task

#: A conversation file may be larger than a task file: ShareGPT's V3 split is 642 MB.
CONVERSATIONS_MAX_BYTES = 2 * 2**30
_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
          "chatgpt": "assistant", "bing": "assistant", "bard": "assistant", "model": "assistant",
          "system": "system"}


def _objects(text: str, name: str) -> Iterator[tuple[str, Any]]:
    """(where, object) of a JSON array file or of each JSONL line."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise StudyError(f"{name}: not valid JSON ({exc})", [
                ("tasks.source", f"{name} is not a JSON array", "a ShareGPT file is a JSON "
                 "array of conversations; JSONL holds one per line")]) from None
        for i, obj in enumerate(data):
            yield f"{name}[{i}]", obj
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{name}:{lineno}", json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise StudyError(f"{name}:{lineno}: not valid JSON ({exc})", [
                ("tasks.source", f"{name}:{lineno} is not a JSON object",
                 "one conversation per line")]) from None


def _turns(obj: Any, where: str) -> list[tuple[str, str]]:
    """The (role, text) messages of one conversation object."""
    if not isinstance(obj, dict):
        raise StudyError(f"{where}: not a conversation", [
            (where, "expected an object with `conversations` or `messages`", "")])
    raw, role_key, text_key = obj.get("conversations"), "from", "value"
    if raw is None:
        raw, role_key, text_key = obj.get("messages"), "role", "content"
    if not isinstance(raw, list):
        raise StudyError(f"{where}: not a conversation", [
            (where, "expected `conversations` (ShareGPT) or `messages` (OpenAI) as a list", "")])
    out = []
    for j, m in enumerate(raw):
        role = _ROLES.get(str(m.get(role_key, "")).lower()) if isinstance(m, dict) else None
        text = m.get(text_key) if isinstance(m, dict) else None
        if role is None or not isinstance(text, str):
            raise StudyError(f"{where}: message {j} is not a turn", [
                (f"{where}.{role_key}[{j}]", f"expected {{{role_key!r}: human|gpt|system|user|"
                 f"assistant, {text_key!r}: text}}", "")])
        out.append((role, text))
    return out


def _task(obj: Any, turns: list[tuple[str, str]], index: int, *, multi_turn: bool,
          tok: TextTokenizer | None) -> Task | None:
    users = [k for k, (role, _) in enumerate(turns) if role == "user"]
    if not users:
        return None
    first = users[0]
    head = (*tuple(m for m in turns[:first] if m[0] == "system"), turns[first])
    later = tuple(turns[k][1] for k in users[1:]) if multi_turn else ()
    max_tokens = None
    answer = next((t for r, t in turns[first + 1:] if r == "assistant"), None)
    if tok is not None and answer and not multi_turn:
        max_tokens = max(1, tok.count(answer))
    raw_id = obj.get("id") if isinstance(obj, dict) else None
    task_id = str(raw_id) if isinstance(raw_id, str | int) and str(raw_id) else f"conv-{index}"
    return Task(id=task_id, prompt=turns[first][1], messages=head, reference="", checker=None,
                meta={"turns": 1 + len(later)}, max_tokens=max_tokens, turns=later)


def read_conversations(path: Path, *, limit: int, multi_turn: bool,
                       tok: TextTokenizer | None) -> list[Task]:
    """The first ``limit`` usable conversations of ``path`` as tasks (ids made unique)."""
    text = read_text(path, max_bytes=CONVERSATIONS_MAX_BYTES, where="tasks.source",
                     what="conversation file")
    tasks: list[Task] = []
    seen: set[str] = set()
    for index, (where, obj) in enumerate(_objects(text, path.name)):
        task = _task(obj, _turns(obj, where), index, multi_turn=multi_turn, tok=tok)
        if task is None:
            continue
        if task.id in seen:  # ShareGPT splits long conversations under one id
            task = dataclasses.replace(task, id=f"{task.id}#{index}")
        seen.add(task.id)
        tasks.append(task)
        if len(tasks) >= limit:
            break
    if not tasks:
        raise StudyError(f"{path}: no conversation with a user message", [
            ("tasks.source", f"{path.name} holds no conversation to send",
             "each conversation needs a human (ShareGPT) or user (OpenAI) message")])
    return tasks
