"""Scenario sets: the one door every scenario comes through.

``builtin:NAME`` is a scenario pack registered in the ``acceval.scenarios`` plugin group (the
built-in shop is ``builtin:shop``, registered there like any third-party pack); anything else
is the path of a scenario file describing flows on the user's own app
(:mod:`acceval.agents.flows`). A pack is a callable returning its scenarios (built-in
scenarios or :class:`~acceval.agents.flows.FlowScenario` s), or the path of a scenario file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acceval.agents.flows import load_flows
from acceval.errors import StudyError
from acceval.plugins import load_plugin

GROUP = "acceval.scenarios"
BUILTIN_PREFIX = "builtin:"


def load_set(name: str, base_dir: Path | None = None) -> list[Any]:
    """The scenarios of set ``name``, in order; a :class:`StudyError` naming the field."""
    if name.startswith(BUILTIN_PREFIX):
        pack = load_plugin(GROUP, name.removeprefix(BUILTIN_PREFIX))
        found = pack() if callable(pack) else pack
        if isinstance(found, str | Path):
            return load_flows(Path(found))
        return list(found)
    path = Path(name)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.exists():
        raise StudyError(f"agents.scenarios: {name} is not a file", [
            ("agents.scenarios", f"no scenario file at {path}",
             "give builtin:shop, an installed pack (builtin:NAME) or a scenario file's path")])
    return load_flows(path)


def selected(scenarios: list[Any], only: list[str]) -> list[Any]:
    """The scenarios a study runs, in the set's order; unknown ids in ``only`` are named."""
    ids = [s.id for s in scenarios]
    unknown = [s for s in only if s not in ids]
    if unknown:
        raise StudyError("agents.only names unknown scenarios", [
            ("agents.only", f"unknown scenario(s) {', '.join(unknown)}",
             f"known: {', '.join(ids)}")])
    return [s for s in scenarios if not only or s.id in only]


__all__ = ["GROUP", "load_set", "selected"]
