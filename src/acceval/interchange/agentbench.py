"""Agent benchmarks' per-trial results, read: τ-bench, τ²-bench (tau2) and AgentLab.

Each reader turns one file into :class:`~acceval.agents.store.ImportedTrial` rows; the
benchmark's own judgement of a trial (its reward, and success as the benchmark defines it)
is kept as given. Formats and mapping: docs/agents.md, *Importing agent benchmark results*.

- τ-bench (sierra-research/tau-bench ``run.py``): a JSON list of ``EnvRunResult``
  ``{task_id, reward, info, traj, trial}``; ``traj`` holds the OpenAI-style messages.
- tau2 (sierra-research/tau2-bench): a ``Results`` JSON object whose ``simulations`` each
  have ``task_id``, ``trial``, ``reward_info.reward``, ``termination_reason``, ``duration``,
  ``agent_cost`` and ``messages`` (assistant messages may carry ``usage``). Either one file
  (tau2's ``json`` layout, text runs' default) or its ``dir`` layout (voice runs' default,
  ``tau2 convert-results``, leaderboard submissions): ``results.json`` without the
  simulations, with a ``simulation_index``, beside ``simulations/<id>.json``, one each.
- AgentLab / BrowserGym: one ``summary_info.json`` per episode, in a folder named
  ``<date>_<agent>_on_<task>_<seed>``: ``cum_reward``, ``n_steps``, ``err_msg``, and the
  summed step stats as flat ``stats.cum_*`` keys (tokens, cost, elapsed times).

A trial is successful when its reward is within 1e-6 of 1, the rule of τ-bench's and tau2's
own metrics (``is_successful``); AgentLab's rewards are 0 or 1 on its benchmarks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from acceval.agents.store import ImportedTrial
from acceval.interchange._common import Unmapped, number

_TOLERANCE = 1e-6
#: tau2's termination reasons that are errors (the others are stops: user, agent, limits).
_TAU2_ERRORS = frozenset({"agent_error", "user_error", "too_many_errors",
                          "context_window_exceeded", "unexpected_error"})
_TAU2_MAPPED = frozenset({"id", "task_id", "timestamp", "start_time", "end_time", "duration",
                          "termination_reason", "agent_cost", "reward_info", "messages",
                          "trial", "seed", "mode", "info"})
#: tau2 leaves these out of its own metrics (the simulation never ran).
_TAU2_LEFT_OUT = "infrastructure_error"
# τ-bench's checkpoint name: <strategy>-<model>-<temperature>_range_<start>-<end>_user-...
_TAU_BENCH_NAME = re.compile(r"^(?:tool-calling|act|react|few-shot)-(?P<model>.+)-"
                             r"[0-9.]+_range_")
# AgentLab's episode folder: [<date>_<time>_]<agent>_on_<task>_<seed>[_<tag>]
_AGENTLAB_DIR = re.compile(r"^(?:\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_)?(?P<agent>.+?)_on_"
                           r"(?P<task>.+?)_(?P<seed>\d+)(?:_[0-9a-f]+)?$")


def successful(reward: float | None) -> bool:
    return reward is not None and abs(reward - 1.0) <= _TOLERANCE


def _required_number(data: dict[str, Any], key: str, where: str) -> float:
    if key not in data:
        raise ValueError(f"{where}: no '{key}' field")
    v = number(data[key])
    if v is None:
        raise ValueError(f"{where}.{key}: not a number (got {data[key]!r:.60})")
    return v


def _task_id(data: dict[str, Any], where: str) -> str:
    if "task_id" not in data:
        raise ValueError(f"{where}: no 'task_id' field")
    v = data["task_id"]
    if isinstance(v, bool) or not isinstance(v, int | str) or v == "":
        raise ValueError(f"{where}.task_id: not a task id (got {v!r:.60})")
    return str(v)


def _trial(data: dict[str, Any], where: str) -> int | None:
    v = data.get("trial")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{where}.trial: not a trial number (got {v!r:.60})")
    return v


def _messages(data: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    v = data.get(key) or []
    if not isinstance(v, list) or not all(isinstance(m, dict) for m in v):
        raise ValueError(f"{where}.{key}: not a list of messages")
    return v


def _assistant_turns(messages: list[dict[str, Any]]) -> int | None:
    """The agent's turns (each a tool call or a reply to the user); None without messages."""
    return sum(m.get("role") == "assistant" for m in messages) if messages else None


