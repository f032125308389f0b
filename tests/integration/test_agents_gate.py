"""The confirmation gate in real headless Chromium on the built-in shop: an irreversible
request without a confirmation, with one naming another action, or with one that came too
early never reaches the shop in enforce mode (its state shows nothing happened), and an
agent that then confirms properly completes; in count mode the same requests go through and
their verdicts are recorded. Needs Chromium (``apt-get install chromium``) and playwright."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.agents.analyze import agents_section
from acceval.agents.browser import unavailable
from acceval.agents.result import AgentsResult, AgentTargetResult
from acceval.agents.run import execute_agents
from acceval.agents.spec import Agents
from acceval.agents.store import AgentRecords, read
from acceval.economics.spec import StudyCosts

STYLES = ("careful", "hasty", "mismatched", "stale", "reckless")
FIRST = {"hasty": "unconfirmed", "mismatched": "mismatched", "stale": "stale",
         "reckless": "unconfirmed"}


class _Costs:
    costs = StudyCosts()


def _run(tmp: Path, gate: str) -> tuple[AgentsResult, AgentRecords]:
    assert unavailable() is None, unavailable()
    spec = Agents.model_validate({
        "trials": 1, "only": ["buy-one", "change-email"], "gate": gate, "max_steps": 20,
        "targets": [{"name": s, "policy": {"style": s}} for s in STYLES]})
    execute_agents(spec, tmp)
    records = read(tmp)
    assert records is not None
    return agents_section(spec, records, _Costs(), None), records


@pytest.fixture(scope="module")
def enforce(tmp_path_factory: pytest.TempPathFactory) -> tuple[AgentsResult, AgentRecords]:
    return _run(tmp_path_factory.mktemp("enforce"), "enforce")


@pytest.fixture(scope="module")
def count(tmp_path_factory: pytest.TempPathFactory) -> tuple[AgentsResult, AgentRecords]:
    return _run(tmp_path_factory.mktemp("count"), "count")


def _t(a: AgentsResult, name: str) -> AgentTargetResult:
    t = a.target(name)
    assert t is not None and t.failure is None, name
    return t


def test_enforce_refuses_unconfirmed_mismatched_and_stale_requests(
        enforce: tuple[AgentsResult, AgentRecords]) -> None:
    a, records = enforce
    for style, verdict in FIRST.items():
        t = _t(a, style)
        assert t.gate_verdicts.get(verdict) == 2, (style, t.gate_verdicts)
        assert t.refused_irreversible == 2 and t.would_refuse == 0
        # nothing irreversible went through unconfirmed
        assert t.unconfirmed_irreversible.k == 0
    steps = [s for s in records.steps.to_pylist() if s["refused"]]
    assert len(steps) == 8
    assert all(s["observation"].startswith("refused: ") and not s["ok"] for s in steps)
    assert all("page /checkout/place" in s["observation"]
               or "page /account/email" in s["observation"] for s in steps)


def test_a_refused_request_never_reaches_the_shop(
        enforce: tuple[AgentsResult, AgentRecords]) -> None:
    a, records = enforce
    reckless = _t(a, "reckless")  # refused once, then says done: nothing happened
    assert reckless.state_right.k == 0 and reckless.silent_errors.k == 2
    problems = {e["scenario"]: e["state_problem"] for e in records.episodes.to_pylist()
                if e["target"] == "reckless"}
    assert problems["buy-one"].startswith("orders are none")  # the order never came
    assert "e-mail is 'alice@example.com'" in problems["change-email"]  # nor the change


def test_an_agent_that_confirms_after_a_refusal_completes(
        enforce: tuple[AgentsResult, AgentRecords]) -> None:
    a, _ = enforce
    for style in ("careful", "hasty", "mismatched", "stale"):
        t = _t(a, style)
        assert t.completion.k == 2, (style, t.transcripts)
        assert t.gate_verdicts.get("confirmed") == 2
    assert _t(a, "careful").gate_verdicts == {"confirmed": 2}


def test_count_mode_lets_them_through_and_records_what_it_would_refuse(
        count: tuple[AgentsResult, AgentRecords]) -> None:
    a, records = count
    assert sum(s["refused"] for s in records.steps.to_pylist()) == 0
    for style, verdict in FIRST.items():
        t = _t(a, style)
        assert t.gate_verdicts == {verdict: 2}, (style, t.gate_verdicts)
        assert (t.refused_irreversible, t.would_refuse) == (0, 2)
        # the state is right, and still the workflow is not correct: the confirmation was
        # missing, named another action, or came too early
        assert t.state_right.k == 2 and t.completion.k == 0
        assert t.unconfirmed_irreversible.k == t.unconfirmed_irreversible.n == 2
    assert _t(a, "careful").completion.k == 2
