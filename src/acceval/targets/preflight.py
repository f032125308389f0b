"""Preflight: before the first load point, every endpoint answers and lists its model.

A run on rented accelerators must not measure three targets and then find that the fourth
is unreachable, has no key, or serves another model. The preflight asks each server for
``GET {base_url}/models`` with the run's own client (same headers, same key), all servers at
once, and reports every target that fails, before anything is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from acceval.errors import PreflightError, Problem, TargetError
from acceval.targets.openai import OpenAITarget
from acceval.targets.spec import Endpoint

_HINT_SKIP = "or pass --skip-preflight if the server serves a model it does not list"
_TIMEOUT_S = 30.0

# What one server said: the model ids it lists, or (problem, hint).
_Answer = tuple[list[str] | None, tuple[str, str] | None]


async def _ask(name: str, endpoint: Endpoint) -> _Answer:
    try:
        client = OpenAITarget(name, endpoint)
    except TargetError as exc:  # a key variable that is not set, a bad header
        return None, (str(exc), "set it in the environment of `acceval run`")
    try:
        models, err = await client.list_models(min(endpoint.timeout_s, _TIMEOUT_S))
    finally:
        await client.close()
    if err is not None:
        return None, (f"{endpoint.base_url} did not answer: {err}",
                      "start the server, or fix endpoint.base_url (it ends in /v1)")
    return models, None


def _problem(name: str, endpoint: Endpoint, answer: _Answer) -> Problem | None:
    models, failed = answer
    where = f"target '{name}'"
    if failed is not None:
        return (where, *failed)
    if endpoint.model in (models or []):
        return None
    listed = ", ".join(models or []) or "no model"
    return (where, f"{endpoint.base_url} lists {listed}, not '{endpoint.model}'",
            f"set endpoint.model to a listed id, {_HINT_SKIP}")


async def endpoint_problems(endpoints: Sequence[tuple[str, Endpoint]]) -> list[Problem]:
    """``(target, problem, hint)`` for every ``(name, endpoint)`` that does not answer or does
    not list its model, asked all at once on the running loop."""
    answers = await asyncio.gather(*(_ask(n, ep) for n, ep in endpoints))
    out = [_problem(n, ep, a) for (n, ep), a in zip(endpoints, answers, strict=True)]
    return [p for p in out if p is not None]


def preflight(endpoints: Sequence[tuple[str, Endpoint]]) -> None:
    """Raise :class:`PreflightError` naming every endpoint that is not ready. Sends no load."""
    if not endpoints:
        return
    problems = asyncio.run(endpoint_problems(endpoints))
    if problems:
        raise PreflightError(f"{len(problems)} target(s) failed the preflight; nothing was "
                             "measured", problems)


def served_model(name: str, base_url: str, endpoint: Endpoint | None = None) -> str:
    """A local server has just started: the model to ask it for. With ``endpoint`` (the study
    gave one) its model must be listed; without, the server's first model (it hosts one)."""
    probe = endpoint or Endpoint(base_url=base_url, model="")
    models, failed = asyncio.run(_ask(name, probe))
    if endpoint is None and failed is None:
        if models:
            return models[0]
        failed = (f"{base_url} lists no model", "check the engine's model_id option")
    problem = _problem(name, probe, (models, failed))
    if problem is not None:
        raise PreflightError(f"target '{name}': the local server failed the preflight",
                             [problem])
    return probe.model
