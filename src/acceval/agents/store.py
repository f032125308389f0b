"""The agents part of a run folder: raw per-step and per-episode records and a small log.

``agents/steps.parquet`` has one row per tool call, ``agents/episodes.parquet`` one row per
episode (its plan, the perturbation's stamps, the checker's reading of the server state),
``agents/log.json`` what ran (or why nothing did). ``acceval report --recompute`` re-analyses
them like the request records.

A run imported from an agent benchmark (``acceval import --format tau-bench|tau2|agentlab``)
has ``agents/imported.parquet`` instead: one row per trial as the benchmark's file gave it
(:class:`ImportedTrial`), and the token prices declared at import in the log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from acceval.redaction import scrub

if TYPE_CHECKING:
    from acceval.agents.env import Episode

AGENTS_DIR = "agents"
STEPS_FILE = "steps.parquet"
EPISODES_FILE = "episodes.parquet"
LOG_FILE = "log.json"
IMPORTED_FILE = "imported.parquet"
MODEL_CALLS_FILE = "model_calls.parquet"

STEP_SCHEMA = pa.schema([
    ("target", pa.string()), ("scenario", pa.string()), ("trial", pa.int32()),
    ("episode", pa.int32()), ("step", pa.int32()), ("tool", pa.string()),
    ("arguments", pa.string()), ("ok", pa.bool_()), ("error", pa.string()),
    ("irreversible", pa.string()), ("confirmed", pa.bool_()), ("model_ms", pa.float64()),
    ("action_ms", pa.float64()), ("prompt_tokens", pa.int64()),
    ("completion_tokens", pa.int64()), ("started_ns", pa.int64()), ("done_ns", pa.int64()),
    ("observation", pa.string()), ("content", pa.string()), ("effects", pa.string()),
    ("page_before", pa.string()), ("page_after", pa.string()), ("gate", pa.string()),
    ("refused", pa.int32()),
])
EPISODE_SCHEMA = pa.schema([
    ("target", pa.string()), ("scenario", pa.string()), ("steps_required", pa.int32()),
    ("irreversible_scenario", pa.bool_()), ("trial", pa.int32()), ("episode", pa.int32()),
    ("perturbation", pa.string()), ("perturb_after", pa.int32()), ("onset_ns", pa.int64()),
    ("onset_step", pa.int32()), ("resolved_ns", pa.int64()), ("resolved_step", pa.int32()),
    ("state_ok", pa.bool_()), ("state_problem", pa.string()), ("said_done", pa.bool_()),
    ("stopped_by", pa.string()), ("started_ns", pa.int64()), ("done_ns", pa.int64()),
    ("error", pa.string()),
])
#: One row per model call an agent program made through the recording proxy.
MODEL_CALL_SCHEMA = pa.schema([
    ("target", pa.string()), ("scenario", pa.string()), ("episode", pa.int32()),
    ("call", pa.int32()), ("step", pa.int32()), ("path", pa.string()), ("status", pa.int32()),
    ("stream", pa.bool_()), ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
    ("model_ms", pa.float64()), ("started_ns", pa.int64()), ("done_ns", pa.int64()),
    ("error", pa.string()),
])
IMPORTED_SCHEMA = pa.schema([
    ("target", pa.string()), ("tool", pa.string()), ("file", pa.string()),
    ("task_id", pa.string()), ("trial", pa.int32()), ("reward", pa.float64()),
    ("success", pa.bool_()), ("error", pa.string()), ("stopped_by", pa.string()),
    ("steps", pa.int32()), ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
    ("cost_usd", pa.float64()), ("duration_s", pa.float64()),
])


@dataclass(slots=True)
class ImportedTrial:
    """One trial (episode) of a task as an agent benchmark's result file gives it: the
    benchmark's own reward and success, and what it counted (None: the file does not say)."""

    target: str
    tool: str                       # tau-bench, tau2, agentlab
    file: str                       # the file's name, for provenance
    task_id: str
    trial: int
    reward: float | None
    success: bool
    error: str | None = None        # why the benchmark says the trial errored
    stopped_by: str | None = None   # the benchmark's termination reason
    steps: int | None = None        # agent turns (τ-bench, tau2) or actions (AgentLab)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None   # the agent's cost as the file states it (peer-computed)
    duration_s: float | None = None


