from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, ChoiceChecker, make_checker


@pytest.mark.parametrize("output", [
    "B", "b", "(B)", "[B]", "B)", "B.", "Answer: B", "answer: (B)", "The answer is B.",
    "B) 42", "B. 42\nBecause 40 + 2.", "**B**", "I choose (B) since it is the sum.",
    "The answer is: option B", "A) looks tempting, but the answer is B",
])
def test_accepted_forms(output: str) -> None:
    r = ChoiceChecker("B").check(output)
    assert (r.correct, r.extracted) == (True, "B")


@pytest.mark.parametrize(("output", "reason"), [
    ("C", "wrong"), ("(D) 17", "wrong"), ("Answer: A", "wrong"),
    ("A cat sat on the mat", "unparsable"),  # an article is not an answer
    ("A) 12\nB) 15\nC) 17", "unparsable"),  # options echoed, no pick
    ("I am not sure", "unparsable"),
    ("F", "unparsable"),  # not an option letter
])
def test_rejected_forms(output: str, reason: str) -> None:
    r = ChoiceChecker("B").check(output)
    assert (r.correct, r.reason) == (False, reason)


def test_truncated_and_letters_option() -> None:
    assert ChoiceChecker("B").check("Let me think step", finish_reason="length").reason \
        == "truncated"
    c = ChoiceChecker("B", letters="AB")
    assert c.check("E").reason == "unparsable"
    assert ChoiceChecker("(c)").check("C").correct


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    for fr in (None, "length"):
        r = ChoiceChecker("C").check(hostile, finish_reason=fr)
        assert r.reason in REASONS and not r.correct


@pytest.mark.parametrize(("spec", "ref", "field"), [
    ({"type": "choice"}, "F", "checker.reference"),
    ({"type": "choice"}, "AB", "checker.reference"),
    ({"type": "choice", "letters": "abc"}, "a", "checker.letters"),
    ({"type": "choice", "letters": "AAB"}, "A", "checker.letters"),
])
def test_bad_specs_name_the_field(spec: dict[str, Any], ref: str, field: str) -> None:
    with pytest.raises(StudyError) as err:
        make_checker(spec, reference=ref)
    assert err.value.problems[0][0] == field
