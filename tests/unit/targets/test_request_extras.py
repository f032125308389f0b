"""Request extras per target (top_p, seed, stop, extra_body) and ignore_eos reach the wire;
extra_body cannot take over a field acceval writes."""

from __future__ import annotations

from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import run
from acceval.results.records import Record
from acceval.study import Endpoint, study_from_dict
from acceval.targets import OpenAITarget
from helpers.sse_server import ServerConfig, SSEServer


async def _body(prompt: Prompt, api: str = "completions", **ep: Any) -> dict[str, Any]:
    async with SSEServer(ServerConfig(tokens=2)) as srv:
        target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m", api=api, **ep))
        try:
            rec = Record("t", 0, "p", 1, "task")
            await target.send(prompt, rec, 0)
            assert rec.error_kind is None, rec.error_detail
        finally:
            await target.close()
        body: dict[str, Any] = srv.stats.last_body
        return body


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_sampling_fields_and_extra_body_are_sent(api: str) -> None:
    body = run(_body(Prompt("t", prompt="hi", max_tokens=5), api, top_p=0.9, seed=7,
                     stop=["\n\n", "END"], extra_body={"top_k": 20, "min_p": 0.05,
                                                       "chat_template_kwargs": {"x": True}}))
    assert body["top_p"] == 0.9 and body["seed"] == 7 and body["stop"] == ["\n\n", "END"]
    assert body["top_k"] == 20 and body["min_p"] == 0.05
    assert body["chat_template_kwargs"] == {"x": True}
    assert body["max_tokens"] == 5 and body["model"] == "m" and body["stream"] is True
    assert "ignore_eos" not in body


def test_unset_extras_are_not_sent() -> None:
    body = run(_body(Prompt("t", prompt="hi")))
    assert not {"top_p", "seed", "stop", "ignore_eos"} & set(body)


def test_a_task_asking_for_its_exact_length_sends_ignore_eos() -> None:
    body = run(_body(Prompt("t", prompt="hi", max_tokens=128, ignore_eos=True)))
    assert body["ignore_eos"] is True and body["max_tokens"] == 128


def _study(endpoint: dict[str, Any]) -> dict[str, Any]:
    return {"name": "s", "targets": [{"name": "a", "endpoint": {
        "base_url": "http://127.0.0.1:9/v1", "model": "m", **endpoint}}]}


@pytest.mark.parametrize(("field", "where"), [
    ("model", "endpoint.model"), ("messages", "tasks.source"), ("prompt", "tasks.source"),
    ("stream", "endpoint.stream"), ("max_tokens", "tasks.max_tokens"),
    ("top_p", "endpoint.top_p"), ("ignore_eos", "tasks.synthetic.ignore_eos")])
def test_extra_body_cannot_override_what_acceval_owns(field: str, where: str) -> None:
    with pytest.raises(StudyError) as err:
        study_from_dict(_study({"extra_body": {field: 1, "top_k": 5}}))
    (path, msg, _), = err.value.problems
    assert path == "targets[0].endpoint.extra_body"
    assert f"`{field}` is written by acceval" in msg and where in msg
    assert "top_k" not in msg


@pytest.mark.parametrize(("endpoint", "path"), [
    ({"top_p": 0}, "targets[0].endpoint.top_p"), ({"top_p": 1.5}, "targets[0].endpoint.top_p"),
    ({"seed": -1}, "targets[0].endpoint.seed"), ({"stop": [""]}, "targets[0].endpoint.stop"),
    ({"stop": []}, "targets[0].endpoint.stop")])
def test_bad_sampling_fields_name_their_path(endpoint: dict[str, Any], path: str) -> None:
    with pytest.raises(StudyError) as err:
        study_from_dict(_study(endpoint))
    assert [p for p, _, _ in err.value.problems] == [path]
