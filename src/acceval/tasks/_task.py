"""The task, the check result, the checker protocol, and the two joins to the rest of the run:
``to_prompt`` (task → what the load generator sends) and ``score`` (what came back → correct?).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from acceval.errors import StudyError
from acceval.loadgen.protocol import Prompt

Reason = Literal["correct", "wrong", "unparsable", "empty", "truncated", "error"]
REASONS: tuple[Reason, ...] = ("correct", "wrong", "unparsable", "empty", "truncated", "error")

# Records keep the extracted answer for reports; a runaway output must not bloat them.
EXTRACTED_MAX_CHARS = 500


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on one output. ``extracted`` is the answer the checker read, if any."""

    correct: bool
    reason: Reason
    extracted: str | None = None


@runtime_checkable
class Checker(Protocol):
    """Judges one output against the answer the checker was built with.

    ``check`` never raises: odd output (None, empty, huge, binary junk) becomes a reason.
    """

    def check(self, output: str | None, *, finish_reason: str | None = None) -> CheckResult: ...


@dataclass(frozen=True, slots=True)
class Task:
    """One question with its verifiable answer.

    ``prompt`` is the completion text (None for a chat-only task); ``messages`` the chat form.
    ``checker`` is None for load-only tasks (``text:``, ``synthetic``, conversation and trace
    sources): their ``correct`` stays None. ``max_tokens`` (None: the study's) and
    ``ignore_eos`` set the requested output length of synthetic and trace tasks; ``turns`` are
    a conversation's later user messages; ``at_ms`` a trace's send time.
    """

    id: str
    prompt: str | None
    messages: tuple[tuple[str, str], ...]
    reference: str
    checker: Checker | None = field(default=None, hash=False)
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    max_tokens: int | None = None
    ignore_eos: bool = False
    turns: tuple[str, ...] = ()
    at_ms: float | None = None


def to_prompt(task: Task, *, api: Literal["chat", "completions"], max_tokens: int) -> Prompt:
    """What the load generator sends for ``task`` to an endpoint speaking ``api``
    (``max_tokens``: the study's, unless the task asks for its own output length)."""
    extra: dict[str, Any] = {
        "max_tokens": task.max_tokens or max_tokens, "ignore_eos": task.ignore_eos,
        "turns": task.turns,
        "at_ns": None if task.at_ms is None else round(task.at_ms * 1_000_000)}
    if api == "chat":
        messages = task.messages or ((("user", task.prompt),) if task.prompt is not None else ())
        if not messages:
            raise StudyError(f"task {task.id!r} has neither a prompt nor chat messages")
        return Prompt(task_id=task.id, messages=messages, **extra)
    if api == "completions":
        if task.prompt is None:
            raise StudyError(
                f"task {task.id!r} has only chat messages, so it cannot be sent to a completions "
                "endpoint; set the target's endpoint.api to 'chat' or give the task a 'prompt'"
            )
        return Prompt(task_id=task.id, prompt=task.prompt, **extra)
    raise StudyError(f"unknown api {api!r}; use 'chat' or 'completions'")


def score(
    task: Task,
    output_text: str | None,
    finish_reason: str | None,
    error_kind: str | None,
) -> CheckResult | None:
    """Judge one response. None when the task has no checker (load-only tasks).

    A failed request (any ``error_kind``: timeout, cut stream, HTTP error...) is never correct,
    even when some text arrived: its reason is "error".
    """
    if task.checker is None:
        return None
    if error_kind is not None:
        return CheckResult(False, "error", None)
    try:
        result = task.checker.check(output_text, finish_reason=finish_reason)
    except Exception:
        # A plugin broke its promise never to raise; one bad check must not stop a run.
        return CheckResult(False, "error", None)
    if not isinstance(result, CheckResult):
        return CheckResult(False, "error", None)
    return result
