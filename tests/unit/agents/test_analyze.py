"""The agents section from hand-made episodes, through the real ``analyze``: a workflow is
correct only when the state is right and nothing forbidden happened; silent errors,
unconfirmed irreversible actions, interventions, recovery, pass^k and the bill."""

from __future__ import annotations

import pytest

from acceval.agents.result import AgentsResult
from acceval.analysis import analyze
from acceval.results.records import records_to_table
from acceval.results.runlog import RunLog, TargetLog
from acceval.run_result import RunResult
from acceval.study import Study
from helpers import agent_fixture, run_fixture


def _run(agent_records: object) -> RunResult:
    data = run_fixture.study().model_dump(mode="json")
    study = Study.model_validate({**data, "agents": agent_fixture.AGENTS})
    log = RunLog(run_id="r", created_utc="2026-01-01T00:00:00+00:00",
                 targets=[TargetLog(name=t.name) for t in study.targets])
    result = analyze(study, log, records_to_table([]),
                     agent_records=agent_records)  # type: ignore[arg-type]
    return result


def _result(agent_records: object) -> AgentsResult:
    agents = _run(agent_records).agents
    assert agents is not None
    return agents


def test_correct_needs_the_right_state_and_no_unconfirmed_irreversible_action() -> None:
    a = _result(agent_fixture.records())
    good, bad = a.target("good"), a.target("bad")
    assert good is not None and bad is not None
    assert (good.completion.k, good.completion.n) == (4, 4)
    # bad: the unconfirmed order left the state right, and still is not correct
    assert (bad.state_right.k, bad.completion.k, bad.completion.n) == (3, 2, 4)
    assert (bad.unconfirmed_irreversible.k, bad.unconfirmed_irreversible.n) == (1, 1)
    assert (good.unconfirmed_irreversible.k, good.unconfirmed_irreversible.n) == (0, 2)
    assert bad.forbidden_episodes.k == 1
    assert (bad.silent_errors.k, bad.silent_errors.n) == (1, 4)
    # 1 silent error at risk over 7 browser actions + itself
    assert (bad.premature_done_per_step.k, bad.premature_done_per_step.n) == (1, 8)
    assert bad.interventions == 1 and bad.intervention_episodes.k == 1
    assert [p.value for p in bad.pass_hat_k] == [pytest.approx(0.5), pytest.approx(0.5)]
    assert [p.value for p in good.pass_hat_k] == [1.0, 1.0]
    assert [c.steps for c in bad.curve] == [1, 4]
    assert bad.transcripts and "without confirmation" in bad.transcripts[0].why


def test_recovery_and_cost_per_correct_workflow() -> None:
    a = _result(agent_fixture.records())
    good, bad = a.target("good"), a.target("bad")
    assert good is not None and bad is not None
    (rec,) = good.recoveries
    assert rec.perturbation == "expired_session" and rec.recovered.k == 1
    assert rec.recovery_s.p50 == pytest.approx(0.3)
    assert rec.recovery_steps.p50 == 3
    # $3.60 an hour = $0.001 a second; good ran 2.0 s for 4 correct, bad 1.6 s for 2
    assert good.cost is not None and bad.cost is not None
    assert good.cost.cost_per_correct_usd == pytest.approx(0.002 / 4)
    assert bad.cost.cost_per_correct_usd == pytest.approx(0.0016 / 2)


def test_a_skipped_agents_part_is_a_note_in_the_section_and_the_verdict() -> None:
    from acceval.agents.store import AgentRecords, AgentsLog, tables

    skipped = AgentRecords(*tables([]), AgentsLog(skipped="agents part skipped: no Chromium"))
    result = _run(skipped)
    assert result.agents is not None and result.agents.targets == []
    assert result.agents.skipped == "agents part skipped: no Chromium"
    assert "Agent workflows: agents part skipped: no Chromium." in result.verdict.sentences
