"""Preflight: before the first load point, every endpoint answers and lists its model.

A run on rented accelerators must not measure three targets and then find that the fourth
is unreachable, has no key, or serves another model. The preflight asks each server for
``GET {base_url}/models`` with the run's own client (same headers, same key), all servers at
once, and reports every target that fails, before anything is sent. A model upstream that an
agent program reaches through acceval's recording proxy is asked the same, whether it answers.
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


async def _ask(name: str, endpoint: Endpoint, field: str = "endpoint.base_url") -> _Answer:
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
                      f"start the server, or fix {field} (it ends in /v1)")
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


async def upstream_problems(upstreams: Sequence[tuple[str, str, Endpoint]]) -> list[Problem]:
    """``(where, problem, hint)`` for every ``(where, field, endpoint)`` that does not answer
    ``GET /models``. Only whether it answers: the model is the caller's own choice (an agent
    program picks it), so the list is not checked."""
    answers = await asyncio.gather(*(_ask(w, ep, f) for w, f, ep in upstreams))
    return [(w, *failed) for (w, _, _), (_, failed) in zip(upstreams, answers, strict=True)
            if failed is not None]


def preflight(endpoints: Sequence[tuple[str, Endpoint]],
              upstreams: Sequence[tuple[str, str, Endpoint]] = ()) -> None:
    """Raise :class:`PreflightError` naming every endpoint that is not ready, and every
    upstream (see :func:`upstream_problems`) that does not answer. Sends no load."""
    if not endpoints and not upstreams:
        return

    async def both() -> list[Problem]:
        found = await asyncio.gather(endpoint_problems(endpoints), upstream_problems(upstreams))
        return found[0] + found[1]

    problems = asyncio.run(both())
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
