"""The typed sections of a :class:`~acceval.results.result.RunResult`.

Each concept computes with its own dataclasses; ``analyze`` stores what they found here, as
validated models, so that every renderer reads attributes (never dictionary keys) and a
missing field is a type error, not a silent blank. The JSON form is ``result.json``.

Missing is ``None``; an infinite cost (nothing passed) is stored as ``Infinity``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from acceval.metrics import PointSummary
from acceval.metrics.repeats import RepeatInterval


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")


class PeerFigures(Section):
    """What a peer tool (vLLM bench, GuideLLM, AIPerf) computed itself for an imported point,
    under the peer's own names (``mean_ttft_ms``, ``time_to_first_token_ms.p99``). acceval
    recomputes its own summary from the imported requests; these stay beside it, labelled
    peer-computed. ``summary_only``: the file held no per-request data, so these figures are
    all there is for the point (acceval's own summary of it is empty)."""

    tool: str
    version: str | None = None
    file: str
    figures: dict[str, float | None] = Field(default_factory=dict)
    summary_only: bool = False


class PointResult(Section):
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
    seeds: dict[str, Any] = Field(default_factory=dict)  # numpy SeedSequence states
    summary: PointSummary
    repeat: int = 0  # 0: the point's first run; n: its n-th repeat (load[].repeats)
    peer: PeerFigures | None = None  # an imported point: the peer tool's own figures
    task_set: int = 0  # the task set it sent (tasks.per_point; the same on every target)

    @property
    def trusted(self) -> bool:
        """The load generator kept its schedule: the point may enter capacity and the verdict."""
        return self.summary.trusted


class RepeatsResult(Section):
    """One load point measured ``repeats`` times: the t-interval of each statistic over the
    repeats' values (docs/metrics.md, "Repeats"). The first run is the point in
    ``TargetResult.points`` (the one capacity, the bill and the verdict use); the others are
    ``points`` here, each a whole load point of its own."""

    label: str  # the first run's label
    index: int  # the first run's load index
    runs: int  # how many runs (first + repeats) measured it
    labels: list[str]
    ttft_p50_ms: RepeatInterval
    ttft_p95_ms: RepeatInterval
    ttft_p99_ms: RepeatInterval
    e2e_p95_ms: RepeatInterval
    request_throughput_rps: RepeatInterval
    output_token_throughput_tps: RepeatInterval
    points: list[PointResult] = Field(default_factory=list)  # the repeats after the first


# --- provenance and the bill -----------------------------------------------------------------

class SourcedValue(Section):
    """A number and where it came from: measured, catalog, assumption or derived."""

    value: float | None
    origin: str
    source: str | None = None
    date: str | None = None


class BillItemResult(Section):
    name: str
    usd: float | None  # None: not counted (inputs not declared, or inside the rate)
    inputs: list[str]
    note: str = ""


class BillResult(Section):
    """The whole bill of one target at one load point."""

    target: str
    load_label: str
    items: list[BillItemResult]
    total_usd: float
    requests: int
    correct: int
    output_tokens: int | None
    success_rate: float | None
    cost_per_attempt_usd: float | None
    cost_per_correct_usd: float  # inf when nothing passed
    cost_per_mtok_output_usd: float | None
    inputs: dict[str, SourcedValue]

    def item(self, name: str) -> BillItemResult | None:
        return next((i for i in self.items if i.name == name), None)


class PointCost(Section):
    """One load point's bill and the interval its accuracy interval gives the cost."""

    label: str
    bill: BillResult
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None = None


class DeclaredUtilizationCost(Section):
    """The same points billed at the declared utilization (every replica busy)."""

    operating_point: str
    cost_per_correct_usd: float
    cost_per_attempt_usd: float | None
    cost_per_mtok_output_usd: float | None


class TargetEconomics(Section):
    """Every load point's bill; the operating point itself is the verdict's to name."""

    points: list[PointCost]
    at_declared_utilization: DeclaredUtilizationCost | None = None
    utilization_under_demand: float | None = None

    def point(self, label: str) -> PointCost | None:
        return next((p for p in self.points if p.label == label), None)


# --- energy ----------------------------------------------------------------------------------

class EnergyComponentResult(Section):
    level: str
    name: str
    joules: float
    origin: str
    detail: str = ""


class EnergyProvenance(Section):
    joules: float | None
    level: str | None
    requested_level: str
    complete: bool
    missing: list[str]
    components: list[EnergyComponentResult]
    origin: str | None = None  # measured, estimated (TDP x time) or declared


class EnergyResult(Section):
    """Energy of the operating point at the declared boundary."""

    load_label: str | None = None
    joules: float | None
    level: str | None
    joules_per_correct: float | None
    correct_per_kwh: float | None
    joules_per_output_token: float | None
    tokens_per_s_per_mw: float | None
    energy_cost_usd: float | None
    provenance: EnergyProvenance
    origin: str | None = None


# --- capacity --------------------------------------------------------------------------------

class ExcludedPoint(Section):
    """A point left out of the curve's estimate because it was not trusted."""

    label: str
    rate_rps: float | None
    reason: str


class MaxRateResult(Section):
    rate_rps: float | None
    low_rps: float | None
    high_rps: float | None
    n_points: int  # trusted points judged
    method: str
    note: str
    excluded: list[ExcludedPoint] = Field(default_factory=list)


class FleetPlanResult(Section):
    per_replica_rps: float
    chips_per_replica: int
    headroom: float
    spares: int
    scaling: str
    hours: int
    replicas: list[int]
    hourly_mean_rps: list[float]
    hourly_peak_rps: list[float]
    peak_replicas: int
    min_replicas: int
    replica_hours: float
    chip_hours: float
    idle_chip_hours: float
    utilization: float | None
    expected_requests: float


class DemandCostResult(Section):
    usd_per_replica_hour: float
    success_rate: float
    fleet_usd: float
    correct_tasks: float
    cost_per_correct_usd: float
    cost_per_correct_at_slo_rate_usd: float
    cost_per_correct_at_saturation_usd: float | None
    ratio: float


class AvailabilityResult(Section):
    target: str
    status: str
    usable_regions: list[str]
    peak_replicas: int | None
    peak_chips: int | None
    blockers: list[str]
    warnings: list[str]
    notes: list[str]
    lead_time_days: float | None = None
    failover_region: str | None = None
    transfer_usd_per_gb: float | None = None
    transfer_gb_per_request: float | None = None
    source: str | None = None
    assessed_for: str | None = None
    quota_chips: int | None = None


class FleetSimSummary(Section):
    seconds: int
    arrivals: int
    on_time: float
    late: float
    lost: float
    failures: int
    down_replica_s: float
    min_up_replicas: int
    replica_hours: float
    cost_usd: float | None
    seed: int
    series: dict[str, list[float]] = Field(default_factory=dict)
    slo_attainment: float | None
    late_fraction: float | None
    lost_fraction: float | None


class SpareWhatIfResult(Section):
    spares: int
    without: FleetSimSummary
    with_spares: FleetSimSummary
    extra_replica_hours: float
    extra_cost_usd: float | None
    late_avoided: float
    lost_avoided: float
    usd_per_request_saved: float | None


class CapacityResult(Section):
    """The max rate under the SLO from trusted points, and (with a demand profile) the fleet."""

    max_rate_under_slo: MaxRateResult
    saturation_rps: float | None
    utilization_under_demand: float | None
    declared_utilization: float
    plan: FleetPlanResult | None
    cost: DemandCostResult | None
    availability: AvailabilityResult
    what_if: SpareWhatIfResult | None


# --- run-wide economics ----------------------------------------------------------------------

class FrontierEntryResult(Section):
    target: str
    load_label: str
    cost_per_attempt_usd: float | None
    success_rate: float | None
    cost_of_pass_usd: float


class FrontierResult(Section):
    entries: list[FrontierEntryResult]
    winner: str | None
    frontier_usd: float
    baseline_usd: float | None = None
    baseline_wins: bool = False


class TornadoBarResult(Section):
    target: str
    input: str
    scope: str
    base_value: float | None
    low_value: float | None
    high_value: float | None
    base_usd: float
    low_usd: float
    high_usd: float
    width_usd: float


class FlipResult(Section):
    input: str
    scope: str
    side: str
    value: float | None
    winner: str | None
    base_winner: str | None


class SensitivityResult(Section):
    base_winner: str | None
    base_usd: dict[str, float]
    bars: list[TornadoBarResult]
    flips: list[FlipResult]


class RunEconomics(Section):
    frontier: FrontierResult
    sensitivity: SensitivityResult


# --- portability and exit --------------------------------------------------------------------

class EvidenceResult(Section):
    kind: str
    detail: str
    quote: str | None = None


class LevelVerdict(Section):
    level: str
    verdict: str
    summary: str
    evidence: list[EvidenceResult]
    details: dict[str, Any] = Field(default_factory=dict)  # per-level measurements


class LedgerEntryResult(Section):
    item: str
    value: Any  # a number, or a structured measurement (code change, warm-up, fallbacks)
    unit: str | None
    evidence: EvidenceResult


class LedgerResult(Section):
    target: str
    reference: str | None
    entries: list[LedgerEntryResult]
    problems: list[str]

    def entry(self, item: str) -> LedgerEntryResult | None:
        return next((e for e in self.entries if e.item == item), None)


class PortabilityLevels(Section):
    source: LevelVerdict
    artifact: LevelVerdict
    performance: LevelVerdict

    def items(self) -> list[tuple[str, LevelVerdict]]:
        return [("source", self.source), ("artifact", self.artifact),
                ("performance", self.performance)]


class PortabilityResult(Section):
    level: str  # one line: "source pass · artifact not assessed · performance fail"
    reference: str | None
    levels: PortabilityLevels
    ledger: LedgerResult
    problems: list[str]


class ExportAnswer(Section):
    status: str
    formats: list[str]
    answer: str | None
    evidence: EvidenceResult | None
    note: str | None


class ExitCostItemResult(Section):
    name: str
    usd: float | None
    formula: str
    inputs: dict[str, SourcedValue]


class ExitCostResult(Section):
    total_usd: float | None
    known_usd: float
    missing: list[str]
    items: list[ExitCostItemResult]


class CustomizationDepth(Section):
    level: str
    rank: int
    of: int
    evidence: EvidenceResult | None


class FreedomToLeave(Section):
    level: str
    favorable: int
    unknown: int
    of: int


class ManagedServiceResult(Section):
    service: str
    customization_depth: CustomizationDepth
    freedom_to_leave: FreedomToLeave
    questions: dict[str, ExportAnswer]


class ExitResult(Section):
    readiness: str
    reasons: list[str]
    exports: dict[str, ExportAnswer]
    lost_functions: list[str]
    migration_hours: SourcedValue
    cost: ExitCostResult
    managed_service: ManagedServiceResult | None
    notes: list[str]


# --- scenarios: sweep, replay, interruption --------------------------------------------------

class SweepStep(Section):
    """One step of the SLO search: the rate it tried, why, and what the point said."""

    rate_rps: float
    why: str
    seconds: float
    meets_slo: bool | None = None
    slo_ratio: float | None = None
    trusted: bool | None = None
    untrusted_reason: str | None = None


class SweepResult(Section):
    runs: int
    steps: list[SweepStep]
    stopped_by: str
    elapsed_s: float
    bracket_rps: tuple[float | None, float | None]
    max_rate: MaxRateResult


class ReplayHour(Section):
    hour: int
    intended_rps: float
    expected: float
    scheduled: int
    sent: int
    achieved_rps: float | None
    ok: int
    errors: int
    z: float | None
    ttft_p95_ms: float | None
    e2e_p95_ms: float | None
    meets_slo: bool | None


class ReplayResult(Section):
    point: PointResult
    profile: str
    compress_to_s: float
    compress: float
    bucket_s: float
    expected_requests: float
    expected_requests_replayed: float
    sent: int
    ok: int
    errors: int
    chi2: float | None
    chi2_dof: int | None
    chi2_p: float | None
    max_abs_z: float | None
    within_4_sigma: bool | None
    schedule_lag_p99_ms: float | None
    hours_meeting_slo: int
    hours_judged: int
    hours: list[ReplayHour]


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


class InterruptionResult(FaultStamps):
    """The fault, its point, and the recovery measured from that point's records."""

    point_label: str
    load_index: int
    target: str
    point_started_ns: int
    point_ended_ns: int
    point: PointResult
    requests: int
    ok: int
    failed: int
    unfinished: int
    accounted: bool
    window_s: float
    step_s: float
    failed_after_fault: int | None = None
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    in_flight_at_fault: int | None = None
    sent_after_fault: int | None = None
    time_to_first_success_s: float | None = None
    outage_s: float | None = None
    slo_recovered_s: float | None = None
    slo_violation_start_s: float | None = None
    slo_violation_s: float | None = None


# --- the verdict -----------------------------------------------------------------------------

VerdictStatus = Literal["winner", "tie", "none-qualify", "not-priced", "no-targets"]


class Standing(Section):
    """One target in the verdict: qualified or not (and why), at its operating point."""

    target: str
    qualified: bool
    reasons: list[str]  # why it does not qualify (empty when it does)
    operating_point: str | None  # the cheapest trusted point that meets the SLO
    operating_rate_rps: float | None
    cost_per_correct_usd: float | None
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None
    cost_basis: Literal["under demand", "declared utilization"] | None
    cost_per_mtok_output_usd: float | None = None
    rank: int | None  # 1 = cheapest among the qualified; None when not qualified


class Verdict(Section):
    """The one decision; every format phrases it, none re-derives it."""

    status: VerdictStatus
    winner: str | None
    tied: list[str]  # targets whose cost intervals overlap the cheapest's (status "tie")
    headline: str
    lines: list[str]  # supporting sentences, the same in every format
    standings: list[Standing]  # qualified by rank first, then the rest
    rules: list[str]  # the rules as applied (minimum requests, interval separation)
    ratio_to_runner_up: float | None = None

    def standing(self, target: str) -> Standing | None:
        return next((s for s in self.standings if s.target == target), None)


# --- server telemetry (a target's own /metrics, scraped during the run) --------------------

class TelemetryStat(Section):
    """One canonical metric over one load point: gauges by mean and max of the scrapes in
    the point's window, counters by their rate (difference over the window's seconds)."""

    mean: float | None = None
    max: float | None = None
    rate_per_s: float | None = None
    scrapes: int = 0


class TelemetryPoint(Section):
    index: int
    label: str
    metrics: dict[str, TelemetryStat] = Field(default_factory=dict)
    # The server's own generation tokens/s against what the client counted at this point
    # (1.0: they agree): a cross-check of the token counts.
    server_over_client_tokens: float | None = None


class TelemetryResult(Section):
    url: str
    source: str | None = None           # vllm, sglang, tgi, llamacpp, acceval, ...
    scrapes: int = 0
    failures: int = 0
    note: str | None = None             # why nothing was scraped, or the last failure
    unmapped: list[str] = Field(default_factory=list)  # families it published and we do not map
    points: list[TelemetryPoint] = Field(default_factory=list)
    # Gauges over the run, for the timeline: metric -> [[t_ns, value], ...] (run-relative,
    # at most a few hundred points each).
    series: dict[str, list[tuple[int, float]]] = Field(default_factory=dict)


# --- claims and the roofline plan ------------------------------------------------------------

class ClaimRow(Section):
    """One claim in the ledger, with the axes it names and those it leaves out."""

    id: str
    subject: str
    value: float
    unit: str
    kind: str
    kind_meaning: str
    metric: str
    comparator: str | None
    scope: str  # workload or hardware
    measured_by: str
    document: str
    date: str | None
    location: str | None
    quote: str
    axes: dict[str, str | None]  # every axis by name; None where the source does not say
    missing_axes: list[str]  # the workload axes the source does not state
    conflicts_with: list[str] = Field(default_factory=list)
    origin: str  # shipped, study, or the claims file
    note: str | None = None

    @property
    def value_text(self) -> str:
        v = f"{self.value:g}"
        return f"{self.kind} {v}×" if self.unit == "x" else f"{self.kind} {v} {self.unit}"


class ClaimConflict(Section):
    """Claims on the same subject and metric whose values disagree: both are kept."""

    subject: str
    metric: str
    claims: list[str]
    values: list[float]
    sentence: str


class RatioPoint(Section):
    """One comparable load point of a claim check: the measured ratio there."""

    label: str
    subject_value: float
    comparator_value: float
    ratio: float


class ClaimCheckResult(Section):
    """A ratio claim against the run: compared point by point, or refused with the reasons."""

    claim: str
    claimed: str  # "up to 4.4×"
    subject: str
    comparator: str
    measure: str
    status: Literal["compared", "refused", "no comparable points"]
    differs: list[str]  # axes on which the run is not the claim's conditions (the reasons)
    unchecked: list[str]  # axes the run cannot confirm or deny
    points: list[RatioPoint] = Field(default_factory=list)
    measured_low: float | None = None
    measured_high: float | None = None
    above: int = 0  # points whose measured ratio is below the claim
    sentence: str


class ClaimsResult(Section):
    """The claim ledger of a study, its conflicts, and the claims checked against the run."""

    claims: list[ClaimRow]
    conflicts: list[ClaimConflict] = Field(default_factory=list)
    checks: list[ClaimCheckResult] = Field(default_factory=list)


class ScalePoint(Section):
    """The planned decode bound of one replica spread over ``chips`` by tensor parallelism."""

    chips: int
    fits: bool
    batch: int | None
    decode_tps_replica: float | None
    decode_tps_chip: float | None
    step_ms: float | None
    communication_share: float | None  # communication time / step time
    bound: str | None  # memory, compute or communication


class PlanContextResult(Section):
    """The plan at one input/output length (every number planned, none measured)."""

    input_tokens: int
    output_tokens: int
    chips: int  # the target's chips per replica
    weights_gb: float
    kv_gb_per_sequence: float
    activations_gb: float
    usable_gb: float
    fits: bool
    max_batch: int | None  # largest batch whose KV cache fits (None: does not fit)
    batch: int | None  # the batch the bounds are computed at (max_batch capped by plan)
    decode_tps_replica: float | None
    decode_tps_chip: float | None
    decode_bound: str | None  # memory, compute or communication
    decode_intensity: float | None  # FLOP per byte at that batch
    prefill_tps_chip: float | None
    prefill_bound: str | None
    prefill_intensity: float | None
    ridge: float | None  # peak FLOP/s over memory bytes/s
    communication_ms_per_token: float | None
    scaling: list[ScalePoint] = Field(default_factory=list)
    best_chips: int | None = None  # the replica size with the highest decode bound per chip
    scaling_note: str = ""
    cost_per_attempt_usd: float | None = None
    cost_per_correct_usd: float | None = None
    accuracy: float | None = None
    accuracy_origin: str | None = None  # measured (this run) or assumption (plan.accuracy)


class PlanPoint(Section):
    """A measured load point beside its planned bound: measured efficiency."""

    label: str
    batch: int  # closed loop: the concurrency; open loop: the mean requests in flight
    open_loop: bool = False  # an open-loop point's throughput follows its offered rate
    input_tokens: float
    output_tokens: float
    measured_tps_chip: float
    bound_tps_chip: float | None
    efficiency: float | None  # measured / planned bound


class PlanResult(Section):
    """The roofline plan of one target: what its hardware could do, labelled planned."""

    target: str
    hardware: str | None
    model: str
    parameters: float
    weights: str
    kv_cache: str
    compute: str
    inputs: dict[str, SourcedValue]  # peak FLOPS, memory, bandwidths, with provenance
    contexts: list[PlanContextResult] = Field(default_factory=list)
    measured: list[PlanPoint] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    origin: str = "planned"
