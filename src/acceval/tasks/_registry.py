"""Checker specs → checkers, through the ``acceval.checkers`` entry-point group.

A spec is a mapping such as ``{"type": "numeric", "abs_tol": 0.01}`` or
``{"type": "plugin", "name": "my-checker", ...}``. The factory registered under the name is
called as ``factory(reference, **options)`` with the spec's other keys as options. Built-ins
register through the same group, and lookup goes through :mod:`acceval.plugins` like every
other plugin kind.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from acceval.errors import StudyError
from acceval.plugins import PluginError, installed, load_plugin, unknown
from acceval.tasks._checkers import (
    CheckerOptionError,
    ChoiceChecker,
    ContainsChecker,
    ExactChecker,
    NumericChecker,
    RegexChecker,
)
from acceval.tasks._json_checker import JsonChecker
from acceval.tasks._task import Checker

CheckerFactory = Callable[..., Checker]
ENTRY_POINT_GROUP = "acceval.checkers"

BUILTIN_CHECKERS: Mapping[str, CheckerFactory] = {
    "exact": ExactChecker,
    "numeric": NumericChecker,
    "regex": RegexChecker,
    "contains": ContainsChecker,
    "choice": ChoiceChecker,
    "json": JsonChecker,
}

Problem = tuple[str, str, str]  # (field path, message, hint), as StudyError.problems


class SpecProblems(Exception):
    """Internal: problems found in one spec, with paths relative to the spec."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems)
        self.problems = problems


def checker_names() -> list[str]:
    """Every checker type that ``make_checker`` can build here."""
    return installed(ENTRY_POINT_GROUP)


def _resolve(name: str, registry: Mapping[str, CheckerFactory] | None) -> CheckerFactory:
    """The factory for ``name``; raises :class:`PluginError` when there is none."""
    if registry is not None:
        if name not in registry:
            raise unknown(ENTRY_POINT_GROUP, name, sorted(registry))
        return registry[name]
    factory: CheckerFactory = load_plugin(ENTRY_POINT_GROUP, name)
    return factory


def _allowed_options(factory: CheckerFactory) -> list[str] | None:
    """Option names the factory accepts, or None when it takes ``**options``."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params[1:] if not p.name.startswith("_")
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def build_checker(
    spec: Any, reference: str | None, registry: Mapping[str, CheckerFactory] | None = None
) -> Checker:
    """Build one checker or raise :class:`SpecProblems` (paths relative to the spec)."""
    if not isinstance(spec, Mapping):
        raise SpecProblems([("", f"expected a mapping like {{type: exact}}, got {spec!r}", "")])
    opts = dict(spec)
    kind = opts.pop("type", None)
    known = sorted(registry) if registry is not None else checker_names()
    if not isinstance(kind, str) or not kind:
        raise SpecProblems([("type", "missing checker type", f"one of: {', '.join(known)}")])
    name_field = "type"
    if kind == "plugin":
        kind, name_field = opts.pop("name", None), "name"
        if not isinstance(kind, str) or not kind:
            raise SpecProblems([("name", "a plugin checker needs `name`",
                                 f"installed checkers: {', '.join(known)}")])
    try:
        factory = _resolve(kind, registry)
    except PluginError as exc:
        raise SpecProblems([(name_field, exc.headline, exc.hint)]) from None
    allowed = _allowed_options(factory)
    if allowed is not None:
        bad = [k for k in opts if k not in allowed]
        if bad:
            raise SpecProblems([
                (str(k), f"unknown option for checker '{kind}'",
                 f"allowed: {', '.join(allowed) or '(none)'}") for k in bad])
    try:
        return factory(reference, **opts)
    except CheckerOptionError as exc:
        raise SpecProblems([(exc.option, exc.message, "see docs/tasks.md")]) from None
    except (TypeError, ValueError) as exc:
        raise SpecProblems([("", f"checker '{kind}' rejected its options: {exc}", "")]) from None


def make_checker(
    spec: Mapping[str, Any],
    *,
    reference: str | None = None,
    registry: Mapping[str, CheckerFactory] | None = None,
    where: str = "checker",
) -> Checker:
    """Build a checker from its spec, bound to ``reference`` (the task's answer).

    ``registry`` replaces entry-point discovery (a seam for tests and embedders). Bad specs
    raise :class:`StudyError` whose problems name ``<where>.<field>``.
    """
    try:
        return build_checker(spec, reference, registry)
    except SpecProblems as exc:
        problems = [(join_path(where, p), m, h) for p, m, h in exc.problems]
        raise StudyError(f"{where}: invalid checker", problems) from None


def join_path(prefix: str, suffix: str) -> str:
    if not suffix:
        return prefix
    return f"{prefix}.{suffix}" if prefix else suffix
