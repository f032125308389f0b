from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, RegexChecker, make_checker


def test_group_one_then_exact() -> None:
    c = RegexChecker("Paris", pattern=r"City:\s*(\w+)")
    assert c.check("Reasoning... City: Paris").correct
    assert c.check("City: Lyon").reason == "wrong"
    assert c.check("no city here").reason == "unparsable"
    assert c.check("no city", finish_reason="length").reason == "truncated"


def test_named_group_and_last_match() -> None:
    c = RegexChecker("2024-03-08", pattern=r"(?P<answer>\d{4}-\d{2}-\d{2})", match="last")
    assert c.check("17 days after 2024-02-20 is 2024-03-08.").correct
    first = RegexChecker("2024-03-08", pattern=r"(?P<answer>\d{4}-\d{2}-\d{2})")
    assert not first.check("17 days after 2024-02-20 is 2024-03-08.").correct


def test_numeric_compare_with_tolerance() -> None:
    c = RegexChecker("1234", pattern=r"total[^0-9]*([\d,.]+)", compare="numeric", abs_tol=0.5)
    assert c.check("The total is 1,234.2 USD").correct
    assert not c.check("The total is 1,236 USD").correct


def test_inline_flags_and_casefold() -> None:
    c = RegexChecker("yes", pattern=r"(?i)final:\s*(\w+)", casefold=True)
    assert c.check("FINAL: YES").correct


def test_pattern_without_groups_uses_whole_match() -> None:
    assert RegexChecker("42", pattern=r"\d+").check("it is 42").correct


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    for compare in ("exact", "numeric"):
        c = RegexChecker("5", pattern=r"answer:\s*(\S+)", compare=compare, match="last")
        r = c.check(hostile, finish_reason="length")
        assert r.reason in REASONS and not r.correct


@pytest.mark.parametrize(("spec", "field"), [
    ({"type": "regex"}, "checker.pattern"),
    ({"type": "regex", "pattern": "(unclosed"}, "checker.pattern"),
    ({"type": "regex", "pattern": "(x)", "compare": "fuzzy"}, "checker.compare"),
    ({"type": "regex", "pattern": "(x)", "match": "all"}, "checker.match"),
])
def test_bad_specs_name_the_field(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(StudyError) as err:
        make_checker(spec, reference="x")
    assert err.value.problems[0][0] == field
