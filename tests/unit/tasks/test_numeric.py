from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, NumericChecker, make_checker


def test_zero_padded_answer_of_the_tiny_model() -> None:
    c = NumericChecker("168", pick="first")
    r = c.check("0168")
    assert (r.correct, r.extracted) == (True, "0168")
    assert c.check("0168", finish_reason="stop").correct


def test_thousands_separators_signs_decimals() -> None:
    assert NumericChecker("1234").check("1,234").correct
    assert NumericChecker("1234567").check("1,234,567").correct
    assert NumericChecker("-42").check("-42").correct
    assert NumericChecker("-42").check("\u221242").correct  # unicode minus
    assert not NumericChecker("42").check("-42").correct
    assert NumericChecker("42").check("+42").correct
    assert NumericChecker("0.5").check(".5").correct
    assert NumericChecker("1234.5").check("$1,234.50").correct
    assert NumericChecker("1000").check("1e3").correct


def test_list_commas_are_not_thousands() -> None:
    assert NumericChecker("3", pick="last").check("1,2,3").correct
    assert NumericChecker("1", pick="first").check("1,2,3").correct


def test_prose_last_or_first() -> None:
    text = "45 + 123 = 168. So the answer is 168."
    assert NumericChecker("168").check(text).correct
    r = NumericChecker("168").check("The sum of 45 and 123 is 168, not 170.")
    assert (r.correct, r.extracted) == (False, "170")
    assert NumericChecker("168", pick="first").check("168 because 45 + 123").correct


def test_dates_do_not_make_negative_numbers() -> None:
    r = NumericChecker("20", pick="last").check("2024-02-20")
    assert r.correct and r.extracted == "20"


def test_tolerances() -> None:
    assert NumericChecker("3.14159", abs_tol=0.01).check("pi is about 3.14").correct
    assert not NumericChecker("3.14159", abs_tol=0.001).check("3.14").correct
    assert NumericChecker("1000", rel_tol=0.01).check("1,009").correct
    assert not NumericChecker("1000", rel_tol=0.01).check("1,011").correct


def test_big_integers_compare_exactly() -> None:
    big = "123456789012345678901234567890"
    assert NumericChecker(big).check(big).correct
    assert not NumericChecker(big).check(big[:-1] + "1").correct


def test_no_number_is_unparsable_and_truncated_on_length() -> None:
    assert NumericChecker("5").check("I don't know").reason == "unparsable"
    assert NumericChecker("5").check("Let me think", finish_reason="length").reason == "truncated"
    assert NumericChecker("5").check("4", finish_reason="length").reason == "truncated"
    assert NumericChecker("5").check("4").reason == "wrong"


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    for pick in ("first", "last"):
        c = NumericChecker("7", pick=pick, rel_tol=0.1)
        for fr in (None, "length"):
            r = c.check(hostile, finish_reason=fr)
            assert r.reason in REASONS and not r.correct
            assert r.extracted is None or len(r.extracted) <= 500


@pytest.mark.parametrize(("spec", "ref", "field"), [
    ({"type": "numeric", "abs_tol": -1}, "1", "checker.abs_tol"),
    ({"type": "numeric", "rel_tol": "x"}, "1", "checker.rel_tol"),
    ({"type": "numeric", "pick": "middle"}, "1", "checker.pick"),
    ({"type": "numeric"}, "one", "checker.reference"),
    ({"type": "numeric"}, "1 or 2", "checker.reference"),
    ({"type": "numeric", "tolerance": 1}, "1", "checker.tolerance"),
])
def test_bad_specs_name_the_field(spec: dict[str, Any], ref: str, field: str) -> None:
    with pytest.raises(StudyError) as err:
        make_checker(spec, reference=ref)
    assert err.value.problems[0][0] == field
    assert field in str(err.value)
