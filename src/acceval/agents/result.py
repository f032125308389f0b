"""The agents section of a :class:`~acceval.run_result.RunResult` (``result.agents``).

Typed models only, filled by :func:`acceval.agents.analyze.agents_section` from the raw
step and episode records; every renderer reads these attributes and computes nothing.
"""

from __future__ import annotations

from pydantic import Field

from acceval.agents.metrics import RateResult, StatsResult, StepSuccessResult
from acceval.economics.bill import BillResult
from acceval.results.section import Section


class PassK(Section):
    k: int
    value: float | None


class CurvePoint(Section):
    """Completion of the workflows of one length, and what the fitted p predicts there."""

    steps: int
    completion: RateResult
    predicted: float | None


class ScenarioResult(Section):
    scenario: str
    steps: int
    irreversible: bool
    completion: RateResult
    pass_hat_k: list[PassK]


class RecoveryResult(Section):
    """Episodes that met one kind of perturbation: how many got past it, and how fast
    (from the observation that showed it to the step that overcame it)."""

    perturbation: str
    episodes: int
    recovered: RateResult
    recovery_s: StatsResult
    recovery_steps: StatsResult
    completion: RateResult


class TranscriptStep(Section):
    step: int
    tool: str
    arguments: str
    result: str          # the tool result's first line (ok / error ...)
    irreversible: str | None = None
    confirmed: bool | None = None


class Transcript(Section):
    """A failed episode, step by step (the texts are the model's and the page's: escape
    them when rendering)."""

    scenario: str
    trial: int
    perturbation: str | None
    why: str
    steps: list[TranscriptStep]


class WorkflowCost(Section):
    """The target's bill over its episodes' wall time: cost per correct workflow."""

    bill: BillResult
    cost_per_correct_usd: float          # inf when no workflow was correct
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None = None


class AgentTargetResult(Section):
    name: str
    source: str                          # "scripted policy" or the endpoint's URL and model
    scripted: bool
    declared: dict[str, float] = Field(default_factory=dict)  # a scripted policy's error rates
    failure: str | None = None
    episodes: int
    completion: RateResult               # correct: final state right, nothing forbidden
    state_right: RateResult              # final state right (forbidden actions aside)
    per_step_success: StepSuccessResult
    action_errors: RateResult            # browser actions whose tool result was an error
    # browser actions whose observed effect the goal does not accept (acceval.agents.stray);
    # None for a run whose steps hold no effect record
    stray_actions: RateResult | None = None
    pass_hat_k: list[PassK]
    curve: list[CurvePoint]
    scenarios: list[ScenarioResult]
    silent_errors: RateResult            # said done, state wrong (of all episodes)
    premature_done_per_step: RateResult  # silent errors / (browser actions + silent errors)
    unconfirmed_irreversible: RateResult  # of irreversible actions, those without confirm
    forbidden_episodes: RateResult       # episodes with an irreversible action unconfirmed
    # The gate's verdicts on irreversible requests (confirmed / stale / mismatched /
    # unconfirmed), refused or not; empty for a run recorded before the gate
    gate_verdicts: dict[str, int] = Field(default_factory=dict)
    refused_irreversible: int = 0        # requests the gate refused (enforce mode)
    would_refuse: int = 0                # let through that enforce would refuse (count mode)
    interventions: int                   # ask_human calls
    intervention_episodes: RateResult    # episodes with at least one
    recoveries: list[RecoveryResult]
    steps_per_task: StatsResult
    tokens_per_task: StatsResult
    latency_s_per_task: StatsResult
    model_ms_per_step: StatsResult
    stopped_by: dict[str, int]
    cost: WorkflowCost | None = None
    transcripts: list[Transcript] = Field(default_factory=list)


class ImportedCost(Section):
    """Cost per correct workflow of an imported agent: the trials' cost over the correct ones,
    with the interval the completion's interval gives."""

    basis: str                           # how the trials' cost was found (say it)
    total_usd: float
    cost_per_correct_usd: float          # inf when no trial was correct
    cost_per_correct_ci_usd: tuple[float | None, float | None] | None = None


class ImportedAgentResult(Section):
    """An agent benchmark's per-trial results read by ``acceval import`` (τ-bench, tau2,
    AgentLab): the benchmark judged each trial; acceval counts and prices them."""

    name: str
    tool: str                            # tau-bench, tau2, agentlab
    files: list[str]
    provenance: str                      # "imported from τ-bench file X"
    tasks: int
    episodes: int
    trials_per_task: int                 # the fewest of any task (pass^k goes up to it)
    completion: RateResult               # trials the benchmark scored successful
    mean_reward: float | None            # the benchmark's own average reward
    pass_hat_k: list[PassK]
    errors: RateResult                   # trials the benchmark says ended in an error
    steps_per_task: StatsResult
    tokens_per_task: StatsResult
    latency_s_per_task: StatsResult
    stopped_by: dict[str, int] = Field(default_factory=dict)
    cost: ImportedCost | None = None     # from the token prices declared at import
    peer_cost: ImportedCost | None = None  # from the agent cost the file states
    notes: list[str] = Field(default_factory=list)


class AgentsResult(Section):
    """Agent workflows on the built-in shop, per agent target."""

    scenario_set: str
    trials: int
    perturbations: list[str]
    perturbation_share: float
    max_steps: int
    timeout_s: float
    gate_mode: str = "enforce"
    gate_window_steps: int = 1
    skipped: str | None = None
    browser: str | None = None
    wall_s: float | None = None
    targets: list[AgentTargetResult] = Field(default_factory=list)
    imported: list[ImportedAgentResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def target(self, name: str) -> AgentTargetResult | None:
        return next((t for t in self.targets if t.name == name), None)


__all__ = ["AgentTargetResult", "AgentsResult", "CurvePoint", "ImportedAgentResult",
           "ImportedCost", "PassK", "RateResult",
           "RecoveryResult", "ScenarioResult", "StatsResult", "StepSuccessResult",
           "Transcript", "TranscriptStep", "WorkflowCost"]
