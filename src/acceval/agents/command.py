"""Episodes of a user's own agent program (``agents.targets[].command``).

For each episode acceval starts the scenario (:class:`~acceval.agents.env.EpisodeEnv`), points
the tool server at it (:mod:`acceval.agents.toolserver`), and launches the program in its own
process group with the endpoint and the goal in its environment. The episode ends when the
program calls ``done`` (it then has ``grace_s`` to exit), exits, reaches the step limit, or
runs out of time; on every one of these paths, and on an error or a cancellation, the whole
process group is ended (SIGTERM, then SIGKILL). The program's output goes to a log file
beside the records, with the study's API keys redacted. The state is judged from the app,
as for every agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from acceval.agents.browser import Browser
from acceval.agents.env import Episode, EpisodeEnv, EpisodePlan, ModelTurn, Step, World
from acceval.agents.proxy import PLACEHOLDER_KEY, RecordingProxy
from acceval.agents.spec import AgentCommand
from acceval.agents.spec import Gate as GateSpec
from acceval.agents.tools import SYSTEM_PROMPT
from acceval.agents.toolserver import ToolServer
from acceval.redaction import copy_scrubbed

_POLL_S = 0.05
_TERM_WAIT_S = 3.0


def program_environment(command: AgentCommand, server: ToolServer, env: EpisodeEnv,
                        proxy: RecordingProxy | None = None) -> dict[str, str]:
    """What the program finds in its environment (docs/agents.md). With a recording proxy
    the OpenAI clients' own variables point at it, and the upstream's key is not there:
    the proxy adds it, so the program has no key to print."""
    out = {**os.environ, **command.env,
           "ACCEVAL_MCP_URL": server.mcp_url, "ACCEVAL_API_URL": server.api_url,
           "ACCEVAL_GOAL": env.goal, "ACCEVAL_SYSTEM_PROMPT": SYSTEM_PROMPT,
           "ACCEVAL_SCENARIO": env.plan.scenario.id,
           "ACCEVAL_EPISODE": str(env.plan.episode),
           "ACCEVAL_MAX_STEPS": str(env.max_steps)}
    if proxy is not None:
        if proxy.upstream.api_key_env:
            out.pop(proxy.upstream.api_key_env, None)
        out.update({"ACCEVAL_MODEL_URL": proxy.url, "OPENAI_BASE_URL": proxy.url,
                    "OPENAI_API_KEY": PLACEHOLDER_KEY})
    return out


def settle_model_calls(out: Episode, proxy: RecordingProxy) -> None:
    """Keep the episode's proxied calls; those after its last tool call count with its last
    step (they are part of what the episode cost)."""
    rest = proxy.turn(len(out.steps) - 1) if out.steps else None
    if rest is not None:
        _add(out.steps[-1], rest)
    out.model_calls = proxy.reset()


def _add(step: Step, turn: ModelTurn) -> None:
    if step.model_ms == 0:  # no call was handed to it: the rest is all its model cost
        step.prompt_tokens, step.completion_tokens = turn.prompt_tokens, turn.completion_tokens
    else:
        step.prompt_tokens = _plus(step.prompt_tokens, turn.prompt_tokens)
        step.completion_tokens = _plus(step.completion_tokens, turn.completion_tokens)
    step.model_ms += turn.model_ms


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


async def run_command_episode(plan: EpisodePlan, command: AgentCommand, server: ToolServer,
                              world: World, browser: Browser, base_url: str, *, max_steps: int,
                              timeout_s: float, gate: GateSpec, log_path: Path,
                              secrets: Sequence[str] = (),
                              proxy: RecordingProxy | None = None) -> Episode:
    """One episode driven by the program; never raises for what the program did. Its
    output reaches ``log_path`` through a pipe, with ``secrets`` (API keys the program may
    have read from its environment and printed, or a server it called echoed) redacted.
    With ``proxy`` (the target's recording proxy), the program's model calls through it
    give the steps their tokens and model time."""
    env = EpisodeEnv(plan, world, browser, base_url, gate, max_steps=max_steps)
    stopped: str | None = None
    error: str | None = None
    proc: asyncio.subprocess.Process | None = None
    log: BinaryIO | None = None
    copier: asyncio.Task[None] | None = None
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if proxy is not None:
            proxy.reset()
        await env.begin()
        server.attach(env, proxy)
        log = log_path.open("wb")
        proc = await asyncio.create_subprocess_exec(
            *command.argv, env=program_environment(command, server, env, proxy),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        assert proc.stdout is not None
        copier = asyncio.create_task(copy_scrubbed(proc.stdout, log, secrets))
        stopped = await _watch(proc, env, timeout_s, command.grace_s)
        if stopped == "agent_exit" and proc.returncode:
            error = f"the program exited with {proc.returncode} (its output: {log_path})"
    except OSError as exc:  # the program could not be started
        stopped, error = "agent_error", f"could not start {command.argv[0]}: {exc}"
    except Exception as exc:  # a browser failure ends the episode, not the run
        stopped, error = "browser_error", f"{type(exc).__name__}: {exc}"
    finally:
        server.attach(None)
        if proc is not None:
            await end_group(proc)
        await _close_log(copier, log)
        if proxy is not None:
            settle_model_calls(env.out, proxy)
    return await env.end(stopped, error)


async def _close_log(copier: asyncio.Task[None] | None, log: BinaryIO | None) -> None:
    """Let the copy reach the pipe's end, then close the log. A process that left the
    program's group may still hold the pipe: the copy stops after a short wait."""
    if copier is not None:
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(copier, _TERM_WAIT_S)
    if log is not None:
        log.close()


async def _watch(proc: asyncio.subprocess.Process, env: EpisodeEnv, timeout_s: float,
                 grace_s: float) -> str:
    """Why the episode ended: done, the program's exit, the step limit or the time."""
    deadline = time.monotonic() + timeout_s
    done_at: float | None = None
    while True:
        if proc.returncode is not None:
            return "done" if env.out.said_done else "agent_exit"
        now = time.monotonic()
        if env.out.said_done:
            done_at = done_at or now
            if now - done_at >= grace_s:
                return "done"
        elif len(env.out.steps) >= env.max_steps:
            return "max_steps"
        if now >= deadline:
            return "timeout"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _POLL_S)


async def end_group(proc: asyncio.subprocess.Process) -> None:
    """End the program's whole process group: SIGTERM, then SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(proc.wait(), _TERM_WAIT_S)
        except TimeoutError:
            continue
        # the leader is gone; its children may not be: make sure of the group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return


__all__ = ["end_group", "program_environment", "run_command_episode", "settle_model_calls"]
