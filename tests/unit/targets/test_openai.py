"""OpenAITarget against a real SSE server on 127.0.0.1: stamps, text, tokens, faults."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from pydantic import ValidationError

from acceval.errors import TargetError
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import run
from acceval.results.records import ERROR_KINDS, Record
from acceval.study import Endpoint
from acceval.targets import OpenAITarget
from acceval.targets.transport import TRANSPORTS
from helpers.sse_server import ServerConfig, SSEServer


def _rec(i: int = 1) -> Record:
    return Record("t", 0, "p", i, "task")


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Every test here runs on each transport (the conformance suite covers the wire)."""
    name: str = request.param
    return name


async def _send_all(transport: str, cfg: ServerConfig, prompts: list[str], *,
                    api: str = "completions", stream: bool = True, timeout_s: float = 5.0,
                    **ep: Any) -> tuple[list[Record], SSEServer]:
    async with SSEServer(cfg) as srv:
        target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m", api=api,
                                            stream=stream, timeout_s=timeout_s,
                                            transport=transport, **ep))
        await target.start()
        recs = []
        try:
            for i, text in enumerate(prompts):
                rec = _rec(i)
                await target.send(Prompt("task", prompt=text, max_tokens=8), rec, 0)
                recs.append(rec)
        finally:
            await target.close()
        return recs, srv


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_streamed_request_fills_stamps_text_and_usage(transport: str, api: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(tokens=8, itl_s=0.001), ["hello"], api=api))
    rec = recs[0]
    assert rec.error_kind is None, rec.error_detail
    assert rec.output_text == "".join(f" t{i}" for i in range(8))
    assert rec.output_tokens == 8 and rec.tokens_from == "usage" and rec.prompt_tokens == 5
    assert rec.finish_reason == "length"
    assert len(rec.chunk_ns) == 8
    assert rec.sent_ns is not None and rec.first_byte_ns is not None
    assert rec.sent_ns <= rec.first_byte_ns <= rec.chunk_ns[0] == rec.first_token_ns
    assert rec.chunk_ns == sorted(rec.chunk_ns)
    assert rec.done_ns is not None and rec.done_ns >= rec.chunk_ns[-1]
    assert rec.http_status == 200
    body = srv.stats.last_body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 8 and body["temperature"] == 0.0 and body["model"] == "m"
    assert ("messages" in body) == (api == "chat")
    assert srv.stats.last_headers["x-request-id"] == "0"


def test_tokens_fall_back_to_chunk_count_without_usage(transport: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(tokens=6), ["fault:nousage"]))
    assert recs[0].error_kind is None
    assert recs[0].output_tokens == 6 and recs[0].tokens_from == "chunks"
    assert recs[0].prompt_tokens is None


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_non_streamed_request_parses_json(transport: str, api: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(tokens=4), ["hi"], api=api, stream=False))
    rec = recs[0]
    assert rec.error_kind is None, rec.error_detail
    assert rec.output_text == " t0 t1 t2 t3"
    assert rec.first_token_ns is None and rec.chunk_ns == []  # TTFT not observable
    assert rec.output_tokens == 4 and rec.tokens_from == "usage"
    assert "stream_options" not in srv.stats.last_body


def test_json_answer_to_a_streamed_request_is_accepted(transport: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(tokens=3), ["fault:json"]))
    assert recs[0].error_kind is None and recs[0].output_text == " t0 t1 t2"


@pytest.mark.parametrize(
    ("prompt", "kind", "status"),
    [
        ("fault:http500", "http", 500),
        ("fault:http429", "http", 429),
        ("fault:http503", "http", 503),
        ("fault:malformed", "malformed", 200),
        ("fault:badshape", "malformed", 200),
        ("fault:reset", "stream_cut", 200),
        ("fault:nodone", "stream_cut", 200),
        ("fault:errorevent", "stream_cut", 200),
        ("fault:close", "connect", None),
        ("fault:hang", "timeout", None),
    ],
)
def test_each_failure_is_classified(transport: str, prompt: str, kind: str,
                                    status: int | None) -> None:
    # Only the hang waits for its timeout; the others get room for a full garbage collection
    # of a long test session (0.3 s was seen), which would otherwise time them out.
    recs, _ = run(_send_all(transport, ServerConfig(tokens=4), [prompt, "ok"],
                            timeout_s=0.3 if kind == "timeout" else 5.0))
    rec, after = recs
    assert rec.error_kind == kind, rec.error_detail
    assert kind in ERROR_KINDS
    assert rec.http_status == status
    assert rec.error_detail and len(rec.error_detail) < 400
    assert rec.done_ns is not None and rec.sent_ns is not None and rec.done_ns >= rec.sent_ns
    # The target keeps working after any failure.
    assert after.error_kind is None, after.error_detail


def test_retry_after_is_recorded_in_seconds_and_as_a_date(transport: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(), ["fault:http429", "fault:http503", "ok"]))
    seconds, date, ok = recs
    assert seconds.retry_after_s == 1.0
    # 30 s ahead at one-second precision; the time the request takes only shrinks it.
    assert date.retry_after_s is not None and 10.0 <= date.retry_after_s <= 30.0
    assert ok.retry_after_s is None
    # Without a retry policy nothing is sent twice.
    assert [r.http_attempts for r in recs] == [1, 1, 1]


def test_retry_policy_resends_after_503_and_records_the_attempts(transport: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(tokens=2, busy_first=2, retry_after="0.2"),
                              ["a"], retry={"max_attempts": 3, "on": [503], "backoff_s": 0}))
    rec = recs[0]
    assert rec.error_kind is None, rec.error_detail
    assert rec.http_attempts == 3 and srv.stats.requests == 3
    assert rec.http_status == 200 and rec.retry_after_s == 0.2
    assert rec.output_text == " t0 t1" and len(rec.chunk_ns) == 2
    # The stamps run from the first send: both Retry-After waits are in the latency.
    assert rec.sent_ns is not None and rec.done_ns is not None
    assert rec.done_ns - rec.sent_ns >= 0.4e9


