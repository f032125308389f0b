"""The error hierarchy. Each type carries the CLI exit code it maps to.

Messages say what to do next; the CLI prints them without a traceback.
"""

from __future__ import annotations

Problem = tuple[str, str, str]
"""``(where, what is wrong, what to do)``: a field path or a target, a message and a hint."""


def _with_problems(head: str, problems: list[Problem]) -> str:
    lines = [head]
    for path, msg, hint in problems:
        line = f"  - {path}: {msg}"
        if hint:
            line += f"\n      hint: {hint}"
        lines.append(line)
    return "\n".join(lines)


class AccevalError(Exception):
    """A domain error: a runtime failure unless a subclass says otherwise."""

    exit_code = 1


class UsageError(AccevalError):
    """The command line was wrong."""

    exit_code = 2


class StudyError(AccevalError):
    """The study file (or a file it names) is invalid.

    ``problems`` lists ``(field_path, message, hint)`` triples, one per bad field.
    """

    exit_code = 2

    def __init__(self, message: str, problems: list[Problem] | None = None, *,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []
        # A whole-file error (no field to name) says what to do on a line of its own.
        self.hint = hint

    def __str__(self) -> str:
        text = _with_problems(super().__str__(), self.problems)
        if self.hint and not self.problems:
            text += f"\n  hint: {self.hint}"
        return text


class TargetError(AccevalError):
    """A target could not be reached or set up at all.

    Per-request failures are classified in the records, not raised.
    """


class PreflightError(TargetError):
    """An endpoint did not answer, or did not list its model, before the first load point.

    Exit code 2: nothing was measured, and the fix is in the study or the server.
    ``problems`` lists ``(target, message, hint)`` triples, one per failing target.
    """

    exit_code = 2

    def __init__(self, message: str, problems: list[Problem] | None = None, *,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []
        # A whole-file error (no field to name) says what to do on a line of its own.
        self.hint = hint

    def __str__(self) -> str:
        text = _with_problems(super().__str__(), self.problems)
        if self.hint and not self.problems:
            text += f"\n  hint: {self.hint}"
        return text


class GateFailed(AccevalError):
    """A quality or SLO gate failed and the study asked for a failing exit."""

    exit_code = 3


class MissingExtra(AccevalError):
    """An optional dependency is not installed."""

    exit_code = 2

    def __init__(self, extra: str, module: str) -> None:
        super().__init__(
            f"this feature needs the '{module}' package: pip install 'acceval[{extra}]'"
        )
        self.extra = extra
        self.module = module