def read_tau_bench(path: Path, data: Any, unmapped: Unmapped) -> list[ImportedTrial]:
    """A τ-bench results file (``results/<strategy>-<model>-..._<time>.json``)."""
    if not isinstance(data, list):
        raise ValueError("a τ-bench results file is a JSON list of {task_id, reward, info, "
                         "traj, trial}")
    match = _TAU_BENCH_NAME.match(path.name)
    target = match["model"] if match else "tau-bench-agent"
    out = []
    for i, r in enumerate(data):
        where = f"[{i}]"
        if not isinstance(r, dict):
            raise ValueError(f"{where}: not an object")
        trial = _trial(r, where)
        if trial is None:
            raise ValueError(f"{where}: no 'trial' field")
        reward = _required_number(r, "reward", where)
        info = r.get("info") or {}
        if not isinstance(info, dict):
            raise ValueError(f"{where}.info: not an object")
        traj = _messages(r, "traj", where)
        unmapped.rest(r, {"task_id", "reward", "info", "traj", "trial"}, "[].")
        unmapped.rest(info, {"task", "source", "reward_info", "error", "traceback"}, "[].info.")
        error = info.get("error")
        out.append(ImportedTrial(
            target=target, tool="tau-bench", file=path.name, task_id=_task_id(r, where),
            trial=trial, reward=reward, success=successful(reward),
            error=str(error)[:500] if error else None, steps=_assistant_turns(traj)))
    return out


TAU2_SIMULATIONS_DIR = "simulations"
TAU2_RESULTS_FILE = "results.json"


def tau2_layout(path: Path) -> tuple[Path, Path | None]:
    """Where a tau2 run's metadata is and its ``simulations/`` folder (None: one JSON holds
    everything), by tau2's own rule (``Results._detect_format``): a folder, or a file with a
    ``simulations/`` folder beside it, is the ``dir`` layout. A folder holding only a
    one-file ``results.json`` (where ``tau2 run`` saves text runs) reads as that file."""
    meta = path / TAU2_RESULTS_FILE if path.is_dir() else path
    sims = meta.parent / TAU2_SIMULATIONS_DIR
    return meta, sims if sims.is_dir() else None


def tau2_index_problem(meta: Any, ids: list[str]) -> str | None:
    """What tau2's own loader would refuse in a ``dir`` layout: simulation files missing
    from, or not in, the metadata's ``simulation_index`` (when it has one)."""
    index = meta.get("simulation_index") if isinstance(meta, dict) else None
    if index is None:
        return None
    if not isinstance(index, list) or not all(isinstance(e, dict) and "id" in e
                                              for e in index):
        return "simulation_index: not a list of {id, ...}"
    indexed, on_disk = {str(e["id"]) for e in index}, set(ids)
    said = []
    if indexed - on_disk:
        said.append(f"missing simulation files: {', '.join(sorted(indexed - on_disk))}")
    if on_disk - indexed:
        said.append(f"simulation files not in the index: {', '.join(sorted(on_disk - indexed))}")
    return "; ".join(said) or None


def read_tau2(path: Path, data: Any, unmapped: Unmapped, sim_files: list[str] | None = None
              ) -> tuple[list[ImportedTrial], str | None]:
    """A tau2 ``Results`` JSON (``tau2 run ... --save-to``); also the version it names.
    ``sim_files`` (the ``dir`` layout: ``path`` is its ``results.json``) names each
    simulation's own file, in order, for the errors; its trials then name the run's
    ``simulations/`` folder as their file, one name however many simulations it holds."""
    if not isinstance(data, dict) or "simulations" not in data:
        raise ValueError("no 'simulations' field, so this is not a tau2 results file")
    sims = data["simulations"]
    if not isinstance(sims, list):
        raise ValueError("simulations: not a list")
    file = path.name if sim_files is None else \
        f"{path.parent.name}/{TAU2_SIMULATIONS_DIR}/"
    wheres = sim_files or [f"simulations[{i}]" for i in range(len(sims))]
    if len(wheres) != len(sims):
        raise ValueError(f"{len(sims)} simulations but {len(wheres)} simulation files")
    info = data.get("info") or {}
    agent = (info.get("agent_info") or {}) if isinstance(info, dict) else {}
    target = str(agent.get("llm") or agent.get("implementation") or "tau2-agent")
    out: list[ImportedTrial] = []
    seen: dict[str, int] = defaultdict(int)
    for sim, where in zip(sims, wheres, strict=True):
        if not isinstance(sim, dict):
            raise ValueError(f"{where}: not an object")
        reason = str(sim.get("termination_reason") or "") or None
        if reason == _TAU2_LEFT_OUT:
            unmapped.add("simulations[] (infrastructure_error: left out, as tau2's metrics do)")
            continue
        out.append(_tau2_trial(file, sim, where, target, reason, seen, unmapped))
    commit = info.get("git_commit") if isinstance(info, dict) else None
    return out, (f"tau2 {str(commit)[:12]}" if commit else None)


