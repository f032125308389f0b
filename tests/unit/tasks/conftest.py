"""Shared hostile outputs: every checker must turn each into a reason, never an exception."""

from __future__ import annotations

from typing import Any

import pytest

HOSTILE: list[Any] = [
    None,
    "",
    "   \n\t  ",
    "x" * 1_000_000,
    "1" * 1_000_000,
    "9," * 300_000,
    "{" * 100_000,
    '{"a": ' * 50_000,
    "[" * 100_000,
    "```json\n{not json at all\n```",
    "\x00\x01\x02 binary \udcff\udc80 junk \x7f",
    "💥 ñ 中文 ١٢٣ 𝟙𝟚𝟛 ＢＢ",
    b"\xff\xfe\x00 bytes",
    "(" * 10_000 + "A" + ")" * 10_000,
    "-" * 100_000,
    "1e99999999999999999999999",
    "answer: " * 50_000,
]


@pytest.fixture(params=range(len(HOSTILE)), ids=lambda i: f"hostile{i}")
def hostile(request: pytest.FixtureRequest) -> Any:
    return HOSTILE[request.param]
