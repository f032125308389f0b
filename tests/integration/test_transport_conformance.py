"""The conformance suite every transport passes (docs/transports.md): framing, connections,
TLS, limits, retries and every fault kind, against real servers on 127.0.0.1; and the two
transports agree request by request.

Agreement, the stated tolerance: for the same request sequence against servers with fixed
delays, each request's TTFT and E2E minus what the server logged for that request (received
to first token written, received to last byte written) differ between the transports by at
most ``TOLERANCE_MS`` for 95 % of the requests, by at most ``TOLERANCE_MS / 2`` at the
median, and never by more than ``TOLERANCE_MS * 5`` (a scheduler hiccup on a loaded 2-core
machine); token counts, text, finish reasons and error kinds are equal, request by request.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acceval.collector import collector_paused
from acceval.engines.mock import MockEngine
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import run
from acceval.results.records import Record
from acceval.serve import start_server
from acceval.targets import OpenAITarget
from acceval.targets.spec import Endpoint
from acceval.targets.transport import TRANSPORTS
from helpers.sse_server import FAULT_KINDS, ServerConfig, SSEServer
from helpers.tls import self_signed, server_context

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

TOLERANCE_MS = 2.0

FAULTS = FAULT_KINDS
LIMIT = 2**20


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(autouse=True, scope="module")
def _no_collector_pauses() -> Iterator[None]:
    """As inside a load point (``run_point``): no garbage collection while requests are
    timed. A long test session's full collection took 0.3 s, past these tests' timeouts;
    what is alive before them is frozen out of it, and it runs again after them."""
    gc.collect()
    with collector_paused():
        yield


def _target(base_url: str, transport: str, **ep: Any) -> OpenAITarget:
    ep.setdefault("timeout_s", 5.0)
    return OpenAITarget("t", Endpoint(base_url=base_url, model="m", transport=transport, **ep))


async def _sequence(target: OpenAITarget, prompts: list[str], max_tokens: int = 8
                    ) -> list[Record]:
    recs = []
    try:
        for i, text in enumerate(prompts):
            rec = Record("t", 0, "p", i, text)
            await target.send(Prompt(text, prompt=text, max_tokens=max_tokens), rec, 0)
            recs.append(rec)
    finally:
        await target.close()
    return recs


async def _concurrent(target: OpenAITarget, n: int, concurrency: int) -> list[Record]:
    recs: list[Record] = []

    async def worker(w: int) -> None:
        for i in range(w, n, concurrency):
            rec = Record("t", 0, "p", i, "x")
            # The next send follows at once, before the loop has read the server's FIN.
            await target.send(Prompt("x", prompt="x", max_tokens=4), rec, 0)
            recs.append(rec)

    try:
        await asyncio.gather(*(worker(w) for w in range(concurrency)))
    finally:
        await target.close()
    return recs


def _served(cfg: ServerConfig, transport: str, prompts: list[str], *, ssl: Any = None,
            **ep: Any) -> tuple[list[Record], SSEServer, Any]:
    async def go() -> tuple[list[Record], SSEServer, Any]:
        async with SSEServer(cfg, ssl=ssl) as srv:
            target = _target(srv.base_url, transport, **ep)
            recs = await _sequence(target, prompts)
            return recs, srv, target.transport.stats

    return run(go())


def _ok(recs: list[Record], tokens: int) -> None:
    for r in recs:
        assert r.error_kind is None, r.error_detail
        assert r.output_tokens == tokens and r.output_text == "".join(
            f" t{i}" for i in range(tokens))
        assert r.sent_ns is not None and r.done_ns is not None and r.done_ns >= r.sent_ns


# --- connections -------------------------------------------------------------------------------

def test_keep_alive_reuses_one_connection(transport: str) -> None:
    recs, srv, stats = _served(ServerConfig(tokens=8), transport, ["a"] * 20)
    _ok(recs, 8)
    assert all(len(r.chunk_ns) == 8 and r.tokens_from == "usage" for r in recs)
    assert srv.stats.connections == 1 and srv.stats.requests == 20
    assert (stats.connects, stats.stale_found, stats.resends, stats.reuse) == (1, 0, 0, True)


@pytest.mark.parametrize("stream", [True, False])
def test_connection_close_answers_take_a_fresh_connection_each(transport: str,
                                                               stream: bool) -> None:
    recs, srv, stats = _served(ServerConfig(tokens=4, connection_close=True), transport,
                               ["a"] * 6, stream=stream)
    _ok(recs, 4)
    assert srv.stats.connections == 6 and srv.stats.requests == 6
    assert stats.connects == 6 and stats.resends == 0 and stats.stale_found == 0


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_server_that_closes_after_each_stream_gets_no_request_on_a_closed_connection(
        transport: str, concurrency: int) -> None:
    # llama.cpp's server closes after every streamed answer although it advertises
    # keep-alive. Here the server only shuts its side (a FIN) and keeps reading, and counts
    # every request that still arrives on such a connection: there must be none.
    async def go() -> tuple[list[Record], SSEServer, Any]:
        async with SSEServer(ServerConfig(tokens=4, half_close_after_stream=True)) as srv:
            target = _target(srv.base_url, transport)
            recs = await _concurrent(target, 40, concurrency)
            return recs, srv, target.transport.stats

    recs, srv, stats = run(go())
    assert [r.error_kind for r in recs] == [None] * 40
    assert srv.stats.late_requests == 0
    assert srv.stats.requests == 40 and srv.stats.connections == 40
    assert stats.resends == 0


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_server_that_closes_after_every_answer_is_learnt(transport: str,
                                                           concurrency: int) -> None:
    # As llama.cpp's server does: a full close after each stream, keep-alive advertised.
    async def go() -> tuple[list[Record], SSEServer, Any]:
        async with SSEServer(ServerConfig(tokens=4, close_after_stream=True)) as srv:
            target = _target(srv.base_url, transport)
            recs = await _concurrent(target, 40, concurrency)
            return recs, srv, target.transport.stats

    recs, srv, stats = run(go())
    assert [r.error_kind for r in recs] == [None] * 40
    assert stats.resends == 0
    assert srv.stats.requests == 40 and srv.stats.connections == 40
    assert not stats.reuse  # it learnt that the server closes after one answer


def test_connections_this_side_closed_teach_nothing_about_the_server(transport: str) -> None:
    # Two timeouts and a response the client gave up on close their fresh connections from
    # this side: the server did not close after one answer, and keep-alive goes on.
    prompts = ["fault:hang", "fault:hang", "fault:malformed", "a", "b", "c"]
    recs, srv, stats = _served(ServerConfig(tokens=2), transport, prompts, timeout_s=0.2)
    assert [r.error_kind for r in recs] == ["timeout", "timeout", "malformed", None, None, None]
    assert stats.reuse and stats.closed_after_one == 0
    assert srv.stats.connections <= 4  # the last three answers share one connection


def test_an_idle_connection_the_server_dropped_is_sent_again_once(transport: str) -> None:
    recs, srv, stats = _served(ServerConfig(tokens=2, drop_reused_once=True), transport,
                               ["a", "b", "c"])
    assert [r.error_kind for r in recs] == [None, None, None]
    assert srv.stats.connections == 2 and stats.resends == 1


def test_a_reset_on_a_reused_connection_is_not_sent_again(transport: str) -> None:
    """Issue 30: a reset after the server took the request was resent, so the server got
    it twice; only a clean close of an idle connection (a FIN) is resent."""
    recs, srv, stats = _served(ServerConfig(tokens=2, reset_reused_once=True), transport,
                               ["a", "b", "c"])
    assert [r.error_kind is None for r in recs] == [True, False, True]
    assert srv.stats.requests == 3 and stats.resends == 0


def test_a_cancelled_send_raises_and_leaves_no_connection_open(transport: str) -> None:
    async def go() -> SSEServer:
        async with SSEServer(ServerConfig(fault="hang")) as srv:
            target = _target(srv.base_url, transport)
            task = asyncio.ensure_future(target.send(Prompt("x", prompt="x"),
                                                     Record("t", 0, "p", 1, "x"), 0))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await target.close()
            for _ in range(100):  # the server sees the close within a few loop turns
                if not srv.conns:
                    break
                await asyncio.sleep(0.01)
            return srv

    assert not run(go()).conns


# --- framing -----------------------------------------------------------------------------------

@pytest.mark.parametrize("framing", ["chunked", "content-length", "until-close"])
def test_each_body_framing_is_read_whole(transport: str, framing: str) -> None:
    cfg = ServerConfig(tokens=6, until_close=framing == "until-close")
    recs, srv, _ = _served(cfg, transport, ["a", "b"], stream=framing != "content-length")
    _ok(recs, 6)
    for r in recs:
        assert r.finish_reason == "length" and r.http_status == 200
        if framing == "content-length":  # one JSON body: when its first token came is unknown
            assert r.first_token_ns is None and r.chunk_ns == []
        else:
            assert len(r.chunk_ns) == 6 and r.first_token_ns == r.chunk_ns[0]
    # A body that ends by closing takes its connection with it.
    assert srv.stats.connections == (2 if framing == "until-close" else 1)


def test_a_redirect_is_not_followed_and_a_cookie_not_kept(transport: str) -> None:
    recs, srv, _ = _served(ServerConfig(tokens=2), transport, ["fault:redirect", "a"])
    assert recs[0].http_status == 307 and recs[0].error_kind is not None
    assert recs[1].error_kind is None
    assert srv.stats.requests == 2 and "cookie" not in srv.stats.last_headers


# --- TLS ---------------------------------------------------------------------------------------

def test_tls_on_loopback_with_a_self_signed_certificate(
        transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed(tmp_path)
    ctx = server_context(cert, key)
    # Not trusted: the handshake fails, a connect error like any other.
    recs, srv, _ = _served(ServerConfig(tokens=3), transport, ["a"], ssl=ctx)
    assert recs[0].error_kind == "connect" and "certif" in str(recs[0].error_detail).lower()
    assert srv.stats.requests == 0
    # Trusted through the standard variable (a private CA): kept alive like plain TCP.
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    recs, srv, stats = _served(ServerConfig(tokens=3), transport, ["a"] * 5, ssl=ctx)
    assert srv.base_url.startswith("https://")
    _ok(recs, 3)
    assert srv.stats.connections == 1 and stats.connects == 1
    # A TLS server closing after each stream: its FIN is seen before the next request.
    recs, srv, stats = _served(ServerConfig(tokens=3, close_after_stream=True), transport,
                               ["a"] * 6, ssl=ctx)
    _ok(recs, 3)
    assert srv.stats.requests == 6 and stats.resends == 0


# --- limits ------------------------------------------------------------------------------------

def test_a_refused_connection_is_a_connect_error(transport: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"   # bound, never listening
        recs = run(_sequence(_target(url, transport), ["a"]))
    assert recs[0].error_kind == "connect" and "cannot connect" in str(recs[0].error_detail)


def test_the_connect_timeout_bounds_a_connect_that_hangs(transport: str) -> None:
    # A listener whose accept queue is full drops further SYNs: the connect hangs.
    with socket.socket() as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(0)
        addr = lst.getsockname()
        fillers = []
        for _ in range(8):
            f = socket.socket()
            f.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                f.connect(addr)
            fillers.append(f)
        try:
            recs = run(_sequence(_target(f"http://127.0.0.1:{addr[1]}/v1", transport,
                                         connect_timeout_s=0.2), ["a"]))
        finally:
            for f in fillers:
                f.close()
    rec = recs[0]
    assert rec.error_kind == "connect" and "connect timed out after 0.2 s" in str(
        rec.error_detail)
    assert rec.done_ns is not None and rec.sent_ns is not None
    assert 0.19e9 <= rec.done_ns - rec.sent_ns < 3e9


def test_retries_follow_the_policy(transport: str) -> None:
    recs, srv, _ = _served(ServerConfig(tokens=2, busy_first=2, retry_after="0.05"), transport,
                           ["a"], retry={"max_attempts": 3, "on": [503], "backoff_s": 0})
    rec = recs[0]
    assert rec.error_kind is None and rec.http_attempts == 3 and srv.stats.requests == 3
    assert rec.retry_after_s == 0.05
    recs, srv, _ = _served(ServerConfig(fault="close"), transport, ["a"],
                           retry={"max_attempts": 3, "on": ["connect"], "backoff_s": 0})
    assert (recs[0].error_kind, recs[0].http_attempts, srv.stats.requests) == ("connect", 3, 3)


def test_a_client_out_of_descriptors_is_a_client_error(transport: str) -> None:
    code = f'''
import asyncio, resource
from acceval.loadgen.protocol import Prompt
from acceval.results.records import Record
from acceval.targets.openai import OpenAITarget
from acceval.targets.spec import Endpoint

async def main():
    t = OpenAITarget("x", Endpoint(base_url="http://127.0.0.1:9/v1", model="m",
                                   transport="{transport}"))
    await t.send(Prompt(task_id="t", prompt="warm"), Record("x", 0, "p", 0, "t"), 0)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    held = []
    try:
        while True:
            held.append(open("/dev/null"))
    except OSError:
        pass
    rec = Record("x", 0, "p", 1, "t")
    await t.send(Prompt(task_id="t", prompt="hi"), rec, 0)
    for f in held:
        f.close()
    await t.close()
    print(rec.error_kind)

asyncio.run(main())
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["client"]


# --- faults ------------------------------------------------------------------------------------

def _faults(transport: str) -> list[Record]:
    # The hang waits for a short timeout; the others get room for a long session's garbage
    # collection (0.3 s seen), which would otherwise time them out.
    cfg = ServerConfig(tokens=4, big_bytes=8 * LIMIT)
    recs, _, _ = _served(cfg, transport, [f for f in FAULTS if f != "fault:hang"],
                         timeout_s=5.0, max_response_bytes=LIMIT)
    hang, _, _ = _served(cfg, transport, ["fault:hang"], timeout_s=0.3)
    return [*recs, *hang]


def test_every_fault_kind_of_the_test_server_is_classified(transport: str) -> None:
    for r in _faults(transport):
        assert r.error_kind == FAULTS[r.task_id], (r.task_id, r.error_kind, r.error_detail)
        assert r.done_ns is not None and r.sent_ns is not None and r.done_ns >= r.sent_ns
        assert r.error_detail is None or ("\n" not in r.error_detail
                                          and len(r.error_detail) < 400)
        assert (r.retry_after_s is not None) == (r.task_id in ("fault:http429", "fault:http503"))


def test_both_transports_record_every_fault_alike() -> None:
    native, other = _faults("native"), _faults("aiohttp")
    for a, b in zip(native, other, strict=True):
        same = ("task_id", "error_kind", "output_text", "output_tokens", "finish_reason",
                "tokens_from", "prompt_tokens")
        assert [getattr(a, k) for k in same] == [getattr(b, k) for k in same], a.task_id
        assert len(a.chunk_ns) == len(b.chunk_ns), a.task_id
        # An HTTP-date Retry-After counts down between the two runs.
        assert (a.retry_after_s is None) == (b.retry_after_s is None), a.task_id
        assert a.retry_after_s == pytest.approx(b.retry_after_s, abs=2.0), a.task_id
        # A broken Content-Length, or a broken chunk in the head's own read: the native
        # transport has passed the status line on before, aiohttp reports no head.
        if a.task_id not in ("fault:badchunk", "fault:badlength"):
            assert a.http_status == b.http_status, a.task_id


@pytest.mark.parametrize(("kind", "expected"), [("http500", "http"), ("http429", "http"),
                                                ("broken_stream", "stream_cut"),
                                                ("malformed", "malformed")])
def test_the_mock_engine_faults_reach_both_alike(transport: str, kind: str,
                                                 expected: str) -> None:
    async def go() -> list[Record]:
        handle = await start_server(MockEngine(error_rate=1.0, error_kinds=[kind],
                                               output_tokens=6), engine_name="mock")
        try:
            target = OpenAITarget("t", Endpoint(base_url=handle.base_url, model="mock",
                                                transport=transport))
            return await _sequence(target, ["a", "b"])
        finally:
            await handle.close()

    recs = run(go())
    assert [r.error_kind for r in recs] == [expected, expected], recs[0].error_detail
    status = int(kind[4:]) if expected == "http" else 200
    assert [r.http_status for r in recs] == [status, status]


# --- agreement ---------------------------------------------------------------------------------

def _errors_vs_server(transport: str) -> tuple[np.ndarray, np.ndarray, list[Record]]:
    async def go() -> tuple[list[Record], SSEServer]:
        async with SSEServer(ServerConfig(tokens=8, ttft_s=0.004, itl_s=0.001)) as srv:
            recs = await _sequence(_target(srv.base_url, transport), ["x"] * 40)
            return recs, srv

    recs, srv = run(go())
    ttft, e2e = [], []
    for r in recs:
        truth = srv.stats.truth[str(r.request_id)]
        assert r.error_kind is None and truth.first_token_ns and truth.done_ns
        assert r.first_token_ns is not None and r.done_ns is not None and r.sent_ns is not None
        assert r.output_tokens == len(r.chunk_ns) == truth.tokens == 8
        ttft.append((r.first_token_ns - r.sent_ns - (truth.first_token_ns - truth.recv_ns)) / 1e6)
        e2e.append((r.done_ns - r.sent_ns - (truth.done_ns - truth.recv_ns)) / 1e6)
    return np.array(ttft), np.array(e2e), recs


def test_both_transports_agree_per_request_within_the_tolerance() -> None:
    n_ttft, n_e2e, n_recs = _errors_vs_server("native")
    a_ttft, a_e2e, a_recs = _errors_vs_server("aiohttp")
    for ours, theirs in ((n_ttft, a_ttft), (n_e2e, a_e2e)):
        # A client cannot see a token before the server wrote it, nor answer before asking.
        assert ours.min() >= 0 and theirs.min() >= 0
        gap = np.abs(ours - theirs)
        assert np.percentile(gap, 95) <= TOLERANCE_MS, gap
        assert np.median(gap) <= TOLERANCE_MS / 2, gap
        assert gap.max() <= TOLERANCE_MS * 5, gap
    assert [r.output_text for r in n_recs] == [r.output_text for r in a_recs]
    assert [len(r.chunk_ns) for r in n_recs] == [len(r.chunk_ns) for r in a_recs]
