"""The agent loop: one episode of one scenario, the model called through the OpenAI chat API
with tools, each tool call carried out in the browser, every step stamped and stored raw.

The loop only measures. It records each tool call (what was asked, whether it worked, the
model's latency and tokens, any irreversible action the server carried out and whether a
``confirm`` came before it) and, at the end, the checker's reading of the server's state.
Whether the episode was correct, silent or forbidden is :mod:`acceval.agents.analyze`'s to
say, from these records.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from acceval.agents.app import COOKIE, Shop
from acceval.agents.browser import ActionResult, Browser, Tab
from acceval.agents.scenarios import Scenario
from acceval.agents.tools import BROWSER_TOOLS, SYSTEM_PROMPT, TOOLS, task_message
from acceval.targets.spec import Endpoint

#: Observations kept per step in the records (the transcript of a failed task).
KEEP_OBSERVATION_CHARS = 4000
HUMAN_REPLY = ("Human: I cannot do it for you; please carry on with the task as described.")


@dataclass(frozen=True, slots=True)
class EpisodePlan:
    """One episode: the same plan (perturbation and its step) for every target."""

    scenario: Scenario
    trial: int
    episode: int
    perturbation: str | None
    after_step: int            # browser actions before it strikes (0: before the first)
    seed: int


@dataclass(slots=True)
class Step:
    step: int
    tool: str
    arguments: str
    ok: bool
    error: str | None
    irreversible: str | None
    confirmed: bool | None
    model_ms: float
    action_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    started_ns: int
    done_ns: int
    observation: str
    content: str
    effects: str | None = None          # JSON: what a browser action changed (see act)
    page_before: str | None = None
    page_after: str | None = None


@dataclass(slots=True)
class Episode:
    plan: EpisodePlan
    steps: list[Step] = field(default_factory=list)
    onset_ns: int | None = None
    onset_step: int | None = None
    resolved_ns: int | None = None
    resolved_step: int | None = None
    state_problem: str | None = None
    said_done: bool = False
    stopped_by: str = "max_steps"
    started_ns: int = 0
    done_ns: int = 0
    error: str | None = None


class ModelError(Exception):
    """The endpoint did not answer with a usable chat completion."""


class ChatClient:
    """The OpenAI chat API with tools, not streamed (one tool call per reply)."""

    def __init__(self, endpoint: Endpoint, session: aiohttp.ClientSession) -> None:
        self.endpoint, self._session = endpoint, session
        key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
        self._headers = {**endpoint.headers, **({"Authorization": f"Bearer {key}"}
                                                if key else {})}

    async def chat(self, messages: list[dict[str, Any]], seed: int) -> dict[str, Any]:
        body = {"model": self.endpoint.model, "messages": messages, "tools": TOOLS,
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


class _Episode:
    """The mutable part of one episode while it runs."""

    def __init__(self, plan: EpisodePlan, shop: Shop, tab: Tab, deadline: float) -> None:
        self.plan, self.shop, self.tab, self.deadline = plan, shop, tab, deadline
        self.out = Episode(plan)
        self.actions = 0
        self.pending_confirm = False
        self.seen_events = 0
        self.effect: tuple[str, str, str] | None = None  # the last action's, for its step

    def left_s(self) -> float:
        return self.deadline - time.monotonic()

    async def strike(self, *, during_step: bool) -> None:
        """The plan's perturbation, visible in the next observation. ``onset_step`` counts
        the steps taken before the agent could see it."""
        self.shop.perturb(str(self.plan.perturbation))
        await self.tab.reload()
        self.shop.mark_onset()
        p = self.shop.perturbation
        self.out.onset_ns = p.onset_ns if p is not None else None
        self.out.onset_step = len(self.out.steps) + (1 if during_step else 0)

    def irreversible(self) -> tuple[str | None, bool | None]:
        new = self.shop.events[self.seen_events:]
        self.seen_events = len(self.shop.events)
        if not new:
            return None, None
        confirmed = self.pending_confirm
        self.pending_confirm = False
        return ",".join(e.kind for e in new), confirmed

    async def act(self, name: str, args: dict[str, Any]) -> tuple[ActionResult, str]:
        if name == "confirm":
            self.pending_confirm = True
            return ActionResult(True), f"approved: {args.get('action', '')}. Go ahead."
        if name == "ask_human":
            return ActionResult(True), HUMAN_REPLY
        if name not in BROWSER_TOOLS:
            return ActionResult(False, f"unknown tool {name!r}"), f"error: unknown tool {name}"
        before, mark = self.tab.path(), len(self.shop.effects)
        try:
            if name == "click":
                res = await self.tab.click(int(args["ref"]))
            elif name == "type":
                res = await self.tab.type(int(args["ref"]), str(args["text"]))
            else:
                res = await self.tab.goto(str(args["path"]))
        except (KeyError, ValueError, TypeError) as exc:
            res = ActionResult(False, f"bad arguments for {name}: {exc}")
        # What the action did, before any perturbation strikes: the server's changes, the
        # field the page filled, and where the browser is now.
        effects = list(self.shop.effects[mark:])
        if res.filled is not None:
            effects.append({"kind": "fill", "field": res.filled,
                            "value": str(args.get("text", ""))})
        self.effect = (json.dumps(effects), before, self.tab.path())
        self.actions += 1
        if self.plan.perturbation and self.actions == self.plan.after_step:
            await self.strike(during_step=True)
        obs = await self.tab.observe()
        head = "ok" if res.ok else f"error: {res.error}"
        return res, f"{head}\n{obs}"


async def run_episode(plan: EpisodePlan, client: ChatClient, shop: Shop, browser: Browser,
                      base_url: str, *, max_steps: int, timeout_s: float) -> Episode:
    """One episode, start to checker; never raises for what the agent or model did."""
    token = shop.reset(signed_in=plan.scenario.signed_in)
    tab = await browser.page(base_url, (COOKIE, token) if token else None)
    ep = _Episode(plan, shop, tab, time.monotonic() + timeout_s)
    ep.out.started_ns = time.perf_counter_ns()
    try:
        await tab.goto(plan.scenario.start)
        if plan.perturbation and plan.after_step == 0:
            await ep.strike(during_step=False)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task_message(plan.scenario.id, plan.scenario.goal,
                                                     await tab.observe())}]
        await _steps(ep, client, messages, max_steps)
    except TimeoutError:
        ep.out.stopped_by = "timeout"
    except ModelError as exc:
        ep.out.stopped_by, ep.out.error = "model_error", str(exc)
    except Exception as exc:  # a browser failure ends the episode, not the run
        ep.out.stopped_by, ep.out.error = "browser_error", f"{type(exc).__name__}: {exc}"
    finally:
        ep.out.done_ns = time.perf_counter_ns()
        ep.out.state_problem = plan.scenario.check(shop.state())
        _resolution(ep)
    return ep.out


def _resolution(ep: _Episode) -> None:
    p = ep.shop.perturbation
    if p is not None and p.resolved_ns is not None:
        ep.out.resolved_ns = p.resolved_ns
        ep.out.resolved_step = next((s.step for s in ep.out.steps if s.done_ns >= p.resolved_ns),
                                    len(ep.out.steps))


async def _steps(ep: _Episode, client: ChatClient, messages: list[dict[str, Any]],
                 max_steps: int) -> None:
    while len(ep.out.steps) < max_steps:
        started = time.perf_counter_ns()
        async with asyncio.timeout(max(0.0, ep.left_s())):
            reply = await client.chat(messages, ep.plan.seed)
        model_ms = (time.perf_counter_ns() - started) / 1e6
        message, usage = reply["message"], reply["usage"]
        calls = message.get("tool_calls") or []
        messages.append({"role": "assistant", "content": message.get("content"),
                         "tool_calls": calls} if calls else
                        {"role": "assistant", "content": message.get("content") or ""})
        if not calls:
            ep.out.steps.append(_step(len(ep.out.steps), "(no tool call)", "", ActionResult(
                False, "the reply called no tool"), (None, None), model_ms, started, usage,
                "", str(message.get("content") or "")))
            ep.out.stopped_by = "no_tool_call"
            return
        for i, call in enumerate(calls):
            fn = call.get("function") or {}
            name, raw = str(fn.get("name", "")), str(fn.get("arguments") or "{}")
            try:
                args = json.loads(raw)
                args = args if isinstance(args, dict) else {}
            except ValueError:
                args = {}
            act_start = time.perf_counter_ns()
            ep.effect = None
            if name == "done":
                res, content = ActionResult(True), "ok: episode ended"
            else:
                async with asyncio.timeout(max(0.0, ep.left_s())):
                    res, content = await ep.act(name, args)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                             "content": content})
            ep.out.steps.append(_step(
                len(ep.out.steps), name, raw, res, ep.irreversible(),
                model_ms if i == 0 else 0.0, started, usage if i == 0 else {}, content,
                str(message.get("content") or ""), act_start=act_start, effect=ep.effect))
            if name == "done":
                ep.out.said_done, ep.out.stopped_by = True, "done"
                return


def _step(index: int, tool: str, raw: str, res: ActionResult,
          irreversible: tuple[str | None, bool | None], model_ms: float, started: int,
          usage: dict[str, Any], observation: str, content: str,
          act_start: int | None = None,
          effect: tuple[str, str, str] | None = None) -> Step:
    done = time.perf_counter_ns()
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return Step(step=index, tool=tool, arguments=raw[:2000], ok=res.ok, error=res.error,
                irreversible=irreversible[0], confirmed=irreversible[1], model_ms=model_ms,
                action_ms=(done - act_start) / 1e6 if act_start else 0.0,
                prompt_tokens=prompt if isinstance(prompt, int) else None,
                completion_tokens=completion if isinstance(completion, int) else None,
                started_ns=started, done_ns=done,
                observation=observation[:KEEP_OBSERVATION_CHARS], content=content[:2000],
                effects=effect[0] if effect else None,
                page_before=effect[1] if effect else None,
                page_after=effect[2] if effect else None)


__all__ = ["ChatClient", "Episode", "EpisodePlan", "ModelError", "Step", "run_episode"]
