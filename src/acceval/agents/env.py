"""One episode's environment: the app, the browser tab, the gate and the record of each step.

Whoever drives the agent (acceval's own loop over the chat API, :mod:`acceval.agents.loop`,
or an agent program through the tool server, :mod:`acceval.agents.toolserver`) calls the
same tools here, so an episode is recorded and judged the same way whoever drove it. The
environment carries out each tool call (a browser action in Chromium, a confirmation given
to the gate, a question to a human), strikes the plan's perturbation after its step, and
records what the app and the gate saw. The final state is read from the app, never from the
agent's words.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from acceval.agents.browser import ActionResult, Browser, Tab
from acceval.agents.gate import Gate, Guard
from acceval.agents.spec import Gate as GateSpec
from acceval.agents.tools import BROWSER_TOOLS, task_message

#: Observations kept per step in the records (the transcript of a failed task).
KEEP_OBSERVATION_CHARS = 4000
HUMAN_REPLY = ("Human: I cannot do it for you; please carry on with the task as described.")
TOOL_NAMES = (*BROWSER_TOOLS, "confirm", "ask_human", "done")


class ScenarioLike(Protocol):
    """What an episode reads of a scenario, built-in (:mod:`.scenarios`) or a user's flow
    (:mod:`.flows`)."""

    @property
    def id(self) -> str: ...
    @property
    def goal(self) -> str: ...
    @property
    def start(self) -> str: ...
    @property
    def steps(self) -> int: ...
    @property
    def irreversible(self) -> bool: ...
    @property
    def guards(self) -> tuple[Guard, ...]: ...
    @property
    def perturbations(self) -> tuple[str, ...]: ...


class World(Protocol):
    """The app an episode acts on: the built-in shop (:class:`acceval.agents.app.Shop`) or a
    user's app (:class:`acceval.agents.flows.FlowApp`)."""

    effects: list[dict[str, Any]]      # what each request changed, when the app says so
    perturbation: Any                  # the perturbation switched on (onset/resolved stamps)

    async def begin(self, scenario: Any) -> tuple[str, str] | None: ...

    def perturb(self, kind: str) -> None: ...

    def mark_onset(self) -> None: ...

    async def problem(self, scenario: Any, tab: Any) -> str | None: ...


@dataclass(frozen=True, slots=True)
class EpisodePlan:
    """One episode: the same plan (perturbation and its step) for every target."""

    scenario: Any               # a ScenarioLike: a built-in scenario or a user's flow
    trial: int
    episode: int
    perturbation: str | None
    after_step: int            # browser actions before it strikes (0: before the first)
    seed: int


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """What the model's reply cost, for the first tool call of that reply (for an agent
    program: its model calls through the recording proxy since its last tool call; None
    when there were none or acceval saw no model)."""

    model_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    started_ns: int
    content: str = ""


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
    gate: str | None = None             # the gate's verdicts in this step, "action:verdict"
    refused: int = 0                    # irreversible requests the gate refused


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
    #: the program's model calls through the recording proxy (acceval.agents.proxy)
    model_calls: list[Any] = field(default_factory=list)


