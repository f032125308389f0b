"""The JSON depth check: one pass over each level's values, the same verdict as a walk of
every container."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from acceval.input_files import json_depth_problem

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                               max_size=4),
    max_leaves=40)


def _depth(node: Any) -> int:
    """The reference: containers nested, counted recursively (1 for a top-level container)."""
    if isinstance(node, dict):
        return 1 + max((_depth(v) for v in node.values()), default=0)
    if isinstance(node, list):
        return 1 + max((_depth(v) for v in node), default=0)
    return 0


@given(_JSON, st.integers(1, 6))
def test_the_verdict_is_the_recursive_depth_against_the_limit(doc: Any, limit: int) -> None:
    problem = json_depth_problem(doc, max_depth=limit)
    assert (problem is None) == (_depth(doc) <= limit)
    if problem is not None:
        assert problem == f"nested more than {limit} levels deep"


def test_a_deep_document_is_caught_and_a_wide_one_passes() -> None:
    deep: Any = 1
    for i in range(65):
        deep = [deep] if i % 2 else {"k": deep}  # lists and objects in turn, 65 levels
    assert json_depth_problem(deep) == "nested more than 64 levels deep"
    wide = {"traceEvents": [{"ph": "X", "args": {"n": i}} for i in range(10_000)]}
    assert json_depth_problem(wide) is None
