"""Running the ``agents:`` section: the shop, one server per scripted policy, one Chromium,
and every planned episode against every agent target, one after the other.

The episode plan (which perturbation after which step) is drawn once from the section's
seed and is the same for every target. A target that cannot be reached is noted and the
others still run; a missing browser skips the whole part with a one-line note.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from acceval.agents.app import Shop, ShopServer
from acceval.agents.browser import Browser, BrowserError, unavailable
from acceval.agents.command import run_command_episode
from acceval.agents.env import Episode, EpisodePlan, World
from acceval.agents.flows import FlowApp, FlowScenario
from acceval.agents.loop import ChatClient, ModelError, run_episode
from acceval.agents.policy import PolicyServer
from acceval.agents.proxy import RecordingProxy
from acceval.agents.sets import load_set, selected
from acceval.agents.spec import Agents, AgentTarget
from acceval.agents.store import (
    AGENTS_DIR,
    AgentRecords,
    AgentsLog,
    model_calls_table,
    tables,
    write,
)
from acceval.agents.toolserver import ToolServer, missing
from acceval.errors import AccevalError
from acceval.redaction import keys_of, scrub
from acceval.targets.spec import Endpoint


def plan(spec: Agents, base_dir: Path | None = None) -> list[EpisodePlan]:
    """Every episode of the section, in order; seeded, the same for every target."""
    rng = random.Random(f"agents:{spec.seed}")
    out: list[EpisodePlan] = []
    for scenario in selected(load_set(spec.scenarios, base_dir), spec.only):
        kinds = [k for k in spec.perturbations.kinds if k in scenario.perturbations]
        for trial in range(spec.trials):
            kind = None
            if kinds and rng.random() < spec.perturbations.share:
                kind = rng.choice(kinds)
            after = rng.randrange(0, scenario.steps) if kind else 0
            out.append(EpisodePlan(scenario, trial, len(out), kind, after,
                                   rng.randrange(2**31)))
    return out


class LocalHandle(Protocol):
    """A local engine's server, started for an agent target (``serve:``)."""

    @property
    def base_url(self) -> str: ...
    @property
    def model_name(self) -> str: ...
    async def close(self) -> None: ...


#: Starts a local engine by name and options in the running loop (the composer provides
#: it: the agents concept does not start engines itself).
StartEngine = Callable[[str, dict[str, Any]], Awaitable[LocalHandle]]


def execute_agents(spec: Agents, run_dir: Path, base_dir: Path | None = None, *,
                   start_engine: StartEngine | None = None,
                   secrets: Sequence[str] = ()) -> AgentRecords:
    """Run the section and write its records into ``run_dir/agents/``.

    ``secrets``: API keys to keep out of the records and the programs' logs besides those
    of the section's own endpoints (the composer gives the whole study's: a user's agent
    program runs with the user's environment and may print any of them)."""
    started = time.perf_counter()
    keys = tuple(dict.fromkeys(
        (*keys_of(t.key_env for t in spec.targets),
         *secrets)))
    why = unavailable()
    if why is not None:
        log = AgentsLog(skipped=f"agents part skipped: {why}")
        empty = tables([])
        write(run_dir, *empty, log)
        return AgentRecords(*empty, log)
    log = AgentsLog()
    try:
        done = asyncio.run(_run(spec, log, Path(run_dir) / AGENTS_DIR / "logs", base_dir,
                                start_engine, keys))
    except BrowserError as exc:
        log.skipped = f"agents part skipped: {exc}"
        done = []
    log.wall_s = time.perf_counter() - started
    log.failures = {k: scrub(v, keys) for k, v in log.failures.items()}
    steps, episodes = tables(done, keys)
    write(run_dir, steps, episodes, log, model_calls_table(done, keys))
    return AgentRecords(steps, episodes, log)


