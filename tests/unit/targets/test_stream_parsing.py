"""The HTTP/SSE parser fed real-format responses cut at arbitrary byte boundaries.

The response bytes below follow what vLLM's OpenAI server (uvicorn) sends: one HTTP chunk
per SSE message, a role-only first delta for chat, ``usage: null`` on content chunks and a
final ``choices: []`` usage chunk when ``stream_options.include_usage`` is set.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.results.records import Record
from acceval.targets._http import Connection, Consumer, Pool
from acceval.targets.openai import _Exchange


def _chunked(*events: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


_HEAD = (b"HTTP/1.1 200 OK\r\ndate: Tue, 01 Jul 2025 10:00:00 GMT\r\nserver: uvicorn\r\n"
         b"content-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n")

_COMPLETIONS = _HEAD + _chunked(
    b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
    b'[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null,"stop_reason":null}],'
    b'"usage":null}\n\n',
    b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
    b'[{"index":0,"text":" is","logprobs":null,"finish_reason":null,"stop_reason":null}],'
    b'"usage":null}\n\n',
    b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
    b'[{"index":0,"text":" nice \xc3\xa9","logprobs":null,"finish_reason":"stop",'
    b'"stop_reason":null}],"usage":null}\n\n',
    b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],'
    b'"usage":{"prompt_tokens":7,"total_tokens":10,"completion_tokens":3}}\n\n',
    b"data: [DONE]\n\n",
)

_CHAT = _HEAD + _chunked(
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,'
    b'"finish_reason":null}]}\r\n\r\n',
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"4"},"logprobs":null,"finish_reason":null}]}'
    b"\r\n\r\n",
    b": keep-alive comment\r\n\r\n",
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"2"},"logprobs":null,"finish_reason":"stop",'
    b'"stop_reason":null}]}\r\n\r\n',
    b"data: [DONE]\r\n\r\n",
)


class _FakeTransport:
    def __init__(self) -> None:
        self.closing = False
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def abort(self) -> None:
        self.closing = True

    close = abort

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def _feed(response: bytes, cuts: list[int], *, chat: bool, limit: int = 2**26,
          close: bool = False) -> tuple[Record, Pool, Connection]:
    loop = asyncio.new_event_loop()
    try:
        pool = Pool("http://127.0.0.1:1/v1", connect_timeout_s=1.0, max_body_bytes=limit)
        conn = Connection(pool)
        conn.connection_made(_FakeTransport())  # type: ignore[arg-type]
        rec = Record("t", 0, "p", 1, "task")
        ex = _Exchange(rec, 0, chat, 5.0)
        waiter = loop.create_future()
        conn.start(b"POST / HTTP/1.1\r\n\r\n", ex, waiter)
        prev = 0
        for cut in [*sorted(set(cuts)), len(response)]:
            if cut > prev:
                conn.data_received(response[prev:cut])
                prev = cut
        if close:
            conn.connection_lost(None)
        assert waiter.done() and waiter.result() is False
        return rec, pool, conn
    finally:
        loop.close()


def test_completions_stream_whole() -> None:
    rec, pool, conn = _feed(_COMPLETIONS, [], chat=False)
    assert rec.error_kind is None
    assert rec.output_text == " Paris is nice é"
    assert rec.finish_reason == "stop"
    assert (rec.output_tokens, rec.prompt_tokens, rec.tokens_from) == (3, 7, "usage")
    assert len(rec.chunk_ns) == 3
    assert pool.idle == [conn]


def test_chat_stream_skips_role_only_delta_and_comments() -> None:
    rec, _, _ = _feed(_CHAT, [], chat=True)
    assert rec.error_kind is None
    assert rec.output_text == "42" and len(rec.chunk_ns) == 2
    assert (rec.output_tokens, rec.tokens_from) == (2, "chunks")


@settings(max_examples=150, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=len(_COMPLETIONS) - 1), max_size=40))
def test_completions_stream_any_split(cuts: list[int]) -> None:
    rec, pool, conn = _feed(_COMPLETIONS, cuts, chat=False)
    assert rec.error_kind is None, rec.error_detail
    assert rec.output_text == " Paris is nice é"
    assert rec.output_tokens == 3 and rec.finish_reason == "stop"
    assert pool.idle == [conn]


@settings(max_examples=150, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=len(_CHAT) - 1), max_size=40))
def test_chat_stream_any_split(cuts: list[int]) -> None:
    rec, pool, conn = _feed(_CHAT, cuts, chat=True)
    assert rec.error_kind is None, rec.error_detail
    assert rec.output_text == "42" and len(rec.chunk_ns) == 2
    assert pool.idle == [conn]


def _completion_events(*payloads: bytes) -> bytes:
    return _HEAD + _chunked(*(b"data: " + p + b"\n\n" for p in payloads), b"data: [DONE]\n\n")


def test_events_only_the_standard_json_reader_accepts_are_still_read() -> None:
    # NaN and a lone surrogate escape: the fast parser refuses both; the events are read
    # as Python's json reads them, not called malformed. Whitespace around is fine.
    rec, _, _ = _feed(_completion_events(
        b'{"choices":[{"index":0,"text":"a","logprobs":{"token_logprobs":[NaN]},'
        b'"finish_reason":null}]}',
        b'{"id":"x","choices":[{"index":0,"text":"b","finish_reason":null}]}',
        b' {"choices":[{"index":0,"text":"\\ud800c","finish_reason":"stop"}]} '),
        [], chat=False)
    assert rec.error_kind is None, rec.error_detail
    assert rec.output_text == "ab\ud800c" and len(rec.chunk_ns) == 3
    assert rec.finish_reason == "stop"


@pytest.mark.parametrize("payload", [
    b'{"choices":[{"index":0,"text":"a","finish_reason":null}]} {"extra":1}',
    b'{"choices":[{"index":0,"text":"a",',
    b"not json",
])
def test_an_event_that_is_not_one_json_value_is_malformed(payload: bytes) -> None:
    rec, _, _ = _feed(_completion_events(payload), [], chat=False)
    assert rec.error_kind == "malformed" and "event is not JSON" in str(rec.error_detail)


def test_content_length_json_body() -> None:
    body = (b'{"choices":[{"index":0,"text":"ok","finish_reason":"stop"}],'
            b'"usage":{"prompt_tokens":2,"completion_tokens":1}}')
    resp = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
            % len(body)) + body
    rec, pool, _ = _feed(resp, [20, 90], chat=False)
    assert rec.error_kind is None and rec.output_text == "ok" and rec.output_tokens == 1
    assert len(pool.idle) == 1


def test_connection_close_response_is_not_reused() -> None:
    resp = (b"HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\ncontent-length: 5\r\n"
            b"\r\noops!")
    rec, pool, conn = _feed(resp, [], chat=False)
    assert rec.error_kind == "http" and rec.http_status == 500 and "oops!" in str(rec.error_detail)
    assert pool.idle == [] and conn.closed


def test_garbage_status_line_is_malformed() -> None:
    rec, pool, _ = _feed(b"SSH-2.0-OpenSSH\r\n\r\n", [], chat=False)
    assert rec.error_kind == "malformed" and pool.idle == []


def test_bad_chunk_size_is_malformed() -> None:
    rec, _, _ = _feed(_HEAD + b"zz\r\nhello\r\n", [], chat=False)
    assert rec.error_kind == "malformed"


def _sse_response(*payloads: bytes) -> bytes:
    return _HEAD + _chunked(*(b"data: " + p + b"\n\n" for p in payloads))


def test_reasoning_deltas_are_timed_but_not_part_of_the_answer() -> None:
    resp = _sse_response(
        b'{"choices":[{"index":0,"delta":{"reasoning_content":"thinking"}}]}',
        b'{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}',
        b'{"choices":[{"index":0,"delta":{"content":"7"},"finish_reason":"stop"}]}',
        b"[DONE]",
    )
    rec, _, _ = _feed(resp, [], chat=True)
    assert rec.error_kind is None
    assert rec.output_text == "7" and len(rec.chunk_ns) == 3
    assert rec.first_token_ns == rec.chunk_ns[0]


def test_json_with_surrounding_spaces_is_accepted_trailing_garbage_is_not() -> None:
    ok = _sse_response(b' {"choices":[{"index":0,"text":"a","finish_reason":"stop"}]} ',
                       b"[DONE]")
    rec, _, _ = _feed(ok, [], chat=False)
    assert rec.error_kind is None and rec.output_text == "a"
    bad = _sse_response(b'{"choices":[{"index":0,"text":"a"}]}}', b"[DONE]")
    rec, pool, _ = _feed(bad, [], chat=False)
    assert rec.error_kind == "malformed" and pool.idle == []


def test_last_event_without_blank_line_still_counts() -> None:
    resp = _HEAD + _chunked(
        b'data: {"choices":[{"index":0,"text":"x","finish_reason":"length"}]}')
    rec, _, _ = _feed(resp, [], chat=False)
    assert rec.error_kind is None and rec.output_text == "x" and rec.finish_reason == "length"


_JSON_OK = b'{"choices":[{"index":0,"text":"ok","finish_reason":"stop"}]}'


@pytest.mark.parametrize("response", [
    b"HTTP/1.1 \r\n\r\n",
    b"HTTP/1.1\r\n\r\n",
    b"HTTP/1.1 2x0 OK\r\n\r\n",
    b"HTTP/2 200\r\n\r\n",
    b"\x00\xff\xfe garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ncontent-length: abc\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ncontent-length: -5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\ncontent-length: +5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + b"1" * 5000,
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n" + b"x" * 70000,
    b"HTTP/1.1 200 OK\r\n" + b"x-big: " + b"y" * 70000,
])
def test_broken_http_is_malformed_and_never_raises(response: bytes) -> None:
    for cuts in ([], list(range(1, len(response), 7))):
        rec, pool, conn = _feed(response, cuts, chat=False, close=True)
        assert rec.error_kind == "malformed", (response[:60], rec.error_kind, rec.error_detail)
        assert rec.error_detail is not None and "bad HTTP response" in rec.error_detail
        assert pool.idle == [] and conn.closed


def test_repeated_identical_content_length_is_accepted() -> None:
    resp = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"content-length: %d\r\n\r\n" % (len(_JSON_OK), len(_JSON_OK))) + _JSON_OK
    rec, pool, _ = _feed(resp, [], chat=False)
    assert rec.error_kind is None and rec.output_text == "ok" and len(pool.idle) == 1


@pytest.mark.parametrize(("response", "said"), [
    (b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n" + b"x" * 10, "10 of 100 body bytes"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\nabc", "chunked body"),
    (b"HTTP/1.1 200 OK\r\ncontent-len", "closed by the server"),
])
def test_truncated_response_is_a_cut_stream(response: bytes, said: str) -> None:
    rec, pool, _ = _feed(response, [], chat=False, close=True)
    assert rec.error_kind == "stream_cut" and said in str(rec.error_detail)
    assert pool.idle == []


_BIG_LENGTH = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n"
_BIG_CHUNKED = _HEAD + b"".join(b"%x\r\n%s\r\n" % (100, b"y" * 100) for _ in range(50))
_BIG_UNTIL_CLOSE = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n" + b"z" * 5000


@pytest.mark.parametrize("response", [_BIG_LENGTH + b"x" * 5000, _BIG_CHUNKED, _BIG_UNTIL_CLOSE])
def test_a_body_over_the_limit_is_too_large_and_closes_the_connection(response: bytes) -> None:
    rec, pool, conn = _feed(response, list(range(0, len(response), 300)), chat=False,
                            limit=1000, close=True)
    assert rec.error_kind == "too_large", rec.error_detail
    assert "1,000 bytes" in str(rec.error_detail) and "max_response_bytes" in str(rec.error_detail)
    assert pool.idle == [] and conn.closed


def test_a_body_at_the_limit_is_accepted() -> None:
    resp = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"\r\n" % len(_JSON_OK)) + _JSON_OK
    rec, _, _ = _feed(resp, [], chat=False, limit=len(_JSON_OK))
    assert rec.error_kind is None and rec.output_text == "ok"


class _Buggy(Consumer):
    def __init__(self) -> None:
        self.problem: Exception | None = None

    def body(self, data: bytes, now: int) -> None:
        raise RuntimeError("bug in a consumer")

    def lost(self, got_bytes: bool, detail: str, problem: Exception | None, now: int) -> None:
        self.problem = problem


def test_a_consumer_that_raises_ends_its_exchange_without_raising() -> None:
    pool = Pool("http://127.0.0.1:1/v1", connect_timeout_s=1.0, max_body_bytes=1 << 20)
    conn = Connection(pool)
    conn.connection_made(_FakeTransport())  # type: ignore[arg-type]
    c = _Buggy()
    conn.start(b"GET / HTTP/1.1\r\n\r\n", c)
    conn.data_received(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi")
    assert isinstance(c.problem, RuntimeError) and conn.closed and pool.idle == []


def test_a_32_mib_event_in_64_kib_reads_parses() -> None:
    text = "y" * (32 * 2**20)
    event = (b'data: {"choices":[{"index":0,"text":"%s","finish_reason":"stop"}]}\n\n'
             % text.encode())
    resp = _HEAD + _chunked(event, b"data: [DONE]\n\n")
    rec, pool, _ = _feed(resp, list(range(0, len(resp), 65536)), chat=False)
    assert rec.error_kind is None and rec.output_text == text and len(pool.idle) == 1
