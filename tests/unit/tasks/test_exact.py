from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, CheckerOptionError, ExactChecker, make_checker


def test_default_normalisation_trims_and_collapses_whitespace() -> None:
    c = ExactChecker("New  York")
    assert c.check("  New York \n").correct
    assert c.check("New\t\tYork").correct
    assert not c.check("new york").correct
    assert c.check("New York City").reason == "wrong"


def test_casefold_and_punctuation_options() -> None:
    assert ExactChecker("Paris", casefold=True).check("PARIS").correct
    assert ExactChecker("Paris", strip_punctuation=True).check('"Paris."').correct
    assert not ExactChecker("Paris").check("Paris.").correct
    assert ExactChecker("USA", remove_punctuation=True).check("U.S.A.").correct


def test_strip_punctuation_keeps_signs() -> None:
    assert ExactChecker("-3, 5", strip_punctuation=True).check("-3, 5.").correct
    assert not ExactChecker("-3, 5", strip_punctuation=True).check("3, 5").correct


def test_ignore_whitespace_and_first_line() -> None:
    assert ExactChecker("1, 2, 3", ignore_whitespace=True).check("1,2,3").correct
    c = ExactChecker("42", first_line=True)
    assert c.check("42\nBecause six times seven.").correct
    assert not ExactChecker("42").check("42\nBecause").correct


def test_unicode_is_compared_as_text() -> None:
    assert ExactChecker("Straße", casefold=True).check("STRASSE").correct
    assert ExactChecker("中文").check(" 中文 ").correct


def test_punctuation_only_output_is_unparsable() -> None:
    assert ExactChecker("a", strip_punctuation=True).check("...").reason == "unparsable"


def test_truncated_wrong_answer() -> None:
    r = ExactChecker("yes").check("Well, let me think about", finish_reason="length")
    assert (r.correct, r.reason) == (False, "truncated")
    assert ExactChecker("yes").check("yes", finish_reason="length").correct


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    c = ExactChecker("the answer", casefold=True, strip_punctuation=True)
    for fr in (None, "stop", "length"):
        r = c.check(hostile, finish_reason=fr)
        assert r.reason in REASONS and not r.correct
        assert r.extracted is None or len(r.extracted) <= 500


def test_bad_options_name_the_option() -> None:
    with pytest.raises(CheckerOptionError) as exc:
        ExactChecker("x", casefold="yes")  # type: ignore[arg-type]
    assert exc.value.option == "casefold"
    with pytest.raises(StudyError) as err:
        make_checker({"type": "exact"}, reference="  ")
    assert err.value.problems[0][0] == "checker.reference"