def _tau2_trial(file: str, sim: dict[str, Any], where: str, target: str, reason: str | None,
                seen: dict[str, int], unmapped: Unmapped) -> ImportedTrial:
    task = _task_id(sim, where)
    trial = _trial(sim, where)
    if trial is None:  # tau2 leaves it out for a single trial: number them in order
        trial = seen[task]
    seen[task] += 1
    reward_info = sim.get("reward_info")
    if reward_info is None:
        reward = None
        unmapped.add("simulations[].reward_info (missing: counted as not successful)")
    elif isinstance(reward_info, dict):
        reward = _required_number(reward_info, "reward", f"{where}.reward_info")
    else:
        raise ValueError(f"{where}.reward_info: not an object")
    messages = _messages(sim, "messages", where)
    prompt, completion = _usage(messages)
    unmapped.rest(sim, _TAU2_MAPPED, "simulations[].")
    return ImportedTrial(
        target=target, tool="tau2", file=file, task_id=task, trial=trial, reward=reward,
        success=successful(reward), error=reason if reason in _TAU2_ERRORS else None,
        stopped_by=reason, steps=_assistant_turns(messages), prompt_tokens=prompt,
        completion_tokens=completion, cost_usd=number(sim.get("agent_cost")),
        duration_s=number(sim.get("duration")))


def _usage(messages: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    """The agent's prompt and completion tokens over its messages' ``usage``; None unless
    every assistant message carries both."""
    mine = [m for m in messages if m.get("role") == "assistant"]
    prompt = completion = 0
    for m in mine:
        usage = m.get("usage")
        p = number(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
        c = number(usage.get("completion_tokens")) if isinstance(usage, dict) else None
        if p is None or c is None:
            return None, None
        prompt, completion = prompt + int(p), completion + int(c)
    return (prompt, completion) if mine else (None, None)


# AgentLab's token and cost stats: its LLM tracker's names, then the older OpenAI callback's.
_AGENTLAB_PROMPT = ("stats.cum_input_tokens", "stats.cum_openai_prompt_tokens")
_AGENTLAB_COMPLETION = ("stats.cum_output_tokens", "stats.cum_openai_completion_tokens")
_AGENTLAB_COST = ("stats.cum_cost", "stats.cum_openai_total_cost")
_AGENTLAB_MAPPED = frozenset({"n_steps", "cum_reward", "cum_raw_reward", "err_msg",
                              "stack_trace", "terminated", "truncated", "stats.cum_steps",
                              "stats.cum_step_elapsed", "stats.cum_agent_elapsed",
                              *_AGENTLAB_PROMPT, *_AGENTLAB_COMPLETION, *_AGENTLAB_COST})


def read_agentlab(path: Path, data: Any, unmapped: Unmapped) -> ImportedTrial:
    """One AgentLab episode's ``summary_info.json``; the task and seed come from the name of
    its folder (AgentLab keeps them in a pickle, which acceval does not load)."""
    where = path.name
    if not isinstance(data, dict):
        raise ValueError("an AgentLab summary_info.json is one JSON object")
    folder = _AGENTLAB_DIR.match(path.parent.name)
    if folder is None:
        raise ValueError(f"its folder {path.parent.name!r} is not named as AgentLab names an "
                         "episode's (<date>_<agent>_on_<task>_<seed>), which gives the task")
    reward = _required_number(data, "cum_reward", where)
    steps = _required_number(data, "n_steps", where)
    unmapped.rest({k: v for k, v in data.items() if not k.startswith("stats.max_")},
                  _AGENTLAB_MAPPED, "summary_info.")
    err = data.get("err_msg")
    env_s, agent_s = (number(data.get("stats.cum_step_elapsed")),
                      number(data.get("stats.cum_agent_elapsed")))
    prompt, completion = _first(data, _AGENTLAB_PROMPT), _first(data, _AGENTLAB_COMPLETION)
    return ImportedTrial(
        target=folder["agent"], tool="agentlab", file=f"{path.parent.name}/{path.name}",
        task_id=folder["task"], trial=int(folder["seed"]), reward=reward,
        success=successful(reward), error=str(err)[:500] if err else None,
        stopped_by=_agentlab_stop(data), steps=int(steps),
        prompt_tokens=None if prompt is None else int(prompt),
        completion_tokens=None if completion is None else int(completion),
        cost_usd=_first(data, _AGENTLAB_COST),
        duration_s=env_s + agent_s if env_s is not None and agent_s is not None else None)


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    return next((v for k in keys if (v := number(data.get(k))) is not None), None)


def _agentlab_stop(data: dict[str, Any]) -> str | None:
    if data.get("err_msg"):
        return "error"
    if data.get("terminated"):
        return "terminated"
    return "truncated" if data.get("truncated") else None


def number_agentlab_trials(trials: list[ImportedTrial]) -> list[ImportedTrial]:
    """AgentLab repeats a task with another seed: its trials, numbered from 0 by seed."""
    by_task: dict[tuple[str, str], list[ImportedTrial]] = defaultdict(list)
    for t in trials:
        by_task[(t.target, t.task_id)].append(t)
    for group in by_task.values():
        for i, t in enumerate(sorted(group, key=lambda t: (t.trial, t.file))):
            t.trial = i
    return trials


__all__ = ["TAU2_RESULTS_FILE", "TAU2_SIMULATIONS_DIR", "number_agentlab_trials",
           "read_agentlab", "read_tau2", "read_tau_bench", "successful", "tau2_index_problem",
           "tau2_layout"]
