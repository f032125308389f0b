"""``acceval serve`` against hostile or broken clients on a raw socket: every malformed request
gets a clean 4xx (or a clean close), nothing hangs, and nothing logs a traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from serve_support import RawAnswer, mock_server, raw_exchange, read_events, run

from acceval.serve import spawn_server

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

BODY = b'{"prompt":"p","max_tokens":2}'
POST = b"POST /v1/completions HTTP/1.1\r\nHost: t\r\n"
HEAD_LIMIT = 64 * 1024  # docs/serve.md


def post(body: bytes, headers: bytes = b"") -> bytes:
    return POST + headers + b"Content-Length: %d\r\n\r\n" % len(body) + body


def health_head(size: int) -> bytes:
    """A GET /health head of exactly ``size`` bytes, its closing blank line included."""
    start, end = b"GET /health HTTP/1.1\r\nX-Pad: ", b"\r\n\r\n"
    return start + b"a" * (size - len(start) - len(end)) + end


@pytest.fixture(autouse=True)
def no_server_tracebacks(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.WARNING)
    yield
    assert "Traceback" not in caplog.text
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def exchange(data: bytes, **kwargs: object) -> RawAnswer:
    async def body() -> RawAnswer:
        async with mock_server(output_tokens=2) as (srv, _):
            return await raw_exchange(srv.port, data, **kwargs)  # type: ignore[arg-type]

    return run(body)


def error_of(answer: RawAnswer) -> str:
    err = json.loads(answer.body)["error"]
    assert err["code"] == answer.status and err["type"] == "invalid_request_error"
    return str(err["message"])


def test_a_body_over_the_limit_is_a_413_naming_the_limit() -> None:
    answer = exchange(POST + b"Content-Length: 16777217\r\n\r\n")
    assert answer.status == 413 and answer.closed
    assert "16 MiB" in error_of(answer)


@pytest.mark.parametrize("headers", [
    b"Content-Length: %d\r\nContent-Length: 100\r\n" % len(BODY),
    b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(BODY), len(BODY)),
    b"Content-Length: %d, %d\r\n" % (len(BODY), len(BODY)),
    b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(BODY),
    b"Content-Length: -1\r\n",
    b"Content-Length: +%d\r\n" % len(BODY),
    b"Content-Length: 2_9\r\n",
    b"Content-Length: abc\r\n",
    b"Content-Length: 99999999999999999999999\r\n",
    b"Content-Length : %d\r\n" % len(BODY),  # whitespace before the colon (RFC 9112 §5.1)
], ids=["conflicting", "duplicate", "list", "with-chunked", "negative", "plus", "underscore",
        "letters", "huge", "space-before-colon"])
def test_an_ambiguous_content_length_is_a_400_and_closes(headers: bytes) -> None:
    answer = exchange(POST + headers + b"\r\n" + BODY)
    assert answer.status == 400 and answer.closed


@pytest.mark.parametrize("data", [
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    b"GET /health\r\n\r\n",
    b"GET /health HTTP/2.0\r\n\r\n",
    b"GET /health HTTP/1.1\r\nNoColonHere\r\n\r\n",
    b"GET /health HTTP/1.1\r\nX-A: a\r\n folded\r\n\r\n",
    b"GET /health HTTP/1.1\r\nX-A: a\x00b\r\n\r\n",
    b"GET /health HTTP/1.1\r\nX-A: a\nContent-Length: 5\r\n\r\n",
], ids=["binary", "no-version", "http2", "no-colon", "obs-fold", "control-char", "bare-lf"])
def test_a_malformed_head_is_a_400_and_closes(data: bytes) -> None:
    answer = exchange(data)
    assert answer.status == 400 and answer.closed
    assert "malformed" in error_of(answer) or "control character" in error_of(answer)


def test_a_garbage_request_line_is_refused_before_the_head_ends() -> None:
    answer = exchange(b"\x16\x03\x01 hello\r\nmore bytes that never end a head")
    assert answer.status == 400 and answer.closed


def test_empty_lines_before_a_request_are_ignored() -> None:
    answer = exchange(b"\r\n\r\nGET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert answer.status == 200 and answer.closed


def test_the_head_limit_is_exactly_the_documented_64_kib() -> None:
    at_limit = exchange(health_head(HEAD_LIMIT) + b"GET /health HTTP/1.1\r\nConnection: close"
                        b"\r\n\r\n")
    assert at_limit.status == 200 and at_limit.closed
    over = exchange(health_head(HEAD_LIMIT + 1))
    assert over.status == 431 and over.closed
    assert "64 KiB" in error_of(over)


def test_an_oversized_head_sent_in_pieces_is_a_431() -> None:
    head = health_head(100 * 1024)
    answer = exchange([head[i:i + 16_384] for i in range(0, len(head), 16_384)])
    assert answer.status == 431 and answer.closed


@pytest.mark.parametrize("coding", [b"chunked", b"gzip", b"gzip, chunked"])
def test_a_transfer_coded_body_is_a_501_and_closes(coding: bytes) -> None:
    chunked = b"%x\r\n%b\r\n0\r\n\r\n" % (len(BODY), BODY)
    answer = exchange(POST + b"Transfer-Encoding: " + coding + b"\r\n\r\n" + chunked)
    assert answer.status == 501 and answer.closed
    assert "send Content-Length" in error_of(answer)


def test_a_body_cut_short_by_the_client_closes_quietly_and_the_server_goes_on() -> None:
    async def body() -> tuple[RawAnswer, RawAnswer]:
        async with mock_server(output_tokens=2) as (srv, _):
            cut = await raw_exchange(srv.port, POST + b"Content-Length: 100\r\n\r\n" + BODY,
                                     half_close=True)
            after = await raw_exchange(srv.port, post(BODY, b"Connection: close\r\n"))
            return cut, after

    cut, after = run(body)
    assert cut.status is None and cut.closed
    assert after.status == 200 and json.loads(after.body)["usage"]["completion_tokens"] == 2


def test_the_error_answer_survives_request_bytes_still_in_flight() -> None:
    # A 413 answered while the client still sends its body: the answer must not be lost to
    # a connection reset (raw_exchange raises on one).
    answer = exchange(POST + b"Content-Length: 20000000\r\n\r\n" + b"x" * 1_000_000)
    assert answer.status == 413 and answer.closed


# -- timeouts ------------------------------------------------------------------------------------

def timed(data: bytes, **kwargs: object) -> RawAnswer:
    async def body() -> RawAnswer:
        async with mock_server(idle_timeout_s=0.3, head_timeout_s=0.3) as (srv, _):
            return await raw_exchange(srv.port, data, **kwargs)  # type: ignore[arg-type]

    return run(body)


def test_an_idle_connection_is_closed_after_the_idle_timeout() -> None:
    answer = timed(b"")
    assert answer.closed and answer.status is None


def test_an_idle_keep_alive_connection_is_closed_after_its_last_answer() -> None:
    answer = timed(b"GET /health HTTP/1.1\r\n\r\n")
    assert answer.status == 200 and answer.closed
    assert b"connection: close" not in answer.head.lower()  # it was kept alive, then idled


def test_a_head_trickled_a_byte_at_a_time_gets_a_408() -> None:
    # Each byte comes well within the idle timeout, but the head as a whole takes too long.
    answer = timed(b"GET /health HTTP/1.1\r\n", trickle=b"X-Slow: " + b"a" * 200,
                   trickle_gap_s=0.05)
    assert answer.status == 408 and answer.closed
    assert "head" in error_of(answer)


def test_a_stalled_body_gets_a_408() -> None:
    answer = timed(POST + b"Content-Length: 100\r\n\r\n" + BODY[:10])
    assert answer.status == 408 and answer.closed


def test_a_slow_stream_outlives_the_idle_timeout() -> None:
    async def body() -> tuple[list[str], list[str]]:
        async with mock_server(idle_timeout_s=0.3, head_timeout_s=0.3, ttft_ms=500,
                               output_tokens=5, itl_ms=150) as (srv, http):
            streams = []
            for _ in range(2):  # the second on the kept-alive connection
                async with http.post(f"{srv.base_url}/completions",
                                     json={"prompt": "p", "stream": True}) as resp:
                    assert resp.status == 200
                    streams.append(await read_events(resp))
            return streams[0], streams[1]

    first, second = run(body)
    assert first[-1] == second[-1] == "[DONE]"
    assert len(first) == len(second) == 7  # 5 chunks, usage, [DONE]


def test_a_spawned_server_takes_the_timeouts_and_logs_no_traceback() -> None:
    with spawn_server("mock", options={}, timeouts_s=(0.3, 0.3)) as server:
        async def body() -> list[RawAnswer]:
            return [await raw_exchange(server.port, data) for data in (
                b"", b"GET /health HTTP/1.1\r\nX-A: b", post(b"[" * 100_000),
                POST + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nabcde",
                health_head(HEAD_LIMIT + 1))]

        answers = run(body)
        stderr = server.stderr_tail()
    assert [a.status for a in answers] == [None, 408, 400, 400, 431]
    assert all(a.closed for a in answers)
    assert "Traceback" not in stderr
