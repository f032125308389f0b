from __future__ import annotations

import json
from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import REASONS, JsonChecker, make_checker

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
REF = json.dumps({"name": "Ana", "age": 34})


def test_bare_fenced_and_prose_wrapped() -> None:
    c = JsonChecker(REF, schema=SCHEMA)
    assert c.check('{"name": "Ana", "age": 34}').correct
    assert c.check('Sure!\n```json\n{"age": 34, "name": "Ana"}\n```\nAnything else?').correct
    r = c.check('Here: {"name": "Ana", "age": 34} and {"name": "Bo"} trailing text')
    assert r.correct and r.extracted == '{"name": "Ana", "age": 34}'
    assert c.check('I think {braces} are fun. {"name": "Ana", "age": 34}').correct


def test_wrong_value_schema_violation_and_no_json() -> None:
    c = JsonChecker(REF, schema=SCHEMA)
    assert c.check('{"name": "Ana", "age": 35}').reason == "wrong"
    assert c.check('{"name": "Ana", "age": "34"}').reason == "unparsable"  # schema: integer
    assert c.check("no json here").reason == "unparsable"
    assert c.check('{"name": "Ana", "a', finish_reason="length").reason == "truncated"


def test_json_types_are_strict() -> None:
    c = JsonChecker(None, fields={"ok": True, "n": 1})
    assert c.check('{"ok": true, "n": 1.0}').correct
    assert not c.check('{"ok": 1, "n": 1}').correct
    assert not c.check('{"ok": true, "n": true}').correct


def test_dotted_fields_and_casefold() -> None:
    c = JsonChecker(None, fields={"customer.name": "ana", "items.0.sku": "X1"}, casefold=True)
    assert c.check('{"customer": {"name": " ANA "}, "items": [{"sku": "x1"}]}').correct
    assert c.check('{"customer": {"name": "Ana"}, "items": []}').reason == "wrong"


def test_schema_only() -> None:
    c = JsonChecker(None, schema=SCHEMA)
    assert c.check('{"name": "anyone", "age": 1}').correct
    assert c.check('{"name": "anyone"}').reason == "unparsable"


def test_hostile_outputs_never_raise(hostile: Any) -> None:
    c = JsonChecker(REF, schema=SCHEMA)
    for fr in (None, "length"):
        r = c.check(hostile, finish_reason=fr)
        assert r.reason in REASONS and not r.correct
        assert r.extracted is None or len(r.extracted) <= 500


def test_deeply_nested_object_is_not_an_error_for_the_caller() -> None:
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    r = JsonChecker(None, fields={"a": 1}).check(deep)
    assert not r.correct and r.reason in ("wrong", "unparsable", "error")


@pytest.mark.parametrize(("spec", "ref", "field"), [
    ({"type": "json", "schema": {"type": "nonsense"}}, REF, "checker.schema"),
    ({"type": "json", "schema": [1]}, REF, "checker.schema"),
    ({"type": "json"}, "not json", "checker.reference"),
    ({"type": "json"}, None, "checker.fields"),
    ({"type": "json", "fields": ["a"]}, None, "checker.fields"),
])
def test_bad_specs_name_the_field(spec: dict[str, Any], ref: str | None, field: str) -> None:
    with pytest.raises(StudyError) as err:
        make_checker(spec, reference=ref)
    assert err.value.problems[0][0] == field