async def _run(spec: Agents, log: AgentsLog, logs: Path, base_dir: Path | None,
               start_engine: StartEngine | None,
               secrets: Sequence[str]) -> list[tuple[str, Episode]]:
    shop = Shop()
    server = ShopServer(shop)
    base = await server.start()
    browser = Browser()
    out: list[tuple[str, Episode]] = []
    try:
        await browser.start()
        log.browser = browser.version
        episodes = plan(spec, base_dir)
        async with aiohttp.ClientSession() as session:
            for target in spec.targets:
                if target.command is not None:
                    out += await _program(spec, target, episodes, shop, browser, base, log,
                                          logs, secrets)
                    continue
                out += await _target(spec, target, episodes, shop, browser, base, session, log,
                                     start_engine)
    finally:
        await browser.stop()
        await server.stop()
    return out


async def _where(p: EpisodePlan, shop: Shop, base: str) -> tuple[World, str]:
    """The app an episode acts on, and its address: a user's flow runs on the user's app,
    behind the perturbing proxy when the episode meets a perturbation."""
    if isinstance(p.scenario, FlowScenario):
        app = FlowApp()
        if p.perturbation is not None:
            return app, await app.serve(p.scenario.base_url)
        return app, p.scenario.base_url
    return shop, base


async def _done_with(world: World) -> None:
    if isinstance(world, FlowApp):
        await world.close()


async def _target(spec: Agents, target: AgentTarget, episodes: list[EpisodePlan], shop: Shop,
                  browser: Browser, base: str, session: aiohttp.ClientSession,
                  log: AgentsLog, start_engine: StartEngine | None
                  ) -> list[tuple[str, Episode]]:
    policy = PolicyServer(target.policy) if target.policy is not None else None
    local: LocalHandle | None = None
    try:
        if policy is not None:
            url = await policy.start()
            endpoint = Endpoint(base_url=url, model=policy.model, api="chat", stream=False)
        elif target.serve is not None:
            if start_engine is None:
                raise AccevalError("no way to start a local engine was given to this run")
            local = await start_engine(target.serve.engine, dict(target.serve.options))
            endpoint = Endpoint(base_url=local.base_url, model=local.model_name, api="chat",
                                stream=False)
        else:
            assert target.endpoint is not None
            endpoint = target.endpoint
        log.targets[target.name] = target.source
        client = ChatClient(endpoint, session)
        out = []
        for p in episodes:
            world, url = await _where(p, shop, base)
            try:
                ep = await run_episode(p, client, world, browser, url,
                                       max_steps=spec.max_steps, timeout_s=spec.timeout_s,
                                       gate=spec.gate)
            finally:
                await _done_with(world)
            out.append((target.name, ep))
            if ep.stopped_by == "model_error" and not ep.steps:
                log.failures[target.name] = ep.error or "the endpoint did not answer"
                break  # an endpoint that answers nothing would fail every episode alike
        return out
    except (OSError, ModelError, AccevalError) as exc:
        log.failures[target.name] = str(exc)
        return []
    finally:
        if policy is not None:
            await policy.stop()
        if local is not None:
            await local.close()


__all__ = ["execute_agents", "plan"]


async def _program(spec: Agents, target: AgentTarget, episodes: list[EpisodePlan], shop: Shop,
                   browser: Browser, base: str, log: AgentsLog, logs: Path,
                   secrets: Sequence[str]) -> list[tuple[str, Episode]]:
    """A user's own agent program: the tool server up for the target, one launch per
    episode."""
    assert target.command is not None
    why = missing()
    if why is not None:
        log.failures[target.name] = why
        return []
    server = ToolServer()
    await server.start()
    model = target.command.model
    proxy = RecordingProxy(model) if model is not None else None
    log.targets[target.name] = target.source
    out = []
    try:
        if proxy is not None:
            await proxy.start()
        for p in episodes:
            world, url = await _where(p, shop, base)
            try:
                ep = await run_command_episode(
                    p, target.command, server, world, browser, url,
                    max_steps=spec.max_steps, timeout_s=spec.timeout_s, gate=spec.gate,
                    log_path=logs / f"{target.name}-{p.episode}.log", secrets=secrets,
                    proxy=proxy)
            finally:
                await _done_with(world)
            out.append((target.name, ep))
            if ep.stopped_by == "agent_error":
                log.failures[target.name] = ep.error or "the program could not be started"
                break  # a program that cannot start would fail every episode alike
    finally:
        if proxy is not None:
            await proxy.stop()
        await server.stop()
    return out
