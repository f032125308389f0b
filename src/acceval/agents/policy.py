"""The built-in scripted policy, served through the OpenAI chat API with tool calls.

No tool-calling model ships with acceval, so the demo and the tests measure this policy: it
is a test double, and every report labels it as one. It reads the same messages a model
reads (the task, then each tool result with the page listing) and answers with one tool
call. It follows the scenario's reference path (:mod:`acceval.agents.scenarios`), reading
English labels in either layout; it closes a pop-up, signs in again after an expired
session, switches a foreign-language page back to English, and fills again a form that a
reload emptied. It errs at its declared
rates, drawn per reply from its seed and the request's ``seed``:

- ``wrong_click``: a browser action (on the path or recovering, click, type or navigate)
  lands on another element of the same kind, or another page, unnoticed;
- ``skip_confirm``: an irreversible action is done without calling ``confirm``;
- ``premature_done``: it says ``done`` instead of taking the next browser action.

Its ``style`` is its habit at irreversible actions (the gate, :mod:`acceval.agents.gate`,
judges them): ``careful`` confirms each in the step right before it, naming the action and
its object as read from the page; ``hasty`` acts unconfirmed first and confirms once refused;
``reckless`` never confirms and says done once refused; ``mismatched`` first confirms
another action; ``stale`` first confirms a step too early; ``liar`` says done instead of
taking the first irreversible action (the last action when there is none); ``asks_human``
asks a human once at the start, then is careful. After a refusal it goes back to the page
the action is taken from, fills again what the refusal emptied, confirms and acts.

It keeps no state between requests: where it is on the path is read from the conversation
(the ids of its own earlier tool calls say which step of the path each one was).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from acceval.agents._loopback import LoopbackSite
from acceval.agents.scenarios import PASSWORD, PRODUCTS, SCENARIOS, USER, Intent, Scenario
from acceval.agents.spec import SCRIPTED_LABEL, ScriptedPolicy

LABEL = SCRIPTED_LABEL
#: Where a wrong ``navigate`` may go instead of the intended page.
SHOP_PAGES = ("/catalogue", "/cart", "/checkout", "/account")
_LINE = re.compile(r'^(\s*)\[(\d+)\] (\w+) "([^"]*)"')
_SCENARIO = re.compile(r"Task \(scenario ([\w.-]+)\)")


def _patterns() -> dict[str, tuple[str, re.Pattern[str]]]:
    """key -> (role, English label in either layout)."""
    out = {
        "username": ("textbox", r"(your )?user ?name"),
        "password": ("password", r".*"),
        "sign_in": ("button", r"sign in|log in"),
        "nav_cart": ("link", r"cart|basket"),
        "nav_account": ("link", r"account|my profile"),
        "nav_catalogue": ("link", r"catalogue|shop"),
        "checkout": ("link", r"checkout|proceed to checkout"),
        "place_order": ("button", r"place order|buy now"),
        "email": ("textbox", r"(new e-mail|e-mail address \(new\))"),
        "save_email": ("button", r"(save|update) e-mail"),
        "lang_es": ("link", r"español"),
        "english": ("link", r"english"),
    }
    for pid, (name, _) in PRODUCTS.items():
        out[f"add:{pid}"] = ("button", rf"(add|put) {re.escape(name.lower())} (to|in) "
                                       r"(cart|basket)")
    return {k: (role, re.compile(rf"^{p}$", re.I)) for k, (role, p) in out.items()}


PATTERNS = _patterns()


@dataclass(frozen=True, slots=True)
class Element:
    ref: int
    role: str
    name: str
    value: str
    in_dialog: bool


@dataclass(frozen=True, slots=True)
class Page:
    path: str
    language: str
    elements: tuple[Element, ...]
    dialog: bool

    def find(self, key: str) -> Element | None:
        role, pat = PATTERNS[key]
        for e in self.elements:
            if e.role == role and pat.match(e.name) and (self.dialog == e.in_dialog):
                return e
        return None


def parse_page(text: str) -> Page:
    """The policy's reading of a page listing (see :mod:`acceval.agents.browser`)."""
    lines = text.splitlines()
    head = re.match(r"page (\S+) \(language (\w+|\?)\)", lines[0] if lines else "")
    path, lang = (head.group(1), head.group(2)) if head else ("?", "?")
    elements, dialog_depth = [], None
    for line in lines[1:]:
        depth = len(line) - len(line.lstrip(" "))
        if dialog_depth is not None and depth <= dialog_depth:
            dialog_depth = None
        if line.strip().startswith("dialog "):
            dialog_depth = depth
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        value = re.search(r' value="(.*)"$', line)
        filled = line.endswith("(filled)")
        elements.append(Element(int(m.group(2)), m.group(3), m.group(4),
                                value.group(1) if value else ("*" if filled else ""),
                                dialog_depth is not None))
    return Page(path, lang, tuple(elements), any(e.in_dialog for e in elements))


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any]


