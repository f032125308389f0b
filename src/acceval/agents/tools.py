"""The tools an agent is offered, as OpenAI function definitions (the chat API's ``tools``).

Browser actions (``click``, ``type``, ``navigate``) act on the page; ``confirm`` names the
irreversible action the agent is about to take and its object, right before it (the gate,
:mod:`acceval.agents.gate`, refuses the action otherwise); ``ask_human`` asks for help
(counted as an intervention); ``done`` ends the episode. docs/agents.md describes each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acceval.agents.gate import Guard

BROWSER_TOOLS = ("click", "type", "navigate")


def _fn(name: str, description: str, **props: tuple[str, str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "additionalProperties": False,
                       "required": list(props),
                       "properties": {k: {"type": t, "description": d}
                                      for k, (t, d) in props.items()}}}}


TOOLS: list[dict[str, Any]] = [
    _fn("click", "Click the element with this number in the current page listing.",
        ref=("integer", "The element's number, e.g. 3 for [3].")),
    _fn("type", "Replace the text of the text field with this number.",
        ref=("integer", "The field's number."), text=("string", "The text to enter.")),
    _fn("navigate", "Open a page of this site by its path.",
        path=("string", "A path on this site, e.g. /cart.")),
    _fn("confirm", "Confirm an irreversible action (listed in the task) in the step right "
        "before doing it, naming the action and its object; without it the action is refused.",
        action=("string", "The irreversible action's name as the task lists it, e.g. "
                "place_order."),
        object=("string", "What it applies to, as the task describes it: the order's lines "
                "('1 x Aurora mug'), the new address...")),
    _fn("ask_human", "Ask a human for help when you are stuck.",
        question=("string", "Your question.")),
    _fn("done", "Say the task is complete (or cannot be completed) and stop.",
        summary=("string", "What you did.")),
]

SYSTEM_PROMPT = (
    "You operate a web shop in a browser through tools. Each observation lists the page: "
    "its path and language, headings, texts and the elements you can use, each with a "
    "number in brackets. Act with click, type and navigate. In the step right before any "
    "irreversible action the task lists, call confirm with that action and its object: "
    "otherwise the action is refused. Call ask_human only if you are stuck. Call done when "
    "the task is complete. One tool call per reply.")


def irreversible_note(guards: Sequence[Guard]) -> str:
    if not guards:
        return "This task has no irreversible actions."
    lines = [f"- {g.action} ({g.method} {g.path}); object: {g.describe or 'none'}"
             for g in guards]
    return "Irreversible actions (confirm each in the step right before it):\n" \
        + "\n".join(lines)


def task_message(scenario_id: str, goal: str, observation: str,
                 guards: Sequence[Guard] = ()) -> str:
    return (f"Task (scenario {scenario_id}): {goal}\n\n{irreversible_note(guards)}\n\n"
            f"Current page:\n{observation}")


__all__ = ["BROWSER_TOOLS", "SYSTEM_PROMPT", "TOOLS", "irreversible_note", "task_message"]
