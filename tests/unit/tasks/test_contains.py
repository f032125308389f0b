from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, ContainsChecker, make_checker


def test_substring_anywhere() -> None:
    c = ContainsChecker("Mount Everest")
    r = c.check("The highest mountain is Mount\n Everest, in Nepal.")
    assert (r.correct, r.extracted) == (True, "Mount Everest")
    assert c.check("K2").reason == "wrong"
    assert c.check("K2", finish_reason="length").reason == "truncated"


def test_casefold() -> None:
    assert not ContainsChecker("everest").check("EVEREST").correct
    assert ContainsChecker("everest", casefold=True).check("EVEREST!").correct


def test_needle_in_a_megabyte() -> None:
    assert ContainsChecker("needle").check("hay " * 250_000 + "needle").correct


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    r = ContainsChecker("zebra", casefold=True).check(hostile)
    assert r.reason in REASONS and not r.correct


def test_empty_reference_is_rejected() -> None:
    with pytest.raises(StudyError) as err:
        make_checker({"type": "contains"}, reference="")
    assert err.value.problems[0][0] == "checker.reference"
