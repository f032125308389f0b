"""Property tests: every checker survives arbitrary text; numbers survive every formatting."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.tasks import REASONS, make_checker

SPECS: list[tuple[dict[str, Any], str | None]] = [
    ({"type": "exact", "casefold": True, "strip_punctuation": True, "remove_punctuation": True},
     "Paris"),
    ({"type": "numeric", "rel_tol": 0.01}, "42"),
    ({"type": "numeric", "pick": "first"}, "-7.5"),
    ({"type": "regex", "pattern": r"(?i)answer:\s*(\S+)", "match": "last"}, "x"),
    ({"type": "contains", "casefold": True}, "needle"),
    ({"type": "choice"}, "C"),
    ({"type": "json", "fields": {"a.b": [1, "x"]}}, None),
]
CHECKERS = [make_checker(spec, reference=ref) for spec, ref in SPECS]


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(codec=None), max_size=300) | st.none(),
       finish=st.sampled_from([None, "stop", "length", "weird"]))
def test_no_checker_raises_on_any_text(text: str | None, finish: str | None) -> None:
    for c in CHECKERS:
        r = c.check(text, finish_reason=finish)
        assert r.reason in REASONS
        assert r.correct == (r.reason == "correct")


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=-10**15, max_value=10**15),
       style=st.sampled_from(["plain", "thousands", "padded", "prose", "decimal"]))
def test_an_integer_reads_back_however_it_is_written(n: int, style: str) -> None:
    text = {
        "plain": str(n),
        "thousands": f"{n:,}",
        "padded": ("-" if n < 0 else "") + str(abs(n)).zfill(20),
        "prose": f"After some thought, the result is {n:,}.",
        "decimal": f"{n}.000",
    }[style]
    c = make_checker({"type": "numeric"}, reference=str(n))
    assert c.check(text).correct, text
    assert not c.check(str(n + 1)).correct