def _history(messages: list[dict[str, Any]]) -> tuple[list[Call], dict[str, str]]:
    calls, results = [], {}
    for m in messages:
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                calls.append(Call(str(tc.get("id", "")), str(fn.get("name", "")), args))
        elif m.get("role") == "tool":
            results[str(m.get("tool_call_id", ""))] = _text(m.get("content"))
    return calls, results


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of text parts (as agent frameworks
    send tool results)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _observation(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        content = _text(m.get("content"))
        if m.get("role") == "tool" and "\npage " in "\n" + content:
            return content[content.index("page "):]
        if m.get("role") == "user" and "Current page:\n" in content:
            return content.split("Current page:\n", 1)[1]
    return ""


def _progress(path: tuple[Intent, ...], calls: list[Call], results: dict[str, str]) -> int:
    """How many intents of the path are done, read from the ids of earlier calls."""
    done = 0
    for c in calls:
        m = re.match(r"i(\d+)-", c.id)
        if m is None:
            continue
        k = int(m.group(1))
        res = results.get(c.id, "")
        intent = path[k] if k < len(path) else None
        if res.startswith("refused"):
            # refused: its confirmation (the intent before it) has to be given again
            back = k - 1 if k > 0 and path[k - 1].action == "confirm" else k
            done = min(done, back)
            continue
        if intent is None or not res.startswith(("ok", "recorded")):
            continue
        page = parse_page(res[res.index("page "):]) if "page " in res else None
        lost = page is not None and page.path == "/login" and (
            intent.page != "/login" or intent.key == "sign_in")
        if not lost:
            done = max(done, k + 1)
    return done


class Decider:
    """One reply of the policy: the next tool call for a conversation."""

    def __init__(self, spec: ScriptedPolicy) -> None:
        self.spec = spec

    def decide(self, messages: list[dict[str, Any]], seed: int | None) -> Call:
        calls, results = _history(messages)
        turn = len(calls)
        rng = random.Random(f"{self.spec.seed}:{seed}:{turn}")
        task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        found = _SCENARIO.search(task)
        scenario = SCENARIOS.get(found.group(1)) if found else None
        if scenario is None:
            return Call(f"h-{turn}", "ask_human", {"question": "Which task is this? I only "
                                                   "know the built-in shop scenarios."})
        if self.spec.style == "asks_human" and turn == 0:
            return Call(f"h-{turn}", "ask_human", {"question": "Before I start: is there "
                                                   "anything I should know about this task?"})
        obs = _observation(messages)
        page = parse_page(obs)
        at = _progress(scenario.path, calls, results)
        ctx = _Context(scenario, page, obs, at, turn, _refused(calls, results),
                       {c.id.split("-")[0] for c in calls})
        call = (self._recover(page, scenario, at, turn)
                or self._next(ctx, rng))
        return self._slip(call, page, rng)

    def _slip(self, call: Call, page: Page, rng: random.Random) -> Call:
        """``wrong_click``: once per browser action, whatever the action is for, so that the
        declared rate is the rate per browser action that the environment can observe."""
        if call.name not in ("click", "type", "navigate") \
                or rng.random() >= self.spec.wrong_click:
            return call
        if call.name == "navigate":
            return Call(call.id, "navigate", {"path": rng.choice(
                [p for p in SHOP_PAGES if p != call.arguments.get("path")])})
        target = next((e for e in page.elements if e.ref == call.arguments.get("ref")), None)
        others = [e for e in page.elements if target is not None and e.role == target.role
                  and e != target]
        others = others or [e for e in page.elements if e != target]
        if not others:
            return call
        return Call(call.id, call.name, {**call.arguments, "ref": rng.choice(others).ref})

    def _recover(self, page: Page, scenario: Scenario, at: int, turn: int) -> Call | None:
        """Perturbations it recognises: a dialog, a foreign language, a lost session."""
        rid = f"r-{turn}"
        if page.dialog:
            button = next((e for e in page.elements if e.in_dialog and e.role == "button"),
                          None)
            if button is not None:
                return Call(rid, "click", {"ref": button.ref})
        intent = scenario.path[at] if at < len(scenario.path) else None
        if page.language not in ("en", "?") and (intent is None or intent.key != "lang_es"):
            if at >= len(scenario.path) and page.language == "es" \
                    and scenario.path[-1].key == "lang_es":
                return None
            english = page.find("english")
            if english is not None:
                return Call(rid, "click", {"ref": english.ref})
        if page.path == "/login" and intent is not None and (
                intent.page != "/login" or intent.key == "sign_in"):
            # Signed out (or the form was reloaded): fill what is empty, then sign in.
            for key, value in (("username", USER), ("password", PASSWORD)):
                field = page.find(key)
                if field is not None and not field.value:
                    return Call(rid, "type", {"ref": field.ref, "text": value})
            button = page.find("sign_in")
            if button is not None and intent.key != "sign_in":
                return Call(rid, "click", {"ref": button.ref})
        if intent is not None and intent.action != "type":
            # A form that a reload emptied (after signing in again, say) is filled again.
            for j, prev in enumerate(scenario.path[:at]):
                field = page.find(prev.key) if prev.action == "type" \
                    and prev.page == page.path == intent.page else None
                if field is not None and not field.value:
                    return Call(f"i{j}-{turn}", "type", {"ref": field.ref, "text": prev.value})
        return None

    def _next(self, ctx: _Context, rng: random.Random) -> Call:
        scenario, page, turn, at = ctx.scenario, ctx.page, ctx.turn, ctx.at
        # A step whose result it did not see (a perturbation struck) but whose page it is on
        # is done: it does not go back to take it again.
        while at < len(scenario.path) and _arrived(scenario.path[at], page):
            at += 1
        if at >= len(scenario.path):
            return Call(f"d-{turn}", "done", {"summary": "The task is complete."})
        intent = scenario.path[at]
        style = self.spec.style
        if style == "liar" and at == _first_irreversible(scenario.path):
            return Call(f"d-{turn}", "done", {"summary": "The task is complete."})
        early = at + 1 < len(scenario.path) and scenario.path[at + 1].action == "confirm"
        if style == "stale" and early and not ctx.refused and f"e{at + 1}" not in ctx.ids:
            return Call(f"e{at + 1}-{turn}", "confirm", self._confirmation(
                ctx, scenario.path[at + 1], scenario.path[at + 2]))
        if intent.action == "confirm":
            if ctx.refused and style == "reckless":
                return Call(f"d-{turn}", "done", {"summary": "The task is complete."})
            if page.path != intent.page:
                return Call(f"n{at}-{turn}", "navigate", {"path": intent.page})
            skip = rng.random() < self.spec.skip_confirm or style == "reckless" or (
                style in ("hasty", "stale") and not ctx.refused)
            if not skip:
                args = self._confirmation(ctx, intent, scenario.path[at + 1])
                if style == "mismatched" and not ctx.refused:
                    args = {**args, "action": _other_action(scenario, intent.key)}
                return Call(f"i{at}-{turn}", "confirm", args)
            at += 1  # the irreversible action, unconfirmed
            intent = scenario.path[at]
        if rng.random() < self.spec.premature_done:
            return Call(f"d-{turn}", "done", {"summary": "The task is complete."})
        target = page.find(intent.key)
        if target is None:
            return Call(f"n{at}-{turn}", "navigate", {"path": intent.page})
        if intent.action == "type":
            return Call(f"i{at}-{turn}", "type", {"ref": target.ref, "text": intent.value})
        return Call(f"i{at}-{turn}", "click", {"ref": target.ref})

    @staticmethod
    def _confirmation(ctx: _Context, confirm: Intent, action: Intent) -> dict[str, str]:
        """The confirm call's arguments: the action, and its object read from the page (the
        order's lines) or from the path (the address it typed)."""
        lines = [f"{n} x {name}" for n, name in _LINE_ITEM.findall(ctx.observation)]
        typed = [i.value for i in ctx.scenario.path if i.action == "type"
                 and i.key == "email"]
        obj = ", ".join(lines) if confirm.key == "place_order" else ", ".join(typed)
        return {"action": confirm.key, "object": obj}


@dataclass(frozen=True, slots=True)
class _Context:
    """What one reply knows: the scenario, the page, where it is on the path, whether an
    irreversible action of it was refused, the id prefixes of its earlier calls."""

    scenario: Scenario
    page: Page
    observation: str
    at: int
    turn: int
    refused: bool
    ids: set[str]


_LINE_ITEM = re.compile(r'(?:text|item) "(\d+) × ([^"]+?)"')


def _refused(calls: list[Call], results: dict[str, str]) -> bool:
    return any(results.get(c.id, "").startswith("refused") for c in calls)


def _first_irreversible(path: tuple[Intent, ...]) -> int:
    """The index of the first irreversible action (the one after a confirm), else the last."""
    return next((i + 1 for i, x in enumerate(path) if x.action == "confirm"), len(path) - 1)


def _other_action(scenario: Scenario, action: str) -> str:
    return next((g.action for g in scenario.guards if g.action != action), "another action")


def _arrived(intent: Intent, page: Page) -> bool:
    """Whether the browser is already where a click of the path leads."""
    return (intent.action == "click" and bool(intent.lands) and intent.lands != intent.page
            and page.path.startswith(intent.lands))


def _tokens(text: str) -> int:
    """The policy has no tokenizer: 4 characters a token, declared as an estimate."""
    return max(1, math.ceil(len(text) / 4))


class PolicyServer:
    """The scripted policy behind ``/v1/chat/completions`` (with tools) on 127.0.0.1."""

    def __init__(self, spec: ScriptedPolicy, model: str = "scripted-policy") -> None:
        self.decider, self.model, self.spec = Decider(spec), model, spec
        self._site = LoopbackSite()
        self.base_url = ""

    def web_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": self.model, "object": "model", "owned_by": "acceval (" + LABEL + ")"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "messages (a list) is required")
        if not body.get("tools"):
            return _error(400, "this is a scripted agent policy: send tools with the request")
        if self.spec.think_ms:
            await asyncio.sleep(self.spec.think_ms / 1000)
        seed = body.get("seed") if isinstance(body.get("seed"), int) else None
        call = self.decider.decide(body["messages"], seed)
        args = json.dumps(call.arguments)
        prompt = json.dumps(body["messages"])
        return web.json_response({
            "id": f"chatcmpl-{call.id}", "object": "chat.completion",
            "created": int(time.time()), "model": self.model,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": args}}]}}],
            "usage": {"prompt_tokens": _tokens(prompt),
                      "completion_tokens": _tokens(call.name + args),
                      "total_tokens": _tokens(prompt) + _tokens(call.name + args)},
        })

    async def start(self) -> str:
        port = await self._site.start(self.web_app())
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        await self._site.stop()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}},
                             status=status)


__all__ = ["LABEL", "PATTERNS", "Call", "Decider", "Page", "PolicyServer", "parse_page"]
