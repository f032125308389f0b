"""Stray actions from recorded effects: each action judged by what the shop and the page saw
it do against the scenario's goal and route, then counted per target by the real analysis,
and shown in the report beside the other rates."""

from __future__ import annotations

import json
from typing import Any

from acceval.agents.analyze import agents_section
from acceval.agents.env import Episode, EpisodePlan, Step
from acceval.agents.scenarios import NEW_EMAIL, SCENARIOS
from acceval.agents.spec import Agents
from acceval.agents.store import AgentRecords, AgentsLog, tables
from acceval.agents.stray import is_stray, off_route
from acceval.economics.spec import StudyCosts
from acceval.report._agents import detail_rows

BUY = SCENARIOS["buy-one"]
EMAIL = SCENARIOS["change-email"]


def _s(before: str, after: str, *effects: dict[str, Any], ok: bool = True) -> dict[str, Any]:
    return {"ok": ok, "effects": json.dumps(list(effects)), "page_before": before,
            "page_after": after}


def test_state_changes_toward_the_goal_are_accepted_and_others_stray() -> None:
    assert not is_stray(BUY, _s("/catalogue", "/catalogue",
                                {"kind": "cart_add", "item": "aurora", "before": 0}))
    # a second mug, or another product, moves the state away from the goal
    assert is_stray(BUY, _s("/catalogue", "/catalogue",
                            {"kind": "cart_add", "item": "aurora", "before": 1}))
    assert is_stray(BUY, _s("/catalogue", "/catalogue",
                            {"kind": "cart_add", "item": "delta", "before": 0}))
    # removing the extra product corrects it; removing the wanted one does not
    assert not is_stray(BUY, _s("/cart", "/cart",
                                {"kind": "cart_remove", "item": "delta", "before": 1}))
    assert is_stray(BUY, _s("/cart", "/cart",
                            {"kind": "cart_remove", "item": "aurora", "before": 1}))
    assert not is_stray(BUY, _s("/checkout", "/orders/1", {"kind": "order", "before": 0}))
    assert is_stray(BUY, _s("/checkout", "/orders/2", {"kind": "order", "before": 1}))
    assert is_stray(BUY, _s("/checkout", "/login", {"kind": "logout"}))
    assert is_stray(BUY, _s("/account", "/account", {"kind": "email", "value": NEW_EMAIL,
                                                     "before": "alice@example.com"}))
    assert not is_stray(EMAIL, _s("/account", "/account", {
        "kind": "email", "value": NEW_EMAIL, "before": "alice@example.com"}))


def test_overcoming_a_perturbation_is_accepted() -> None:
    assert not is_stray(BUY, _s("/catalogue", "/catalogue",
                                {"kind": "lang", "value": "en", "before": "es"}))
    # English again when it was English already: it did nothing
    assert is_stray(BUY, _s("/catalogue", "/catalogue",
                            {"kind": "lang", "value": "en", "before": "en"}))
    assert is_stray(BUY, _s("/catalogue", "/catalogue",
                            {"kind": "lang", "value": "es", "before": "en"}))
    assert not is_stray(SCENARIOS["switch-language"], _s(
        "/catalogue", "/catalogue", {"kind": "lang", "value": "es", "before": "en"}))
    for kind in ("login", "popup_close"):
        assert not is_stray(BUY, _s("/login", "/cart", {"kind": kind}))
    assert not is_stray(BUY, _s("/login", "/login",
                                {"kind": "fill", "field": "username", "value": "alice"}))
    # the user name typed into the password field
    assert is_stray(BUY, _s("/login", "/login",
                            {"kind": "fill", "field": "password", "value": "alice"}))
    assert not is_stray(EMAIL, _s("/account", "/account",
                                  {"kind": "fill", "field": "email", "value": NEW_EMAIL}))


def test_a_move_strays_when_it_stays_leaves_the_route_or_goes_back() -> None:
    route = BUY.route
    assert route[0] == "/catalogue" and route[-1] == "/orders"
    assert not off_route(route, "/catalogue", "/cart")
    assert not off_route(route, "/cart", "/checkout")
    assert not off_route(route, "/account", "/cart")  # back onto the route
    assert off_route(route, "/catalogue", "/catalogue")
    assert off_route(route, "/catalogue", "/account")
    assert off_route(route, "/cart", "/catalogue")
    # a failed action is stray whatever it aimed at
    assert is_stray(BUY, _s("/cart", "/cart", ok=False))
    assert is_stray(BUY, {"ok": True, "effects": None, "page_after": None}) is None


def _step(i: int, tool: str, effects: list[dict[str, Any]] | None, before: str,
          after: str, ok: bool = True) -> Step:
    return Step(step=i, tool=tool, arguments="{}", ok=ok, error=None if ok else "no element",
                irreversible="order" if any(e["kind"] == "order" for e in effects or [])
                else None, confirmed=True if effects and effects[0]["kind"] == "order"
                else None, model_ms=1.0, action_ms=1.0, prompt_tokens=1,
                completion_tokens=1, started_ns=i, done_ns=i + 1, observation="ok",
                content="", effects=None if effects is None else json.dumps(effects),
                page_before=before, page_after=after)


class _Costs:
    costs = StudyCosts()


def test_the_rate_is_stray_actions_over_browser_actions_and_shows_in_the_report() -> None:
    add = [{"kind": "cart_add", "item": "aurora", "before": 0}]
    wrong = [{"kind": "cart_add", "item": "delta", "before": 0}]
    steps = [_step(0, "click", wrong, "/catalogue", "/catalogue"),
             _step(1, "click", add, "/catalogue", "/catalogue"),
             _step(2, "click", [], "/catalogue", "/account"),
             _step(3, "navigate", [], "/account", "/checkout"),
             _step(4, "confirm", None, "", ""),
             _step(5, "click", [{"kind": "order", "before": 0}], "/checkout", "/orders/1")]
    ep = Episode(EpisodePlan(BUY, 0, 0, None, 0, 1), steps, state_problem="orders are wrong",
                 said_done=True, stopped_by="done", started_ns=0, done_ns=10)
    spec = Agents.model_validate({"only": ["buy-one"], "trials": 1,
                                  "targets": [{"name": "a", "policy": {"wrong_click": 0.4}}]})
    records = AgentRecords(*tables([("a", ep)]), AgentsLog(browser="fixture"))
    t = agents_section(spec, records, _Costs(), None).targets[0]
    assert t.stray_actions is not None
    assert (t.stray_actions.k, t.stray_actions.n) == (2, 5)  # the pen and the account page
    row = dict(zip(*detail_rows(agents_section(spec, records, _Costs(), None)), strict=True))
    assert row["stray actions"].startswith("40% [") and row["stray actions"].endswith("(2/5)")
    assert "wrong click 40%" in row["declared error rates"]
    # a run recorded before effects were: not measured, never 0
    old = AgentRecords(records.steps.drop_columns(["effects", "page_before", "page_after"]),
                       records.episodes, records.log)
    assert agents_section(spec, old, _Costs(), None).targets[0].stray_actions is None
