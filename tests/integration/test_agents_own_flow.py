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
from acceval.agents.run import execute_agents, plan
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


def test_a_flow_meets_a_popup_and_a_layout_change_through_the_proxy_and_recovers(
        app: NotesApp, tmp_path: Path) -> None:
    """The flow declares which perturbations it may meet; acceval's reverse proxy in front
    of the app switches them on. The agent's browser shows the pop-up as a dialog covering
    the page; closing it (a request the proxy answers, never the app) overcomes it, and the
    first request that succeeds on the shifted layout overcomes that."""
    assert unavailable() is None, unavailable()
    flows = _scenario_file(tmp_path, app.base_url)
    data = yaml.safe_load(flows.read_text())
    data["scenarios"][0]["perturbations"] = ["popup", "layout"]
    flows.write_text(yaml.safe_dump(data), encoding="utf-8")
    spec = Agents.model_validate({
        "scenarios": "flows.yaml", "only": ["publish-note"], "trials": 4, "max_steps": 15,
        "seed": 2, "perturbations": {"kinds": ["popup", "layout"], "share": 1.0},
        "targets": [{"name": "careful", "command": {
            "argv": [sys.executable, str(AGENT)], "env": {"STYLE": "careful"}}}]})
    planned = [p.perturbation for p in plan(spec, tmp_path)]
    assert sorted(set(planned)) == ["layout", "popup"], planned  # the seed meets both
    execute_agents(spec, tmp_path / "run", base_dir=tmp_path)
    records = read(tmp_path / "run")
    assert records is not None
    careful = agents_section(spec, records, _Costs(), None).target("careful")
    assert careful is not None and careful.completion.k == 4, careful and careful.transcripts
    episodes = records.episodes.to_pylist()
    assert [e["perturbation"] for e in episodes] == planned
    for e in episodes:
        assert e["onset_ns"] is not None and e["resolved_ns"] is not None, e
        assert e["resolved_ns"] > e["onset_ns"]
    by_kind = {r.perturbation: r for r in careful.recoveries}
    for kind in ("popup", "layout"):
        r = by_kind[kind]
        assert r.recovered.k == r.recovered.n == planned.count(kind)
        assert r.recovery_s.n == planned.count(kind)
    # the pop-up was seen and closed by the agent, in the browser acceval drives
    steps = records.steps.to_pylist()
    # (one struck before the first step: the goal's observation showed it)
    popup_eps = {e["episode"] for e in episodes
                 if e["perturbation"] == "popup" and e["perturb_after"] > 0}
    assert popup_eps and all(any('dialog "Notice"' in (s["observation"] or "") for s in steps
                                 if s["episode"] == ep) for ep in popup_eps)
    assert app.published == ["hello"]  # the last episode's (each starts from a reset)
    assert app.publish_requests == 4


def test_a_flow_with_a_sign_in_meets_an_expired_session_and_signs_in_again(
        tmp_path: Path) -> None:
    """The notes app with a login session (a random ``sid`` cookie): the proxy drops the
    session the browser had when it expired, the app sends the agent back to its sign-in
    form, and the agent signs in again, which overcomes it (a cookie the app set since the
    onset). The session is dropped once: the new one is never dropped, so each such episode
    signs in exactly twice. An expiry that strikes before the first sign-in finds no session
    to drop: the first sign-in overcomes it."""
    assert unavailable() is None, unavailable()
    app = NotesApp(sign_in=True).start()
    try:
        flows = _scenario_file(tmp_path, app.base_url)
        data = yaml.safe_load(flows.read_text())
        data["scenarios"][0].update(perturbations=["expired_session"], steps=5)
        flows.write_text(yaml.safe_dump(data), encoding="utf-8")
        spec = Agents.model_validate({
            "scenarios": "flows.yaml", "only": ["publish-note"], "trials": 4,
            "max_steps": 20, "seed": 7,
            "perturbations": {"kinds": ["expired_session"], "share": 1.0},
            "targets": [{"name": "careful", "command": {
                "argv": [sys.executable, str(AGENT)], "env": {"STYLE": "careful"}}}]})
        planned = plan(spec, tmp_path)
        # steps: type the user (1), sign in (2), type the title, save, publish; the seed
        # strikes once before the sign-in (after step 1) and three times after it
        after = [p.after_step for p in planned]
        assert after == [1, 3, 2, 2], after
        execute_agents(spec, tmp_path / "run", base_dir=tmp_path)
        records = read(tmp_path / "run")
        assert records is not None
        careful = agents_section(spec, records, _Costs(), None).target("careful")
        assert careful is not None and careful.completion.k == 4, careful and \
            careful.transcripts
        assert app.logins[1:] == [1 if a < 2 else 2 for a in after]  # [0]: before any reset
        episodes = records.episodes.to_pylist()
        assert [e["perturbation"] for e in episodes] == ["expired_session"] * 4
        for e in episodes:
            assert e["onset_ns"] is not None and e["resolved_ns"] is not None, e
            assert e["resolved_ns"] > e["onset_ns"]
            assert e["resolved_step"] >= e["onset_step"]
        (r,) = careful.recoveries
        assert r.perturbation == "expired_session"
        assert (r.recovered.k, r.recovered.n, r.recovery_s.n) == (4, 4, 4)
        # what the agent saw right after each expiry was the app's sign-in form
        steps = records.steps.to_pylist()
        for e in episodes:
            seen = [s["observation"] or "" for s in steps
                    if s["episode"] == e["episode"] and s["step"] == e["onset_step"] - 1]
            assert seen and 'button "Sign in"' in seen[0], (e, seen)
        assert app.published == ["hello"] and app.publish_requests == 4
    finally:
        app.stop()
