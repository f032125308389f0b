"""The mock engine's scripted tool-calling mode behind ``acceval serve``'s OpenAI API, read by
the OpenAI Python client (the wire format's oracle): a request with tools gets one tool call
from the named policy, a request without tools still gets text, and a streamed tool request
is refused with a clear error."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from serve_support import run

from acceval.agents.tools import SYSTEM_PROMPT, TOOLS, task_message
from acceval.engines.base import check_engine
from acceval.engines.mock import MockEngine
from acceval.serve import start_server

if TYPE_CHECKING:  # the client is imported by the tests that use it (1 s per collecting worker)
    import openai

CHECKOUT = ('page /checkout (language en)\nheading "Review order"\ntext "1 × Aurora mug"\n'
            'text "Total: 12.00 EUR"\n[1] button "Place order"')


CATALOGUE = 'page /catalogue (language en)\n[1] button "Add Aurora mug to cart"'


def _messages() -> list[dict[str, object]]:
    """buy-one, three steps in (added, to the cart, to checkout): the policy reads where it
    is from the ids of its own earlier calls and their results."""
    goal = "Buy one Aurora mug and place the order."
    out: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task_message("buy-one", goal, CATALOGUE)}]
    for i in range(3):
        cid = f"i{i}-{i}"
        out += [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": cid, "type": "function",
                     "function": {"name": "click", "arguments": '{"ref": 1}'}}]},
                {"role": "tool", "tool_call_id": cid,
                 "content": "ok\n" + (CHECKOUT if i == 2 else CATALOGUE)}]
    return out


async def _ask(policy: str, **kw: object) -> openai.types.chat.ChatCompletion:
    import openai

    handle = await start_server(MockEngine(tool_policy=policy), engine_name="mock")
    try:
        client = openai.AsyncOpenAI(base_url=handle.base_url, api_key="none", max_retries=0)
        try:
            return await client.chat.completions.create(  # type: ignore[no-any-return]
                model=handle.model_name, messages=_messages(), **kw)  # type: ignore[arg-type]
        finally:
            await client.close()
    finally:
        await handle.close()


def test_a_request_with_tools_gets_the_policys_tool_call() -> None:
    careful = run(lambda: _ask("careful", tools=TOOLS, seed=1))
    (call,) = careful.choices[0].message.tool_calls or []
    assert careful.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "confirm"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {  # type: ignore[union-attr]
        "action": "place_order", "object": "1 x Aurora mug"}
    assert careful.usage is not None and careful.usage.completion_tokens > 0
    hasty = run(lambda: _ask("hasty", tools=TOOLS, seed=1))
    (call,) = hasty.choices[0].message.tool_calls or []
    assert (call.function.name,  # type: ignore[union-attr]
            json.loads(call.function.arguments)) == ("click", {"ref": 1})  # type: ignore[union-attr]


def test_a_request_without_tools_still_gets_text() -> None:
    reply = run(lambda: _ask("careful"))
    assert reply.choices[0].message.tool_calls is None
    assert reply.choices[0].message.content


def test_a_streamed_tool_request_is_refused_naming_the_field() -> None:
    import openai

    with pytest.raises(openai.BadRequestError, match="stream=false"):
        run(lambda: _ask("careful", tools=TOOLS, stream=True))


def test_an_unknown_policy_is_named_before_the_engine_starts() -> None:
    (problem,) = check_engine("mock", {"tool_policy": "sloppy"})
    assert problem[0] == "tool_policy" and "careful" in problem[1]
