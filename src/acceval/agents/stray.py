"""Stray actions: browser actions whose observed effect the scenario's goal does not accept.

A model reports nothing about its own mistakes, so an action is judged by what the
environment saw it do: the shop's record of each state change (with the value before it,
:attr:`acceval.agents.app.Shop.effects`), the text field the page filled, and the page the
browser was on before and after. Pure over one stored step and its scenario
(docs/agents.md, *Stray actions*):

- a failed action (its tool result was an error) is stray: it did nothing the task needed;
- a state change is accepted only when it moves the state toward the scenario's goal
  (:class:`~acceval.agents.scenarios.Want`): a product added while fewer are held than the
  goal holds, removed while more are, an order while fewer are placed than the goal asks,
  the goal's e-mail or language set where it was not. Signing in (or failing to), and
  closing a pop-up, are always accepted: they are how a perturbation is overcome. Signing
  out, and anything else, is stray;
- text typed into a field is accepted only as the scenario's own entries (and the sign-in's);
- an action that changed nothing on the server moved the browser, or did not: it is stray
  when the page stayed the same, when it left the scenario's route (the pages of its
  reference path), or when it went back along the route.

Each deviation from the goal counts once, at the action that made it: an order placed from
a cart that held a wrong product is accepted, the wrong product having been counted when it
was added.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acceval.agents.scenarios import Scenario, Want

#: Effects that overcome a perturbation, or try to (a failed sign-in is the consequence of
#: a wrong entry, counted when it was typed).
ALWAYS_ACCEPTED = frozenset({"login", "login_failed", "popup_close"})


def _page(path: str) -> str:
    return "/orders" if path.startswith("/orders/") else path


def accepted(effect: Mapping[str, Any], want: Want, fills: frozenset[tuple[str, str]]) -> bool:
    """Whether one recorded effect moves the shop toward ``want``."""
    kind = effect.get("kind")
    if kind in ALWAYS_ACCEPTED:
        return True
    if kind == "cart_add":
        return int(effect["before"]) < want.items.get(str(effect["item"]), 0)
    if kind == "cart_remove":
        return int(effect["before"]) > want.items.get(str(effect["item"]), 0)
    if kind == "order":
        return int(effect["before"]) < len(want.orders)
    if kind == "email":
        return bool(effect["value"] == want.email != effect["before"])
    if kind == "lang":
        return bool(effect["value"] == (want.language or "en") != effect["before"])
    if kind == "fill":
        return (str(effect["field"]), str(effect["value"])) in fills
    return False


def off_route(route: tuple[str, ...], before: str, after: str) -> bool:
    """Whether a move from ``before`` to ``after`` (no state changed) strays: it stayed put,
    left the route, or went back along it. Coming back onto the route is not stray."""
    before, after = _page(before), _page(after)
    if after == before or after not in route:
        return True
    if before not in route:
        return False
    return not any(route[j] == after for i, page in enumerate(route) if page == before
                   for j in range(i + 1, len(route)))


def is_stray(scenario: Scenario, step: Mapping[str, Any]) -> bool | None:
    """Whether one stored browser step is stray; None when the step has no effect record
    (a run written before acceval recorded effects)."""
    if step.get("effects") is None or step.get("page_after") is None:
        return None
    if not step["ok"]:
        return True
    effects = json.loads(str(step["effects"]))
    if effects:
        return not all(accepted(e, scenario.want, scenario.fills) for e in effects)
    return off_route(scenario.route, str(step.get("page_before") or ""), str(step["page_after"]))


__all__ = ["ALWAYS_ACCEPTED", "accepted", "is_stray", "off_route"]
