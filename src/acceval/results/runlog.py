"""The raw log of a run: what each target ran and what the run noticed, with no summaries.

``execute`` fills it while measuring; ``analyze`` turns it, with the stored records and
samples, into a :class:`~acceval.run_result.RunResult`. It is stored inside
``result.json`` so that ``acceval report --recompute`` (and ``--set``) is ``analyze`` over
the same log.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, JsonValue

from acceval.metrics import Distribution
from acceval.results.section import PeerFigures, Section


class FaultStamps(Section):
    """The injected fault's stamps (perf ns relative to t0) and what its commands returned."""

    action: str
    at_s: float
    down_s: float | None = None
    fault_ns: int | None = None
    restore_ns: int | None = None
    ready_ns: int | None = None
    restart_s: float | None = None
    command_rc: int | None = None
    command_output: str | None = None
    restore_rc: int | None = None
    restore_output: str | None = None
    error: str | None = None


class SweepStep(Section):
    """One step of the SLO search: the rate it tried, why, and what the point said."""

    rate_rps: float
    why: str
    seconds: float
    meets_slo: bool | None = None
    slo_ratio: float | None = None
    trusted: bool | None = None
    untrusted_reason: str | None = None



PointRole = Literal["fixed", "sweep", "replay", "interruption"]


class PointLog(Section):
    """One load point as the load generator ran it (counts include warm-up requests)."""

    index: int
    label: str
    kind: str
    level: float
    role: PointRole = "fixed"
    requested_rate_rps: float | None
    started_ns: int  # relative to the run's t0, like the records
    ended_ns: int
    sent: int
    completed: int
    errors: int
    stopped_by: str
    seeds: dict[str, Any] = Field(default_factory=dict)  # numpy SeedSequence states
    warmup: int = 0
    held_by_cap: int = 0
    lag_p50_ms: float | None = None
    lag_p99_ms: float | None = None
    lag_max_ms: float | None = None
    loop_lag_ms: Distribution | None = None  # how late the client loop's monitor ticks ran
    session: int = 0  # 0: measured by the first run; n: by its n-th ``run --resume``
    repeat: int = 0  # 0: the point's first run; n: its n-th repeat (load[].repeats)
    task_set: int = 0  # the task set it sent (tasks.per_point: fresh draws one per point)
    peer: PeerFigures | None = None  # imported: what the peer tool computed (acceval import)

    @property
    def finished(self) -> bool:
        """Whether the point ran to its own stop rule: not cut short by a stop signal
        (``interrupted``) or by a lost load generator (``client_lost``); a resume measures
        an unfinished point again."""
        return self.stopped_by not in UNFINISHED_STOPS


#: How a point that did not run to its stop rule ended.
UNFINISHED_STOPS = frozenset({"interrupted", "client_lost"})


class EndpointLog(Section):
    """Where a target was reached; the key's variable name may be recorded, the key never."""

    base_url: str
    model: str
    api: str = "completions"
    stream: bool = True
    api_key_env: str | None = None
    # The HTTP client that measured (endpoint.transport); runs before it was recorded used
    # the native one, the only one there was.
    transport: str = "native"
    client: str = "openai"  # the target client plugin that spoke to it (endpoint.client)
    # When answers were stamped (endpoint.receive_stamps): at the read, or the kernel's
    # receive time; runs before it was recorded stamped at the read.
    receive_stamps: str = "read"


class LocalServerInfo(Section):
    engine: str
    model: str | None
    precision: str | None
    pid: int | None
    startup_s: float | None  # process start until /health answered (compile + load + warm-up)


class SweepLog(Section):
    """What the SLO search did at run time (its points are in ``TargetLog.points``)."""

    steps: list[SweepStep] = Field(default_factory=list)
    stopped_by: str = "max_steps"
    elapsed_s: float = 0.0


class FaultLog(FaultStamps):
    """The injected fault as the run logged it (its recovery is analysed later)."""


class TelemetryLog(Section):
    """What scraping the server's /metrics saw (the readings are in samples.parquet)."""

    url: str
    source: str | None = None
    scrapes: int = 0
    failures: int = 0
    note: str | None = None  # unavailable at the start, or the last failure
    unmapped: list[str] = Field(default_factory=list)
    first_ns: int | None = None  # this target's scrapes, run-relative: its readings' span
    last_ns: int | None = None
    interval_s: float | None = None  # seconds between scrapes, as asked


