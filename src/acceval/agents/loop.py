"""The agent loop: one episode of one scenario, the model called through the OpenAI chat API
with tools, each tool call carried out by the episode's environment
(:mod:`acceval.agents.env`), every step stamped and stored raw.

The loop only measures. It records each reply's latency and tokens beside the step the
environment recorded. Whether the episode was correct, silent or forbidden is
:mod:`acceval.agents.analyze`'s to say, from these records.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import aiohttp

from acceval.agents.browser import Browser
from acceval.agents.env import Episode, EpisodeEnv, EpisodePlan, ModelTurn, Step, World
from acceval.agents.spec import Gate as GateSpec
from acceval.agents.tools import SYSTEM_PROMPT, TOOLS
from acceval.targets.spec import Endpoint


class ModelError(Exception):
    """The endpoint did not answer with a usable chat completion."""


class ChatClient:
    """The OpenAI chat API with tools, not streamed (one tool call per reply)."""

    def __init__(self, endpoint: Endpoint, session: aiohttp.ClientSession) -> None:
        self.endpoint, self._session = endpoint, session
        key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
        self._headers = {**endpoint.headers, **({"Authorization": f"Bearer {key}"}
                                                if key else {})}

    async def chat(self, messages: list[dict[str, Any]], seed: int,
                   tools: list[dict[str, Any]]) -> dict[str, Any]:
        body = {"model": self.endpoint.model, "messages": messages, "tools": tools,
                "tool_choice": "auto", "temperature": self.endpoint.temperature, "seed": seed}
        timeout = aiohttp.ClientTimeout(total=self.endpoint.timeout_s,
                                        connect=self.endpoint.connect_timeout_s)
        try:
            async with self._session.post(f"{self.endpoint.base_url}/chat/completions",
                                          json=body, headers=self._headers,
                                          timeout=timeout) as resp:
                text = await resp.text()
                if resp.status != 200:
                    raise ModelError(f"HTTP {resp.status}: {text[:200]}")
        except aiohttp.ClientError as exc:
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        try:
            data = json.loads(text)
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"not a chat completion: {text[:200]}") from exc
        if not isinstance(message, dict):
            raise ModelError("the reply's message is not an object")
        return {"message": message, "usage": data.get("usage") or {}}


async def run_episode(plan: EpisodePlan, client: ChatClient, world: World, browser: Browser,
                      base_url: str, *, max_steps: int, timeout_s: float,
                      gate: GateSpec | None = None) -> Episode:
    """One episode, start to checker; never raises for what the agent or model did."""
    env = EpisodeEnv(plan, world, browser, base_url, gate or GateSpec(), max_steps=max_steps)
    stopped: str | None = None
    error: str | None = None
    try:
        async with asyncio.timeout(timeout_s):
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": await env.begin()}]
            await _steps(env, client, messages, TOOLS)
    except TimeoutError:
        stopped = "timeout"
    except ModelError as exc:
        stopped, error = "model_error", str(exc)
    except Exception as exc:  # a browser failure ends the episode, not the run
        stopped, error = "browser_error", f"{type(exc).__name__}: {exc}"
    return await env.end(stopped, error)


async def _steps(env: EpisodeEnv, client: ChatClient, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]]) -> None:
    while not env.finished:
        started = time.perf_counter_ns()
        reply = await client.chat(messages, env.plan.seed, tools)
        model_ms = (time.perf_counter_ns() - started) / 1e6
        message, usage = reply["message"], reply["usage"]
        calls = message.get("tool_calls") or []
        text = str(message.get("content") or "")
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        turn = ModelTurn(model_ms, prompt if isinstance(prompt, int) else None,
                         completion if isinstance(completion, int) else None, started, text)
        messages.append({"role": "assistant", "content": message.get("content"),
                         "tool_calls": calls} if calls else
                        {"role": "assistant", "content": text})
        if not calls:
            env.record_no_call(turn)
            return
        for i, call in enumerate(calls):
            fn = call.get("function") or {}
            name, raw = str(fn.get("name", "")), str(fn.get("arguments") or "{}")
            first = turn if i == 0 else ModelTurn(0.0, None, None, time.perf_counter_ns(),
                                                  text)
            content = await env.call(name, raw, first)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                             "content": content})
            if env.out.said_done:
                return


__all__ = ["ChatClient", "Episode", "EpisodePlan", "ModelError", "Step", "run_episode"]
