"""The SSE splitter: events out of bytes cut anywhere, in work linear in the bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.targets._sse import EventSplitter

_STREAM = ("data: one\n\n"
           ": a comment\r\n\r\n"
           "event: delta\ndata: two\ndata:  three\n\n"
           "data: é\r\n\r\n"
           "id: 7\n\n"
           "data: [DONE]\n\n").encode()
_EVENTS = ["one", "two\n three", "é", "[DONE]"]


def _split(data: bytes, cuts: list[int]) -> tuple[list[str], EventSplitter]:
    sp = EventSplitter()
    events: list[str] = []
    prev = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        if cut > prev:
            events += sp.feed(data[prev:cut])
            prev = cut
    return events + sp.close(), sp


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=len(_STREAM) - 1), max_size=60))
def test_any_split_gives_the_same_events_each_character_searched_once(cuts: list[int]) -> None:
    events, sp = _split(_STREAM, cuts)
    assert events == _EVENTS
    assert sp.scanned == len(_STREAM.decode()) + 2  # close() ends the last line: "\n\n"


def test_a_32_mib_line_in_64_kib_reads_is_searched_once() -> None:
    # Joining the partial line to each read and searching it again searched 8 GiB here.
    text = "x" * (32 * 2**20)
    data = b"data: " + text.encode() + b"\n\n"
    sp = EventSplitter()
    events: list[str] = []
    for i in range(0, len(data), 65536):
        events += sp.feed(data[i : i + 65536])
    assert events == [text]
    assert sp.scanned == len(data)


def test_a_last_event_without_its_blank_line_counts_and_a_cut_character_is_replaced() -> None:
    events, _ = _split(b"data: a\n\ndata: b\xc3", [])
    assert events == ["a", "b\ufffd"]