@dataclass(slots=True)
class TokenPrices:
    """USD per million prompt and completion tokens, declared at import (a user assumption)."""

    input_usd_per_mtok: float
    output_usd_per_mtok: float
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"input_usd_per_mtok": self.input_usd_per_mtok,
                "output_usd_per_mtok": self.output_usd_per_mtok, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TokenPrices:
        return cls(input_usd_per_mtok=float(d["input_usd_per_mtok"]),
                   output_usd_per_mtok=float(d["output_usd_per_mtok"]), source=d.get("source"))


@dataclass(slots=True)
class AgentsLog:
    """What the agents part ran, or why it did not."""

    skipped: str | None = None
    browser: str | None = None                       # Chromium's version
    targets: dict[str, str] = field(default_factory=dict)  # name -> "scripted policy" / URL
    failures: dict[str, str] = field(default_factory=dict)  # name -> why it was not run
    wall_s: float | None = None
    token_prices: TokenPrices | None = None          # declared at import (imported runs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"skipped": self.skipped, "browser": self.browser,
                               "targets": self.targets, "failures": self.failures,
                               "wall_s": self.wall_s}
        if self.token_prices is not None:
            out["token_prices"] = self.token_prices.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AgentsLog:
        prices = d.get("token_prices")
        return cls(skipped=d.get("skipped"), browser=d.get("browser"),
                   targets=dict(d.get("targets") or {}), failures=dict(d.get("failures") or {}),
                   wall_s=d.get("wall_s"),
                   token_prices=TokenPrices.from_dict(prices) if prices else None)


@dataclass(slots=True)
class AgentRecords:
    """What analysis reads: the two tables (empty when nothing ran) and the log."""

    steps: pa.Table
    episodes: pa.Table
    log: AgentsLog
    imported: pa.Table = field(default_factory=IMPORTED_SCHEMA.empty_table)

    def imported_trials(self) -> list[ImportedTrial]:
        return [ImportedTrial(**row) for row in self.imported.to_pylist()]


def tables(target_episodes: list[tuple[str, Episode]],
           secrets: Sequence[str] = ()) -> tuple[pa.Table, pa.Table]:
    """The two record tables of ``target_episodes``, with ``secrets`` (the API keys in use)
    redacted from every text a model, an agent program or a page put there."""
    steps: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    for target, ep in target_episodes:
        p = ep.plan
        key = {"target": target, "scenario": p.scenario.id, "trial": p.trial,
               "episode": p.episode}
        for s in ep.steps:
            steps.append({**key, "step": s.step, "tool": s.tool, "arguments": s.arguments,
                          "ok": s.ok, "error": s.error, "irreversible": s.irreversible,
                          "confirmed": s.confirmed, "model_ms": s.model_ms,
                          "action_ms": s.action_ms, "prompt_tokens": s.prompt_tokens,
                          "completion_tokens": s.completion_tokens,
                          "started_ns": s.started_ns, "done_ns": s.done_ns,
                          "observation": s.observation, "content": s.content,
                          "effects": s.effects, "page_before": s.page_before,
                          "page_after": s.page_after, "gate": s.gate,
                          "refused": s.refused})
        episodes.append({**key, "steps_required": p.scenario.steps,
                         "irreversible_scenario": p.scenario.irreversible,
                         "perturbation": p.perturbation, "perturb_after": p.after_step,
                         "onset_ns": ep.onset_ns, "onset_step": ep.onset_step,
                         "resolved_ns": ep.resolved_ns, "resolved_step": ep.resolved_step,
                         "state_ok": ep.state_problem is None,
                         "state_problem": ep.state_problem, "said_done": ep.said_done,
                         "stopped_by": ep.stopped_by, "started_ns": ep.started_ns,
                         "done_ns": ep.done_ns, "error": ep.error})
    if secrets:
        steps, episodes = _scrubbed(steps, secrets), _scrubbed(episodes, secrets)
    return (pa.Table.from_pylist(steps, schema=STEP_SCHEMA),
            pa.Table.from_pylist(episodes, schema=EPISODE_SCHEMA))


