"""Redaction of API keys: in text, and in a program's output copied to its log, where a key
may arrive split across reads."""

from __future__ import annotations

import asyncio
import io

import pytest

from acceval.redaction import REDACTED, copy_scrubbed, keys_of, scrub

KEY = "sk-0123456789abcdef"


def test_scrub_replaces_every_key_and_leaves_other_text() -> None:
    assert scrub(f"a {KEY} b {KEY}", [KEY, "other-key"]) == f"a {REDACTED} b {REDACTED}"
    assert scrub("nothing here", [KEY]) == "nothing here"
    assert scrub("empty keys are not keys", [""]) == "empty keys are not keys"


def test_keys_of_reads_the_set_variables_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K_A", KEY)
    monkeypatch.setenv("K_EMPTY", "")
    monkeypatch.delenv("K_UNSET", raising=False)
    assert keys_of(["K_A", None, "K_EMPTY", "K_UNSET", "K_A"]) == (KEY,)


@pytest.mark.parametrize("cut", [1, 3, 7, len(KEY) - 1, len(KEY), 64])
def test_a_key_split_across_reads_is_still_redacted(cut: int) -> None:
    text = (f"line one {KEY}\nline two {KEY}{KEY} end\n" * 3).encode()

    async def copy() -> bytes:
        reader = asyncio.StreamReader()
        for i in range(0, len(text), cut):
            reader.feed_data(text[i:i + cut])
        reader.feed_eof()
        out = io.BytesIO()
        await copy_scrubbed(reader, out, [KEY], chunk=cut)
        return out.getvalue()

    got = asyncio.run(copy())
    assert got == text.replace(KEY.encode(), REDACTED.encode())
