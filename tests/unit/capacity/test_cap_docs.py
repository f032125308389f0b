"""docs/capacity.md names every study field, built-in shape and max-rate method the code has."""

from __future__ import annotations

import typing
from pathlib import Path

from acceval.capacity import BUILTIN_SHAPES, Availability, Demand
from acceval.capacity.curve import Method

DOC = (Path(__file__).resolve().parents[3] / "docs" / "capacity.md").read_text()


def test_every_field_shape_and_method_is_documented() -> None:
    for model in (Demand, Availability):
        for name in model.model_fields:
            assert f"`{name}`" in DOC, f"{model.__name__}.{name}"
    for shape in BUILTIN_SHAPES:
        assert f"| `{shape}` |" in DOC, shape
    for method in typing.get_args(Method):
        assert f"| `{method}` |" in DOC, method
