from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import (
    BUILTIN_CHECKERS,
    ENTRY_POINT_GROUP,
    CheckerFactory,
    CheckerOptionError,
    CheckResult,
    ExactChecker,
    NumericChecker,
    checker_names,
    make_checker,
)


@dataclass(frozen=True)
class Palindrome:
    """A plugin-style checker: correct when the output reads the same backwards."""

    reference: str | None
    ignore_case: bool = False

    def check(self, output: str | None, *, finish_reason: str | None = None) -> CheckResult:
        text = (output or "").strip()
        if self.ignore_case:
            text = text.lower()
        ok = bool(text) and text == text[::-1]
        return CheckResult(ok, "correct" if ok else "wrong", text[:50] or None)


def strict_factory(reference: str | None, *, min_len: int = 1) -> Palindrome:
    if min_len < 1:
        raise CheckerOptionError("min_len", "must be >= 1")
    return Palindrome(reference)


def test_builtins_are_discoverable_through_the_entry_point_group() -> None:
    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert set(BUILTIN_CHECKERS) <= set(eps)
    for name, cls in BUILTIN_CHECKERS.items():
        assert eps[name].load() is cls
    assert set(BUILTIN_CHECKERS) <= set(checker_names())


def test_make_checker_builds_builtins_bound_to_the_reference() -> None:
    c = make_checker({"type": "numeric", "abs_tol": 0.5}, reference="10")
    assert isinstance(c, NumericChecker)
    assert c.check("10.4").correct and not c.check("10.6").correct
    assert isinstance(make_checker({"type": "plugin", "name": "exact"}, reference="a"),
                      ExactChecker)


def test_plugin_through_an_injected_registry() -> None:
    reg: dict[str, CheckerFactory] = {"palindrome": Palindrome, "strict": strict_factory}
    c = make_checker({"type": "plugin", "name": "palindrome", "ignore_case": True},
                     registry=reg)
    assert c.check("Level").correct and not c.check("levels").correct
    c2 = make_checker({"type": "palindrome"}, registry=reg)
    assert c2.check("abba").correct


def test_plugin_errors_name_the_field() -> None:
    reg: dict[str, CheckerFactory] = {"palindrome": Palindrome, "strict": strict_factory}
    with pytest.raises(StudyError) as err:
        make_checker({"type": "plugin", "name": "palindrom"}, registry=reg)
    path, msg, hint = err.value.problems[0]
    assert path == "checker.name" and "palindrom" in msg and "palindrome" in hint
    with pytest.raises(StudyError) as err:
        make_checker({"type": "plugin", "name": "palindrome", "ignore_kase": True}, registry=reg)
    assert err.value.problems[0][0] == "checker.ignore_kase"
    assert "ignore_case" in err.value.problems[0][2]
    with pytest.raises(StudyError) as err:
        make_checker({"type": "strict", "min_len": 0}, registry=reg)
    assert err.value.problems[0][0] == "checker.min_len"
    with pytest.raises(StudyError) as err:
        make_checker({"type": "plugin"}, registry=reg)
    assert err.value.problems[0][0] == "checker.name"


@pytest.mark.parametrize(("spec", "field"), [
    ({}, "checker.type"),
    ({"type": 3}, "checker.type"),
    ({"type": "exakt"}, "checker.type"),
    ({"type": "exact", "casefold": True, "bogus": 1, "other": 2}, "checker.bogus"),
])
def test_bad_specs(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(StudyError) as err:
        make_checker(spec, reference="x", where="tasks.checker")
    assert err.value.problems[0][0] == field.replace("checker", "tasks.checker", 1)
    assert err.value.exit_code == 2


def test_unknown_type_suggests_the_closest() -> None:
    with pytest.raises(StudyError) as err:
        make_checker({"type": "exakt"}, reference="x")
    assert "did you mean 'exact'" in err.value.problems[0][2]


def test_every_unknown_option_is_reported() -> None:
    with pytest.raises(StudyError) as err:
        make_checker({"type": "exact", "bogus": 1, "other": 2}, reference="x")
    assert [p[0] for p in err.value.problems] == ["checker.bogus", "checker.other"]


def test_spec_must_be_a_mapping() -> None:
    with pytest.raises(StudyError, match="expected a mapping"):
        make_checker("exact", reference="x")  # type: ignore[arg-type]
