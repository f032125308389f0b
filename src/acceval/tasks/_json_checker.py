"""The JSON checker: find the first JSON object in an output, validate it against a JSON Schema,
then compare chosen field values.

Models wrap JSON in prose and ```json fences; the extractor tries fenced blocks first, then
each '{' in turn (a bounded number of them, so a megabyte of braces costs little).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acceval.tasks._checkers import CheckerOptionError, _Base, unparsable, verdict
from acceval.tasks._task import CheckResult

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
_MAX_FENCES = 5
_MAX_BRACE_TRIES = 20
_DECODER = json.JSONDecoder()


def extract_json_object(text: str) -> tuple[dict[str, Any], str] | None:
    """The first JSON object in ``text`` and its source text, or None."""
    for i, m in enumerate(_FENCE.finditer(text)):
        if i >= _MAX_FENCES:
            break
        body = m.group(1).strip()
        if body.startswith("{"):
            found = _decode_at(body, 0)
            if found is not None:
                return found
    start, tries = text.find("{"), 0
    while start != -1 and tries < _MAX_BRACE_TRIES:
        found = _decode_at(text, start)
        if found is not None:
            return found
        start, tries = text.find("{", start + 1), tries + 1
    return None


def _decode_at(text: str, idx: int) -> tuple[dict[str, Any], str] | None:
    try:
        obj, end = _DECODER.raw_decode(text, idx)
    except (ValueError, RecursionError):
        return None
    return (obj, text[idx:end]) if isinstance(obj, dict) else None


class _BadSchema(Exception):
    """The schema is not a valid JSON Schema (jsonschema's ``SchemaError``, re-raised so that
    importing this module does not import jsonschema)."""


def _jsonschema() -> Any:
    """jsonschema, imported on the first schema a study declares. Its format module imports
    ``rfc3987_syntax`` when that is installed (a dependency of Jupyter's, which the dev tools
    bring), and that compiles a grammar for about 1.4 s at import; the checker validates no
    formats (no ``format_checker``), so that import is refused."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    import jsonschema

    return jsonschema


@functools.lru_cache(maxsize=256)
def _validator_for(schema_json: str) -> Any:
    """A checked validator per distinct schema: checking a schema costs milliseconds, and a task
    set of thousands usually shares one or two schemas."""
    jsonschema = _jsonschema()
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise _BadSchema(exc.message) from exc
    return cls(schema)


def _get(obj: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """Follow a path ("customer", "name") or ("items", "0", "sku"); (found, value)."""
    for part in path:
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return False, None
    return True, obj


def same_value(got: Any, want: Any, *, casefold: bool) -> bool:
    """JSON equality without Python's True == 1; numbers compare by value (2 == 2.0)."""
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and got == want
    if isinstance(want, int | float) and isinstance(got, int | float):
        return bool(got == want)
    if isinstance(want, str) and isinstance(got, str):
        g, w = got.strip(), want.strip()
        return g.casefold() == w.casefold() if casefold else g == w
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(
            same_value(g, w, casefold=casefold) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(
            same_value(got[k], want[k], casefold=casefold) for k in want)
    return want is None and got is None


@dataclass(frozen=True, slots=True)
class JsonChecker(_Base):
    """Valid against ``schema`` (if given) and equal on ``fields`` (dotted path → value).

    Without ``fields`` the reference, a JSON object, supplies them: each of its top-level keys
    must match. No object found or schema violated: unparsable. A field differs: wrong.
    """

    reference: str | None
    schema: Mapping[str, Any] | None = None
    fields: Mapping[str, Any] | None = None
    casefold: bool = False
    _validator: Any = field(init=False, repr=False, compare=False)
    _want: tuple[tuple[tuple[str, ...], Any], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.casefold, bool):
            raise CheckerOptionError("casefold", f"expected true or false, got {self.casefold!r}")
        validator = None
        if self.schema is not None:
            if not isinstance(self.schema, Mapping):
                raise CheckerOptionError("schema", "expected a JSON Schema object")
            try:
                validator = _validator_for(json.dumps(self.schema, sort_keys=True))
            except _BadSchema as exc:
                raise CheckerOptionError("schema", f"not a valid JSON Schema: {exc}") from None
            except (TypeError, ValueError) as exc:
                raise CheckerOptionError("schema", f"not a JSON object: {exc}") from None
        if self.fields is not None:
            if not isinstance(self.fields, Mapping) or not all(
                    isinstance(k, str) and k for k in self.fields):
                raise CheckerOptionError("fields", "expected a mapping of field path to value")
            want = tuple((tuple(k.split(".")), v) for k, v in self.fields.items())
        elif self.reference is not None and self.reference.strip():
            try:
                ref = json.loads(self.reference)
            except ValueError:
                ref = None
            if not isinstance(ref, dict):
                raise CheckerOptionError("reference", "expected a JSON object (or give `fields`)")
            want = tuple(((k,), v) for k, v in ref.items())  # reference keys are literal
        elif validator is None:
            raise CheckerOptionError("fields", "give `fields`, a JSON-object reference or a schema")
        else:
            want = ()
        object.__setattr__(self, "_validator", validator)
        object.__setattr__(self, "_want", want)

    def _judge(self, text: str) -> CheckResult:
        found = extract_json_object(text)
        if found is None:
            return unparsable(None)
        obj, source = found
        if self._validator is not None and not self._validator.is_valid(obj):
            return unparsable(source)
        for path, want in self._want:
            ok, got = _get(obj, path)
            if not ok or not same_value(got, want, casefold=self.casefold):
                return verdict(False, source)
        return verdict(True, source)