def model_calls_table(target_episodes: list[tuple[str, Episode]],
                      secrets: Sequence[str] = ()) -> pa.Table:
    """The proxied model calls of ``target_episodes`` (acceval.agents.proxy), one row each;
    ``step`` is the step whose tokens and model time include it."""
    rows = [{"target": target, "scenario": ep.plan.scenario.id, "episode": ep.plan.episode,
             "call": i, "step": c.step, "path": c.path, "status": c.status, "stream": c.stream,
             "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
             "model_ms": c.model_ms, "started_ns": c.started_ns, "done_ns": c.done_ns,
             "error": c.error}
            for target, ep in target_episodes for i, c in enumerate(ep.model_calls)]
    return pa.Table.from_pylist(_scrubbed(rows, secrets), schema=MODEL_CALL_SCHEMA)


def _scrubbed(rows: list[dict[str, Any]], secrets: Sequence[str]) -> list[dict[str, Any]]:
    return [{k: scrub(v, secrets) if isinstance(v, str) else v for k, v in row.items()}
            for row in rows]


def imported_table(trials: list[ImportedTrial]) -> pa.Table:
    return pa.Table.from_pylist([{f: getattr(t, f) for f in IMPORTED_SCHEMA.names}
                                 for t in trials], schema=IMPORTED_SCHEMA)


def write_imported(run_dir: Path, trials: list[ImportedTrial], log: AgentsLog) -> None:
    """An imported run's agents part: the trials and the log (no steps or episodes)."""
    folder = Path(run_dir) / AGENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(imported_table(trials), folder / IMPORTED_FILE)
    (folder / LOG_FILE).write_text(json.dumps(log.to_dict(), indent=2), encoding="utf-8")


def write(run_dir: Path, steps: pa.Table, episodes: pa.Table, log: AgentsLog,
          model_calls: pa.Table | None = None) -> None:
    folder = Path(run_dir) / AGENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    if steps.num_rows or episodes.num_rows:
        pq.write_table(steps, folder / STEPS_FILE)
        pq.write_table(episodes, folder / EPISODES_FILE)
    if model_calls is not None and model_calls.num_rows:
        pq.write_table(model_calls, folder / MODEL_CALLS_FILE)
    (folder / LOG_FILE).write_text(json.dumps(log.to_dict(), indent=2), encoding="utf-8")


def read(run_dir: Path) -> AgentRecords | None:
    """The agents part of a run folder (None: the run had none)."""
    folder = Path(run_dir) / AGENTS_DIR
    if not (folder / LOG_FILE).exists():
        return None
    log = AgentsLog.from_dict(json.loads((folder / LOG_FILE).read_text(encoding="utf-8")))
    imported = (pq.read_table(folder / IMPORTED_FILE) if (folder / IMPORTED_FILE).exists()
                else IMPORTED_SCHEMA.empty_table())
    if (folder / STEPS_FILE).exists() and (folder / EPISODES_FILE).exists():
        return AgentRecords(_with_all_columns(pq.read_table(folder / STEPS_FILE), STEP_SCHEMA),
                            pq.read_table(folder / EPISODES_FILE), log, imported)
    return AgentRecords(STEP_SCHEMA.empty_table(), EPISODE_SCHEMA.empty_table(), log, imported)


def _with_all_columns(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A table written before a column existed gets it, all null (the gate's columns)."""
    for f in schema:
        if f.name not in table.column_names:
            table = table.append_column(f, pa.nulls(table.num_rows, f.type))
    return table


__all__ = ["AGENTS_DIR", "EPISODE_SCHEMA", "IMPORTED_FILE", "IMPORTED_SCHEMA",
           "MODEL_CALLS_FILE", "MODEL_CALL_SCHEMA", "STEP_SCHEMA", "AgentRecords", "AgentsLog",
           "ImportedTrial", "TokenPrices", "imported_table", "model_calls_table", "read",
           "tables", "write", "write_imported"]
