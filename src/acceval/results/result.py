"""The RunResult: one versioned object that every output format renders.

It holds the study as run, the environment, the seeds, and per target and load point the
summaries computed (by pure functions) from the stored records. ``result.json`` is its JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acceval.errors import GateFailed
from acceval.metrics import Accuracy, PassAt1, PointSummary

SCHEMA_VERSION = 1
RESULT_FILE = "result.json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PointResult(_Model):
    """One load point of one target: what was asked, what the generator did, what it measured."""

    index: int
    label: str
    kind: str
    level: float
    requested_rate_rps: float | None
    stopped_by: str
    sent: int
    completed: int
    started_ns: int
    ended_ns: int
    seeds: dict[str, Any] = Field(default_factory=dict)
    summary: PointSummary


class Gate(_Model):
    """The study's quality level applied to one target."""

    passed: bool | None  # None: no quality level was set, or no correctness information
    required_accuracy: float | None
    reasons: list[str] = Field(default_factory=list)


class LocalServerInfo(_Model):
    engine: str
    model: str | None
    precision: str | None
    pid: int | None
    startup_s: float | None  # process start until /health answered (compile + load + warm-up)


class TargetResult(_Model):
    name: str
    endpoint: dict[str, Any]  # base_url, model, api, stream; never a key
    platform: dict[str, Any]
    fingerprint: dict[str, Any] = Field(default_factory=dict)
    local_server: LocalServerInfo | None = None
    points: list[PointResult] = Field(default_factory=list)
    accuracy: Accuracy | None = None
    pass_at_1: PassAt1 | None = None
    gate: Gate = Field(default_factory=lambda: Gate(passed=None, required_accuracy=None))
    economics: dict[str, Any] | None = None
    energy: dict[str, Any] | None = None
    portability: dict[str, Any] | None = None  # three levels + migration ledger (portability)
    exit: dict[str, Any] | None = None         # exit test: exports, cost, readiness
    failure: str | None = None  # the target could not be measured at all, and why
    sweep: dict[str, Any] | None = None         # load-sweep search: steps, bracket, max rate
    replay: dict[str, Any] | None = None        # demand replay: its point, achieved per hour
    interruption: dict[str, Any] | None = None  # injected fault, its point and recovery


class RunResult(_Model):
    schema_version: int = SCHEMA_VERSION
    run_id: str
    study_name: str
    created_utc: str
    finished_utc: str | None = None
    interrupted: bool = False
    study: dict[str, Any]
    environment: dict[str, Any]
    software: dict[str, str]
    seeds: dict[str, Any]
    tasks: dict[str, Any]
    targets: list[TargetResult]
    economics: dict[str, Any] | None = None
    warnings: list[str] = Field(default_factory=list)

    def target(self, name: str) -> TargetResult:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def failed_gates(self) -> list[str]:
        return [t.name for t in self.targets if t.gate.passed is False]

    def raise_for_gates(self) -> None:
        """Exit 3 when a target failed the quality level and the study asked for it."""
        fail_exit = bool(self.study.get("quality", {}).get("fail_exit"))
        failed = self.failed_gates()
        if fail_exit and failed:
            raise GateFailed(f"quality gate failed for: {', '.join(failed)}")

    def save(self, run_dir: Path) -> Path:
        path = Path(run_dir) / RESULT_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, run_dir: Path) -> RunResult:
        path = Path(run_dir) / RESULT_FILE
        data = path.read_text(encoding="utf-8")
        return cls.model_validate_json(data)