class LoadGeneratorLog(Section):
    """One load-generator process that sent a target's load (execution.backend ray), with
    the wall-clock anchor that put its records on the run's timeline."""

    host: str
    node_ip: str | None = None
    node_id: str | None = None
    pid: int
    python: str | None = None
    anchor_wall_ns: int          # time_ns() ...
    anchor_perf_ns: int          # ... and perf_counter_ns(), read back to back on that host


class RayNode(Section):
    """One node of the Ray cluster a run used, as Ray described it when the run joined."""

    node_id: str | None = None
    address: str | None = None
    alive: bool = True
    resources: dict[str, float] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)   # Ray's own ray.io/ labels left out


class ExecutionLog(Section):
    """Where the load was generated: this process (``local``) or a Ray cluster."""

    backend: str = "local"
    address: str | None = None   # the cluster joined; None: a private Ray on this host
    ray_version: str | None = None
    nodes: list[RayNode] = Field(default_factory=list)
    parallel_targets: bool = False


class Fingerprint(Section):
    """What a server said of itself before its load (GET /models, GET /version, its
    ``Server`` header); what failed to answer is listed in ``errors``. Every field is empty
    for a target that said nothing (it failed first, or cannot describe itself)."""

    base_url: str | None = None
    model: str | None = None
    models: list[str] | None = None
    version: JsonValue = None  # the /version body: JSON as the server wrote it, or an excerpt
    server: str | None = None
    errors: list[str] = Field(default_factory=list)


class TargetLog(Section):
    name: str
    endpoint: EndpointLog | None = None
    local_server: LocalServerInfo | None = None
    fingerprint: Fingerprint = Field(default_factory=Fingerprint)
    failure: str | None = None  # the target could not be measured at all, and why
    points: list[PointLog] = Field(default_factory=list)  # fixed and sweep points, in order
    sweep: SweepLog | None = None
    replay: PointLog | None = None
    interruption: PointLog | None = None
    fault: FaultLog | None = None
    probe_notes: dict[str, str] = Field(default_factory=dict)
    telemetry: TelemetryLog | None = None
    exporter: TelemetryLog | None = None  # telemetry.exporter_url: an accelerator exporter
    load_generators: list[LoadGeneratorLog] = Field(default_factory=list)  # backend ray

    def scenario_indexes(self) -> set[int]:
        """Load indexes of the points kept out of the latency curve."""
        return {p.index for p in (self.replay, self.interruption) if p is not None}


class ResumeLog(Section):
    """One ``acceval run --resume``: what it kept of the earlier sessions and what it ran."""

    session: int
    started_utc: str
    kept: list[str] = Field(default_factory=list)        # "target: label" of finished points
    remeasured: list[str] = Field(default_factory=list)  # unfinished, measured again
    set_aside: int = 0  # records of unfinished points moved to superseded/ (not analysed)


class HostBenchLog(Section):
    """This host's peak FP32 FLOPS and memory bandwidth, measured by a short micro-benchmark
    before the load (numpy matmul and a large array copy)."""

    peak_fp32_tflops: float
    memory_bandwidth_tbs: float
    matmul_n: int
    copy_bytes: int
    seconds: float
    method: str
    memory_bytes: int | None = None  # physical memory of the host


class ImportLog(Section):
    """A run measured by a peer tool and read in by ``acceval import`` (docs/metrics.md):
    which files, in which format, and every field or line the importer did not map, counted
    by its path (never dropped silently)."""

    format: str
    files: list[str]
    tool_versions: list[str] = Field(default_factory=list)
    requests: int = 0  # per-request rows read into records.parquet
    unmapped: dict[str, int] = Field(default_factory=dict)  # field path or line -> count


class RunLog(Section):
    run_id: str
    created_utc: str
    finished_utc: str | None = None
    interrupted: bool = False
    rebuilt: bool = False  # reconstructed from records after the run was killed
    targets: list[TargetLog] = Field(default_factory=list)
    resumes: list[ResumeLog] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what the checks before the load said
    host: HostBenchLog | None = None  # the planner's measured CPU figures (plan.measure_host)
    execution: ExecutionLog | None = None  # None: the local backend (runs before it existed)
    imported: ImportLog | None = None  # the run was measured by a peer tool (acceval import)

    def target(self, name: str) -> TargetLog | None:
        return next((t for t in self.targets if t.name == name), None)


JOURNAL_FILE = "runlog.json"


class Journal(Section):
    """``runlog.json``: the run log as it stood after the last finished point, written while
    the run measures, so that a run killed before it wrote result.json keeps its exact log
    and ``run --resume`` knows what finished. ``study_dir`` resolves the study's relative
    paths (task and demand files)."""

    study_dir: str
    log: RunLog
