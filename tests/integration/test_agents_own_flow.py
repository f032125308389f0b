"""Bring your own flow: a scenario file describing flows on a small loopback web app of the
user's own (tests/helpers/notes_app.py), run by a user's own agent program on the HTTP API,
in real headless Chromium, judged by the app's state (an HTTP GET whose JSON must match, or
a DOM query); the gate guards the flow's irreversible request as declared (method and path
pattern, object field) and a refused one never reaches the app."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from acceval.agents.analyze import agents_section
from acceval.agents.browser import unavailable
from acceval.agents.run import execute_agents
from acceval.agents.spec import Agents
from acceval.agents.store import read
from acceval.economics.spec import StudyCosts
from helpers.notes_app import NotesApp

AGENT = Path(__file__).resolve().parents[1] / "helpers" / "flow_agent.py"


class _Costs:
    costs = StudyCosts()


@pytest.fixture
def app() -> Iterator[NotesApp]:
    notes = NotesApp().start()
    try:
        yield notes
    finally:
        notes.stop()


def _scenario_file(tmp: Path, base: str) -> Path:
    guard = {"action": "publish", "method": "POST", "path": "/notes/*/publish",
             "object_field": "title", "describe": "the note's title"}
    flows = {"scenarios": [
        {"id": "publish-note", "start_url": f"{base}/", "steps": 3,
         "goal": "Save a draft note titled hello, then publish it.",
         "irreversible": [guard], "reset": {"method": "POST", "url": "/api/reset"},
         "check": {"http": {"url": "/api/state", "json": {"published": ["hello"]}}}},
        {"id": "publish-note-dom", "start_url": f"{base}/", "steps": 3,
         "goal": "Save a draft note titled hello, then publish it.",
         "irreversible": [guard], "reset": {"method": "POST", "url": "/api/reset"},
         "check": {"dom": {"url": "/", "selector": "li.published", "text": "hello"}}}]}
    path = tmp / "flows.yaml"
    path.write_text(yaml.safe_dump(flows), encoding="utf-8")
    return path


def test_a_users_agent_completes_a_users_flow_judged_by_the_apps_state(
        app: NotesApp, tmp_path: Path) -> None:
    assert unavailable() is None, unavailable()
    _scenario_file(tmp_path, app.base_url)

    def target(name: str, style: str) -> dict[str, object]:
        return {"name": name, "command": {"argv": [sys.executable, str(AGENT)],
                                          "env": {"STYLE": style}, "grace_s": 10}}

    spec = Agents.model_validate({
        "scenarios": "flows.yaml", "trials": 1, "max_steps": 15,
        "targets": [target("careful", "careful"), target("hasty", "hasty"),
                    {"name": "wrong-title", "command": {
                        "argv": [sys.executable, str(AGENT)], "env": {"TITLE": "other"}}}]})
    execute_agents(spec, tmp_path / "run", base_dir=tmp_path)
    records = read(tmp_path / "run")
    assert records is not None
    a = agents_section(spec, records, _Costs(), None)
    careful, hasty, wrong = (a.target(n) for n in ("careful", "hasty", "wrong-title"))
    assert careful is not None and hasty is not None and wrong is not None
    assert (careful.completion.k, careful.completion.n) == (2, 2), careful.transcripts
    assert careful.gate_verdicts == {"confirmed": 2}
    # hasty: refused once per flow (it never reached the app), then confirmed and done
    assert (hasty.completion.k, hasty.refused_irreversible) == (2, 2), hasty.transcripts
    assert hasty.gate_verdicts == {"unconfirmed": 2, "confirmed": 2}
    # another title: the app holds it, but the check wants hello, by JSON and by the DOM
    assert wrong.completion.k == 0 and wrong.state_right.k == 0
    problems = [e["state_problem"] for e in records.episodes.to_pylist()
                if e["target"] == "wrong-title"]
    assert any("does not hold" in p for p in problems)
    assert any("li.published" in p and "hello" in p for p in problems)
    # the app saw 2 + 2 + 2 publish requests: the hasty agent's refused ones never came
    assert app.publish_requests == 6
    assert all(t.stray_actions is None for t in a.targets)  # the app records no effects
