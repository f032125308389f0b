"""Agent workflows in real headless Chromium on the built-in shop, the scripted policy
served through the OpenAI chat API with tools: the measured rates agree with the declared
ones (the wrong-click rate measured from the shop's record of each action's effect, never
from the policy), a policy that never confirms fails every irreversible scenario, an expired session
mid-task is recovered from and its recovery time reported, and a missing browser skips the
part with a note. Needs Chromium (``apt-get install chromium``) and playwright."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.agents.analyze import agents_section
from acceval.agents.browser import unavailable
from acceval.agents.result import AgentsResult, AgentTargetResult
from acceval.agents.run import execute_agents
from acceval.agents.scenarios import SCENARIOS
from acceval.agents.spec import Agents
from acceval.agents.store import read
from acceval.economics.spec import StudyCosts


class _Costs:
    costs = StudyCosts()


def _run(tmp: Path, spec: dict[str, object]) -> AgentsResult:
    assert unavailable() is None, unavailable()
    agents = Agents.model_validate(spec)
    execute_agents(agents, tmp)
    return agents_section(agents, read(tmp), _Costs(), None)


@pytest.fixture(scope="module")
def rates(tmp_path_factory: pytest.TempPathFactory) -> AgentsResult:
    return _run(tmp_path_factory.mktemp("rates"), {
        # count mode: an unconfirmed action goes through, so its rate is measurable
        "trials": 6, "only": ["change-email", "buy-one"], "seed": 5, "gate": "count",
        "targets": [
            {"name": "never-confirms", "policy": {"skip_confirm": 1.0, "seed": 1}},
            {"name": "half-confirms", "policy": {"skip_confirm": 0.5, "seed": 2}},
            {"name": "done-too-soon", "policy": {"premature_done": 0.15, "seed": 3}},
        ]})


def _t(a: AgentsResult, name: str) -> AgentTargetResult:
    t = a.target(name)
    assert t is not None and t.failure is None
    return t


def _inside(value: float, r: object) -> bool:
    lo, hi = getattr(r, "ci_low", None), getattr(r, "ci_high", None)
    return lo is not None and hi is not None and lo <= value <= hi


def test_measured_rates_fall_within_their_intervals_of_the_declared_ones(
        rates: AgentsResult) -> None:
    half = _t(rates, "half-confirms")
    assert half.unconfirmed_irreversible.n >= 10
    assert _inside(0.5, half.unconfirmed_irreversible), half.unconfirmed_irreversible
    soon = _t(rates, "done-too-soon")
    assert soon.premature_done_per_step.k > 0  # it did stop early, silently
    assert _inside(0.15, soon.premature_done_per_step), soon.premature_done_per_step
    assert soon.silent_errors.k == soon.premature_done_per_step.k
    assert soon.unconfirmed_irreversible.k == 0
    # None of them declares wrong clicks: no action strayed from the route or the goal
    for t in rates.targets:
        assert t.stray_actions is not None and t.stray_actions.n > 0, t.name
        assert t.stray_actions.k == 0, (t.name, t.transcripts)


def test_the_stray_action_rate_measures_the_declared_wrong_click_rate(tmp_path: Path) -> None:
    """Stray actions are counted from what the shop and the page saw each action do, so the
    policy's declared wrong-click rate is what they should measure. The run is deterministic
    (the policy draws per reply from its seed, the request's seed and the turn; the pages are
    the same each time): these seeds give 16 stray of 108 browser actions, 15 % [9 %, 23 %].
    Over seeds, a 95 %
    Wilson interval at n ≈ 108 misses a true 0.2 with probability 5.3 % (exact binomial
    sum), and a miss would repeat on every run rather than come and go."""
    a = _run(tmp_path, {
        "trials": 12, "only": ["buy-one", "change-email"], "seed": 3,
        "targets": [{"name": "clumsy", "policy": {"wrong_click": 0.2, "seed": 4}}]})
    t = _t(a, "clumsy")
    stray = t.stray_actions
    assert stray is not None and stray.n >= 100
    assert _inside(0.2, stray), stray
    assert t.declared["wrong_click"] == 0.2
    # a stray action is not only a failed one: most of them worked, on the wrong thing
    assert stray.k > t.action_errors.k


def test_a_policy_that_skips_confirmation_fails_every_irreversible_scenario(
        rates: AgentsResult) -> None:
    never = _t(rates, "never-confirms")
    assert all(SCENARIOS[s.scenario].irreversible for s in never.scenarios)
    assert [s.completion.k for s in never.scenarios] == [0, 0]
    assert never.completion.k == 0 and never.completion.n == 12
    # the state was right each time: only the missing confirmation makes them fail
    assert never.state_right.k == 12, [(t.scenario, t.why) for t in never.transcripts]
    assert never.unconfirmed_irreversible.k == never.unconfirmed_irreversible.n == 12
    assert never.transcripts and "without confirmation" in never.transcripts[0].why
    # what enforce mode would have refused, recorded by the gate
    assert never.gate_verdicts == {"unconfirmed": 12}
    assert (never.refused_irreversible, never.would_refuse) == (0, 12)


def test_an_expired_session_mid_task_is_recovered_from(tmp_path: Path) -> None:
    a = _run(tmp_path, {
        "trials": 2, "only": ["buy-one"], "seed": 1,
        "perturbations": {"kinds": ["expired_session"], "share": 1.0},
        "targets": [{"name": "careful", "policy": {}}]})
    t = _t(a, "careful")
    (rec,) = t.recoveries
    assert rec.perturbation == "expired_session" and rec.episodes == 2
    assert rec.recovered.k == 2
    assert rec.recovery_s.n == 2 and rec.recovery_s.p50 is not None
    assert rec.recovery_steps.p50 is not None and rec.recovery_steps.p50 >= 3  # sign in again
    assert t.completion.k == 2
    # signing in again is how the perturbation is overcome, not a stray action
    assert t.stray_actions is not None and t.stray_actions.k == 0


def test_a_missing_browser_skips_the_part_with_a_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCEVAL_CHROMIUM", str(tmp_path / "no-such-chromium"))
    agents = Agents.model_validate({"targets": [{"name": "p", "policy": {}}]})
    records = execute_agents(agents, tmp_path)
    assert records.log.skipped is not None and "no Chromium found" in records.log.skipped
    section = agents_section(agents, read(tmp_path), _Costs(), None)
    assert section.skipped == records.log.skipped and section.targets == []
