"""The hot-path JSON helpers read and write what the standard library does."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval import _json

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_reads_what_the_standard_library_reads(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _json.loads(text) == json.loads(text)
    assert _json.loads(text.encode()) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_a_line_reads_back_as_the_structure(value: object) -> None:
    line = _json.dumps_line(value)
    assert "\n" not in line
    assert json.loads(line) == value


def test_what_the_fast_parser_refuses_the_standard_library_reads() -> None:
    assert math.isnan(_json.loads('{"x": NaN}')["x"])
    assert _json.loads('"\\ud800"') == "\ud800"


@pytest.mark.parametrize("bad", ['{"a": 1', '{"a": 1} x', "", b"\xff\xfe"])
def test_bad_input_fails_as_the_standard_library_fails(bad: str | bytes) -> None:
    with pytest.raises(ValueError) as ours:
        _json.loads(bad)
    with pytest.raises(ValueError) as theirs:
        json.loads(bad)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
