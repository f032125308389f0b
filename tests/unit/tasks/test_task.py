from __future__ import annotations

import pytest

from acceval.errors import StudyError
from acceval.loadgen.protocol import Prompt
from acceval.tasks import CheckResult, NumericChecker, Task, score, to_prompt

TASK = Task(id="t1", prompt="2+2=", messages=(("user", "2+2="),), reference="4",
            checker=NumericChecker("4"))


def test_to_prompt_picks_the_form_for_the_api() -> None:
    assert to_prompt(TASK, api="completions", max_tokens=8) == Prompt(
        task_id="t1", prompt="2+2=", messages=None, max_tokens=8)
    assert to_prompt(TASK, api="chat", max_tokens=16) == Prompt(
        task_id="t1", prompt=None, messages=(("user", "2+2="),), max_tokens=16)


def test_chat_only_task_cannot_go_to_completions() -> None:
    chat = Task(id="c", prompt=None, messages=(("system", "Be terse."), ("user", "Hi")),
                reference="")
    assert to_prompt(chat, api="chat", max_tokens=4).messages == chat.messages
    with pytest.raises(StudyError, match=r"endpoint\.api"):
        to_prompt(chat, api="completions", max_tokens=4)


def test_score_errors_and_load_only_tasks() -> None:
    assert score(TASK, "4", "stop", None) == CheckResult(True, "correct", "4")
    assert score(TASK, "4", "stop", "timeout") == CheckResult(False, "error", None)
    assert score(TASK, None, None, "connect") == CheckResult(False, "error", None)
    assert score(TASK, "5", "length", None) == CheckResult(False, "truncated", "5")
    unchecked = Task(id="x", prompt="hello", messages=(("user", "hello"),), reference="")
    assert score(unchecked, "anything", "stop", None) is None


class _Raises:
    def check(self, output: str | None, *, finish_reason: str | None = None) -> CheckResult:
        raise RuntimeError("plugin bug")


class _ReturnsJunk:
    def check(self, output: str | None, *, finish_reason: str | None = None) -> CheckResult:
        return "yes"  # type: ignore[return-value]


@pytest.mark.parametrize("checker", [_Raises(), _ReturnsJunk()])
def test_a_misbehaving_plugin_becomes_an_error_result(checker: object) -> None:
    task = Task(id="p", prompt="q", messages=(("user", "q"),), reference="a",
                checker=checker)  # type: ignore[arg-type]
    assert score(task, "a", "stop", None) == CheckResult(False, "error", None)


def test_task_is_frozen_and_hashable() -> None:
    with pytest.raises(AttributeError):
        TASK.id = "other"  # type: ignore[misc]
    assert hash(TASK) == hash(Task(id="t1", prompt="2+2=", messages=(("user", "2+2="),),
                                   reference="4", checker=NumericChecker("4")))