class EpisodeEnv:
    """The environment of one episode, from :meth:`begin` to :meth:`end`."""

    def __init__(self, plan: EpisodePlan, world: World, browser: Browser, base_url: str,
                 gate: GateSpec, *, max_steps: int) -> None:
        self.plan, self.world, self.browser, self.base_url = plan, world, browser, base_url
        self.gate = Gate(plan.scenario.guards, gate.mode, gate.window_steps)
        self.max_steps = max_steps
        self.out = Episode(plan)
        self.tab: Tab | None = None
        self.actions = 0
        self.goal = ""

    @property
    def finished(self) -> bool:
        return self.out.said_done or len(self.out.steps) >= self.max_steps

    async def begin(self) -> str:
        """A fresh app and page; returns the task message (goal and first observation)."""
        cookie = await self.world.begin(self.plan.scenario)
        self.tab = await self.browser.page(self.base_url, cookie)
        await self.tab.guard(self.gate)
        self.out.started_ns = time.perf_counter_ns()
        await self.tab.goto(self.plan.scenario.start)
        if self.plan.perturbation and self.plan.after_step == 0:
            await self._strike(during_step=False)
        s = self.plan.scenario
        self.goal = task_message(s.id, s.goal, await self.tab.observe(), s.guards)
        return self.goal

    async def observe(self) -> str:
        assert self.tab is not None
        return await self.tab.observe()

    async def call(self, name: str, raw: str, turn: ModelTurn | None) -> str:
        """Carry out one tool call and record it as a step; returns the tool's result."""
        started = turn.started_ns if turn is not None else time.perf_counter_ns()
        try:
            args = json.loads(raw or "{}")
            args = args if isinstance(args, dict) else {}
        except ValueError:
            args = {}
        act_start, mark = time.perf_counter_ns(), len(self.gate.decisions)
        self.gate.step = len(self.out.steps)
        effect: tuple[str, str, str] | None = None
        if len(self.out.steps) >= self.max_steps:
            res, content = ActionResult(False, "the step limit is reached"), "error: the " \
                "episode's step limit is reached; call done"
        elif name == "done":
            res, content = ActionResult(True), "ok: episode ended"
            self.out.said_done, self.out.stopped_by = True, "done"
        else:
            res, content, effect = await self._act(name, args)
        decisions = self.gate.since(mark)
        passed = [d for d in decisions if not d.refused]
        refused = [d for d in decisions if d.refused]
        if refused and res.ok:
            res = ActionResult(False, f"refused by the gate ({refused[0].verdict})")
            content = f"refused: {refused[0].action} ({refused[0].verdict})\n" \
                + content.partition("\n")[2]
        done = time.perf_counter_ns()
        usage = (turn.prompt_tokens, turn.completion_tokens) if turn else (None, None)
        self.out.steps.append(Step(
            step=len(self.out.steps), tool=name, arguments=raw[:2000], ok=res.ok,
            error=res.error, irreversible=",".join(d.action for d in passed) or None,
            confirmed=all(d.verdict == "confirmed" for d in passed) if passed else None,
            model_ms=turn.model_ms if turn else 0.0, action_ms=(done - act_start) / 1e6,
            prompt_tokens=usage[0], completion_tokens=usage[1], started_ns=started,
            done_ns=done, observation=content[:KEEP_OBSERVATION_CHARS],
            content=(turn.content if turn else "")[:2000],
            effects=effect[0] if effect else None, page_before=effect[1] if effect else None,
            page_after=effect[2] if effect else None,
            gate=",".join(f"{d.action}:{d.verdict}" for d in decisions) or None,
            refused=len(refused)))
        return content

    def record_no_call(self, turn: ModelTurn) -> None:
        """A reply that called no tool ends the episode."""
        self.out.steps.append(Step(
            step=len(self.out.steps), tool="(no tool call)", arguments="", ok=False,
            error="the reply called no tool", irreversible=None, confirmed=None,
            model_ms=turn.model_ms, action_ms=0.0, prompt_tokens=turn.prompt_tokens,
            completion_tokens=turn.completion_tokens, started_ns=turn.started_ns,
            done_ns=time.perf_counter_ns(), observation="", content=turn.content[:2000]))
        self.out.stopped_by = "no_tool_call"

    async def _act(self, name: str, args: dict[str, Any]
                   ) -> tuple[ActionResult, str, tuple[str, str, str] | None]:
        if name == "confirm":
            action, obj = str(args.get("action", "")), str(args.get("object", ""))
            self.gate.confirm(action, obj)
            return (ActionResult(True), f"recorded: you confirmed {action!r} on {obj!r}; "
                    "do it in your next step.", None)
        if name == "ask_human":
            return ActionResult(True), HUMAN_REPLY, None
        if name not in BROWSER_TOOLS:
            return (ActionResult(False, f"unknown tool {name!r}"),
                    f"error: unknown tool {name}", None)
        assert self.tab is not None
        before, mark = self.tab.path(), len(self.world.effects)
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
        effects = list(self.world.effects[mark:])
        if res.filled is not None:
            effects.append({"kind": "fill", "field": res.filled,
                            "value": str(args.get("text", ""))})
        effect = (json.dumps(effects), before, self.tab.path())
        self.actions += 1
        if self.plan.perturbation and self.actions == self.plan.after_step:
            await self._strike(during_step=True)
        obs = await self.tab.observe()
        head = "ok" if res.ok else f"error: {res.error}"
        return res, f"{head}\n{obs}", effect

    async def _strike(self, *, during_step: bool) -> None:
        """The plan's perturbation, visible in the next observation. ``onset_step`` counts
        the steps taken before the agent could see it."""
        assert self.tab is not None
        self.world.perturb(str(self.plan.perturbation))
        await self.tab.reload()
        self.world.mark_onset()
        p = self.world.perturbation
        self.out.onset_ns = p.onset_ns if p is not None else None
        self.out.onset_step = len(self.out.steps) + (1 if during_step else 0)

    async def end(self, stopped_by: str | None = None, error: str | None = None) -> Episode:
        """Stop the episode and read the app's final state."""
        if stopped_by is not None:
            self.out.stopped_by = stopped_by
        if error is not None:
            self.out.error = error
        self.out.done_ns = time.perf_counter_ns()
        if self.tab is not None:
            # a browser that died already has no route to remove
            with contextlib.suppress(Exception):
                await self.tab.unguard()
        try:
            self.out.state_problem = await self.world.problem(self.plan.scenario, self.tab)
        except Exception as exc:  # a check that cannot be read is a wrong state, said why
            self.out.state_problem = f"the final state could not be read: {exc}"
        p = self.world.perturbation
        if p is not None and p.resolved_ns is not None:
            self.out.resolved_ns = p.resolved_ns
            self.out.resolved_step = next(
                (s.step for s in self.out.steps if s.done_ns >= p.resolved_ns),
                len(self.out.steps))
        return self.out


__all__ = ["HUMAN_REPLY", "KEEP_OBSERVATION_CHARS", "TOOL_NAMES", "Episode", "EpisodeEnv",
           "EpisodePlan", "ModelTurn", "Step"]
