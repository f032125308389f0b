"""docs/tasks.md names every generator, knob, checker and checker option the code has."""

from __future__ import annotations

import inspect
from pathlib import Path

from acceval.tasks import BUILTIN_CHECKERS, GENERATORS

DOC = (Path(__file__).parents[3] / "docs" / "tasks.md").read_text(encoding="utf-8")


def test_every_generator_and_knob_is_documented() -> None:
    for name, gen in GENERATORS.items():
        assert f"### `{name}`" in DOC
        for option in gen.options.model_fields:
            assert f"`{option}`" in DOC, (name, option)


def test_every_checker_and_option_is_documented() -> None:
    for name, cls in BUILTIN_CHECKERS.items():
        assert f"### `{name}`" in DOC
        for param in list(inspect.signature(cls).parameters)[1:]:
            assert f"`{param}`" in DOC, (name, param)
