"""The RunResult: one versioned object that every output format renders.

It holds the study as run, the environment, the seeds, the raw run log, and per target the
typed sections ``analyze`` computed (by pure functions) from the stored records; the run's
one :class:`~acceval.verdict.Verdict`. ``result.json`` is its JSON.

Schema 2 (acceval 0.2) types every section; a schema-1 ``result.json`` (acceval 0.1) is read
by re-analysing its records (see :func:`acceval.analysis.load_result`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from acceval.agents.result import AgentsResult
from acceval.capacity.apply import CapacityResult, DemandResult
from acceval.capacity.availability import AvailabilityResult
from acceval.capacity.replay import ReplayResult
from acceval.capacity.sweep import SweepResult
from acceval.claims.against import ClaimsResult
from acceval.claims.plan import PlanResult
from acceval.economics.apply import RunEconomics, TargetEconomics
from acceval.economics.energy import EnergyResult
from acceval.economics.spec import Platform
from acceval.errors import AccevalError, GateFailed
from acceval.interruption.recovery import InterruptionResult
from acceval.metrics import Accuracy, PassAt1
from acceval.metrics.spec import SLO, Quality
from acceval.portability.assess import PortabilityResult
from acceval.portability.exit import ExitResult
from acceval.quality import Gate
from acceval.results.files import write_text_durable
from acceval.results.runlog import EndpointLog, Fingerprint, LocalServerInfo, RunLog
from acceval.results.section import PointResult, RepeatsResult, Section
from acceval.seeds import Seed
from acceval.study import Study
from acceval.telemetry.accelerator import AcceleratorResult
from acceval.telemetry.summary import TelemetryResult
from acceval.training.result import TrainingResult
from acceval.verdict import Verdict

SCHEMA_VERSION = 2
RESULT_FILE = "result.json"


class Seeds(Section):
    """The run's seeds: the study's base seed (arrivals, sweep, demand: each dimension derives
    its own generator from it) and the tasks' seed (generation and sampling order)."""

    study: Seed
    tasks: Seed


class TasksRun(Section):
    """Which tasks the run sent: their source, how many, and how many attempts of each."""

    source: str
    count: int
    attempts: int = 1


class Environment(Section):
    """Where the analysis ran, and the folder the study's relative paths resolve from."""

    host: str | None = None
    platform: str | None = None
    machine: str | None = None
    cpu_count: int | None = None
    python: str | None = None
    study_dir: str | None = None


class TargetResult(Section):
    name: str
    endpoint: EndpointLog | None = None
    platform: Platform  # the study's platform block as declared
    fingerprint: Fingerprint = Field(default_factory=Fingerprint)
    local_server: LocalServerInfo | None = None
    points: list[PointResult] = Field(default_factory=list)
    accuracy: Accuracy | None = None
    pass_at_1: PassAt1 | None = None
    gate: Gate = Field(default_factory=lambda: Gate(passed=None, required_accuracy=None))
    economics: TargetEconomics | None = None
    capacity: CapacityResult | None = None
    availability: AvailabilityResult | None = None  # with or without a demand profile
    energy: EnergyResult | None = None
    portability: PortabilityResult | None = None
    exit: ExitResult | None = None
    telemetry: TelemetryResult | None = None
    accelerator: AcceleratorResult | None = None  # its exporter's devices, per load point
    failure: str | None = None
    sweep: SweepResult | None = None
    replay: ReplayResult | None = None
    interruption: InterruptionResult | None = None
    plan: PlanResult | None = None  # planned bounds (roofline), beside the measured points
    repeats: list[RepeatsResult] = Field(default_factory=list)  # load[].repeats > 1

    def repeats_of(self, label: str) -> RepeatsResult | None:
        return next((r for r in self.repeats if r.label == label), None)

    def point(self, label: str | None) -> PointResult | None:
        return next((p for p in self.points if p.label == label), None)

    @property
    def chips(self) -> int:
        return self.platform.chips