def test_retries_stop_at_max_attempts_with_the_last_error(transport: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(busy_first=5), ["a"],
                              retry={"max_attempts": 3, "backoff_s": 0}))
    rec = recs[0]
    assert (rec.error_kind, rec.http_status, rec.http_attempts) == ("http", 503, 3)
    assert srv.stats.requests == 3


def test_connect_failures_are_retried_when_the_policy_says_so(transport: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(fault="close"), ["a"],
                              retry={"max_attempts": 4, "on": ["connect"], "backoff_s": 0}))
    assert (recs[0].error_kind, recs[0].http_attempts) == ("connect", 4)
    assert srv.stats.requests == 4 and srv.stats.connections == 4


def test_a_retry_after_over_max_wait_is_not_retried_and_says_why(transport: str) -> None:
    recs, srv = run(_send_all(transport, ServerConfig(busy_first=1, retry_after="120"), ["a"],
                              retry={"max_wait_s": 5}))
    rec = recs[0]
    assert (rec.error_kind, rec.http_attempts, srv.stats.requests) == ("http", 1, 1)
    assert "not retried" in str(rec.error_detail) and rec.retry_after_s == 120.0


def test_http_error_detail_carries_the_body_excerpt(transport: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(), ["fault:http500"]))
    assert recs[0].error_detail is not None and "injected 500" in recs[0].error_detail


def test_partial_text_is_kept_when_the_stream_is_cut(transport: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(tokens=4), ["fault:reset"]))
    assert recs[0].output_text == " t0 t1" and len(recs[0].chunk_ns) == 2


def test_missing_api_key_variable_is_a_clear_target_error(
        transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCEVAL_TEST_KEY", raising=False)
    ep = Endpoint(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="ACCEVAL_TEST_KEY",
                  transport=transport)
    with pytest.raises(TargetError, match="ACCEVAL_TEST_KEY"):
        OpenAITarget("t", ep)


def test_api_key_is_sent_but_never_shown(transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCEVAL_TEST_KEY", "sk-secret-123")
    recs, srv = run(_send_all(transport, ServerConfig(tokens=1), ["a"],
                              api_key_env="ACCEVAL_TEST_KEY"))
    assert srv.stats.last_headers["authorization"] == "Bearer sk-secret-123"
    t = OpenAITarget("t", Endpoint(base_url="http://127.0.0.1:9/v1", model="m",
                                   api_key_env="ACCEVAL_TEST_KEY", transport=transport))
    assert "sk-secret" not in repr(t) and "sk-secret" not in repr(recs[0])


def test_extra_headers_are_sent_and_line_breaks_rejected(transport: str) -> None:
    _, srv = run(_send_all(transport, ServerConfig(tokens=1), ["a"], headers={"X-Team": "perf%1"}))
    assert srv.stats.last_headers["x-team"] == "perf%1"
    bad = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "transport": transport,
           "headers": {"X-Bad": "a\r\nInjected: 1"}}
    with pytest.raises(ValidationError, match="control character"):
        Endpoint(**bad)
    # An endpoint built past its validators is still refused by the client.
    with pytest.raises(TargetError, match="control character"):
        OpenAITarget("t", Endpoint.model_construct(**bad))


def test_probe_reports_models_and_version(transport: str) -> None:
    async def go() -> dict[str, Any]:
        async with SSEServer(ServerConfig(model="served-model")) as srv:
            t = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m",
                                           transport=transport))
            try:
                return await t.probe()
            finally:
                await t.close()

    fp = run(go())
    assert fp.models == ["served-model"]
    assert fp.version == {"version": "sse-test-0"}
    assert fp.errors == []


def test_probe_never_raises_when_nothing_listens(transport: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

        async def go() -> dict[str, Any]:
            t = OpenAITarget("t", Endpoint(base_url=f"http://127.0.0.1:{port}/v1", model="m",
                                           transport=transport))
            try:
                return await t.probe(timeout_s=1.0)
            finally:
                await t.close()

        fp = run(go())
    assert fp.models is None and fp.errors and "cannot connect" in fp.errors[0]


@pytest.mark.parametrize("cached_as", ["usage", "timings"])
def test_cached_prompt_tokens_are_recorded_when_the_server_says(transport: str,
                                                                cached_as: str) -> None:
    recs, _ = run(_send_all(transport, ServerConfig(tokens=4, cached_tokens=3,
                                                    cached_as=cached_as), ["hi"]))
    assert recs[0].error_kind is None and recs[0].cached_prompt_tokens == 3
    silent, _ = run(_send_all(transport, ServerConfig(tokens=4), ["hi"]))
    assert silent[0].cached_prompt_tokens is None  # not said is not zero


def test_the_point_says_what_share_of_its_prompt_tokens_was_cached(transport: str) -> None:
    from acceval.metrics import summarize_point
    from acceval.results.records import records_to_table
    from acceval.study import SLO

    recs, _ = run(_send_all(transport, ServerConfig(tokens=4, cached_tokens=4), ["a", "b"]))
    s = summarize_point(records_to_table(recs), slo=SLO(), requested_rate_rps=None)
    assert s.cached_prompt_fraction == pytest.approx(4 / 5)
    recs, _ = run(_send_all(transport, ServerConfig(tokens=4), ["a"]))
    assert summarize_point(records_to_table(recs), slo=SLO(),
                           requested_rate_rps=None).cached_prompt_fraction is None
