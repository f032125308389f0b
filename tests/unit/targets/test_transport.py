"""The transport interface's own parts: choosing one in a study, the idle-socket check, what
a transport learns of a server, and what it keeps out of sight."""

from __future__ import annotations

import importlib.util
import socket
from typing import Any

import pytest

from acceval.errors import StudyError, TargetError
from acceval.study import study_from_dict
from acceval.targets import OpenAITarget
from acceval.targets.spec import Endpoint
from acceval.targets.transport import (
    DEFAULT_TRANSPORT,
    TRANSPORTS,
    Request,
    TransportStats,
    make_transport,
    peer_closed,
)


def _study(endpoint: dict[str, Any]) -> dict[str, Any]:
    return {"name": "s", "targets": [{"name": "a", "endpoint": {
        "base_url": "http://127.0.0.1:8000/v1", "model": "m", **endpoint}}]}


def _problems(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    return {path: (msg, hint) for path, msg, hint in info.value.problems}


def test_the_native_transport_is_the_default_and_each_one_is_chosen_by_name() -> None:
    assert DEFAULT_TRANSPORT == "native" and set(TRANSPORTS) == {"native", "aiohttp"}
    s = study_from_dict(_study({}))
    assert s.targets[0].endpoint is not None and s.targets[0].endpoint.transport == "native"
    for name in TRANSPORTS:
        ep = study_from_dict(_study({"transport": name})).targets[0].endpoint
        assert ep is not None
        assert OpenAITarget("a", ep).transport.name == name


def test_an_unknown_transport_is_named_with_the_choices() -> None:
    probs = _problems(_study({"transport": "httpx"}))
    _, hint = probs["targets[0].endpoint.transport"]
    assert "native" in hint and "aiohttp" in hint


def test_a_missing_aiohttp_is_named_with_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "aiohttp" else real(name, *a))
    msg, _ = _problems(_study({"transport": "aiohttp"}))["targets[0].endpoint.transport"]
    assert "pip install 'acceval[aiohttp]'" in msg and "transport: native" in msg
    # An endpoint built past its validators is still refused when the client is made.
    ep = Endpoint.model_construct(base_url="http://127.0.0.1:9/v1", model="m",
                                  transport="aiohttp", **{
                                      k: f.default for k, f in Endpoint.model_fields.items()
                                      if k not in ("base_url", "model", "transport")
                                      and f.default_factory is None})
    with pytest.raises(TargetError, match=r"target 'a': endpoint.transport: .*acceval\[aiohttp\]"):
        OpenAITarget("a", ep)


def test_make_transport_refuses_an_unknown_name() -> None:
    with pytest.raises(TargetError, match="choose one of: native, aiohttp"):
        make_transport("curl", "http://127.0.0.1:9/v1", connect_timeout_s=1, max_body_bytes=10)


def test_a_request_never_shows_its_headers() -> None:
    r = Request("POST", "/v1/completions", (("Authorization", "Bearer sk-secret"),))
    assert "sk-secret" not in repr(r) and "/v1/completions" in repr(r)


def test_reuse_stops_after_two_connections_closed_after_one_answer_each() -> None:
    stats = TransportStats()
    assert not stats.closed_while_idle(5)       # a keep-alive timeout after many answers
    assert not stats.closed_while_idle(1) and stats.reuse
    assert stats.closed_while_idle(1) and not stats.reuse   # the second one turns it off
    assert not stats.closed_while_idle(1)       # and says so once


@pytest.mark.parametrize("tls", [False, True])
def test_peer_closed_sees_the_servers_fin(tls: bool) -> None:
    a, b = socket.socketpair()
    with a, b:
        assert not peer_closed(a.fileno(), tls)
        b.shutdown(socket.SHUT_WR)
        assert peer_closed(a.fileno(), tls)


def test_stray_bytes_make_a_plain_connection_stale_but_not_a_tls_one() -> None:
    # On TLS, records such as session tickets may wait unread on an open connection.
    a, b = socket.socketpair()
    with a, b:
        b.sendall(b"x")
        assert peer_closed(a.fileno(), tls=False)
        assert not peer_closed(a.fileno(), tls=True)