class RunResult(Section):
    schema_version: int = SCHEMA_VERSION
    run_id: str
    study_name: str
    created_utc: str
    finished_utc: str | None = None
    interrupted: bool = False
    study: Study  # the study as run (it holds no secrets: keys live in the environment)
    environment: Environment
    software: dict[str, str]
    seeds: Seeds
    tasks: TasksRun
    targets: list[TargetResult]
    economics: RunEconomics | None = None
    claims: ClaimsResult | None = None  # the claim ledger and the claims checked
    verdict: Verdict
    training: TrainingResult | None = None  # the study's training section (docs/training.md)
    warnings: list[str] = Field(default_factory=list)
    log: RunLog
    agents: AgentsResult | None = None  # agent workflows (docs/agents.md)
    demand: DemandResult | None = None  # the demand the fleets were sized for

    @property
    def slo(self) -> SLO:
        """The study's SLO as run (typed)."""
        return self.study.slo

    @property
    def quality(self) -> Quality:
        """The study's quality level as run (typed)."""
        return self.study.quality

    @property
    def description(self) -> str:
        return self.study.description

    def target(self, name: str) -> TargetResult:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def failed_gates(self) -> list[str]:
        return [t.name for t in self.targets if t.gate.passed is False]

    def all_failed(self) -> list[str]:
        """Targets that were sent requests and answered none of them."""
        out = []
        for t in self.targets:
            sent = sum(p.summary.requests for p in t.points)
            if sent and not sum(p.summary.ok for p in t.points):
                out.append(t.name)
        return out

    def raise_for_failures(self) -> None:
        """Exit 1 when a target failed every request: a run that measured only errors."""
        failed = self.all_failed()
        if failed:
            raise AccevalError(f"every request failed for: {', '.join(failed)} (see the "
                               "errors by kind in the report)")

    def raise_for_gates(self) -> None:
        """Exit 3 when a target failed the quality level and the study asked for it."""
        fail_exit = self.study.quality.fail_exit
        failed = self.failed_gates()
        if fail_exit and failed:
            raise GateFailed(f"quality gate failed for: {', '.join(failed)}")

    def save(self, run_dir: Path) -> Path:
        return write_text_durable(Path(run_dir) / RESULT_FILE, self.model_dump_json(indent=2))

    @classmethod
    def load(cls, run_dir: Path) -> RunResult:
        """Read a schema-2 result.json (older ones: :func:`acceval.analysis.load_result`),
        within the bounded reader's limits; :class:`DamagedResult` when it is empty,
        truncated or not a result."""
        text = read_result_text(run_dir)
        try:
            return cls.model_validate_json(text)
        except ValueError as exc:
            raise DamagedResult(Path(run_dir), _first_line(exc)) from None


class DamagedResult(AccevalError):
    """result.json is there but cannot be read (empty, truncated, garbage, not a result).

    The run's journal (runlog.json) and records rebuild it: ``report`` and ``run --resume``
    move it to ``quarantine/`` and do so (:func:`quarantine_result`)."""

    def __init__(self, run_dir: Path, problem: str) -> None:
        self.run_dir, self.problem = run_dir, problem
        super().__init__(f"{run_dir / RESULT_FILE} is damaged ({problem}); "
                         f"`acceval report {run_dir}` rebuilds it from the run's journal "
                         "and records\n  hint: if it was edited by hand, restore it from a "
                         "copy instead")


def _first_line(exc: Exception) -> str:
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    return " ".join(lines[:3])[:300] or type(exc).__name__


def read_result_text(run_dir: Path) -> str:
    """result.json's text, read as every input is (a regular file of at most
    :data:`~acceval.input_files.RESULT_MAX_BYTES`, UTF-8); :class:`DamagedResult` when it
    is empty or not text."""
    from acceval.errors import StudyError
    from acceval.input_files import RESULT_MAX_BYTES, read_text

    try:
        text = read_text(Path(run_dir) / RESULT_FILE, max_bytes=RESULT_MAX_BYTES,
                         what="result")
    except StudyError as exc:
        raise DamagedResult(Path(run_dir), str(exc).splitlines()[0]) from None
    if not text.strip():
        raise DamagedResult(Path(run_dir), "it is empty")
    return text


def schema_version_of(run_dir: Path) -> int:
    """The schema version a result.json was written with (1 when it does not say)."""
    from acceval.input_files import loads_json

    try:
        data = loads_json(read_result_text(run_dir))
    except ValueError as exc:
        raise DamagedResult(Path(run_dir), f"not JSON: {_first_line(exc)}") from None
    if not isinstance(data, dict):
        raise DamagedResult(Path(run_dir), "not a JSON object")
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        raise DamagedResult(Path(run_dir), f"schema_version {version!r} is not a number")
    return version


def quarantine_result(run_dir: Path) -> Path:
    """Move a damaged result.json into ``RUN_DIR/quarantine/`` (nothing is deleted) and
    return where it went."""
    import datetime as dt
    import os

    folder = Path(run_dir) / "quarantine"
    folder.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    dest = folder / f"{RESULT_FILE}.damaged-{stamp}"
    os.replace(Path(run_dir) / RESULT_FILE, dest)
    return dest
