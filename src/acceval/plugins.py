"""The one plugin door: entry-point groups for targets, probes, engines and checkers.

Built-ins register in ``pyproject.toml`` under the same groups a third-party package uses, and
every lookup goes through :func:`load_plugin`. The built-in table below repeats those
registrations as strings (nothing is imported) because an editable checkout whose install
metadata predates a new built-in would otherwise not find it; ``tests/unit/test_plugins.py``
keeps the table and ``pyproject.toml`` equal.

A name registered by two different distributions is refused when loaded rather than resolved
by install order, so the same study never silently means different code on two machines.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

from acceval.errors import AccevalError, UsageError

#: Entry-point group -> what one plugin in it is called in messages.
GROUPS: Mapping[str, str] = {
    "acceval.targets": "target",
    "acceval.probes": "probe",
    "acceval.engines": "engine",
    "acceval.checkers": "checker",
    "acceval.scenarios": "scenario pack",
}

BUILTIN_DIST = "acceval"

#: The built-ins, exactly as ``pyproject.toml`` registers them.
BUILTINS: Mapping[str, Mapping[str, str]] = {
    "acceval.targets": {
        "openai": "acceval.targets.openai:OpenAITarget",
    },
    "acceval.probes": {
        "cpu": "acceval.probes.factories:cpu",
        "rapl": "acceval.probes.factories:rapl",
        "nvml": "acceval.probes.factories:nvml",
        "neuron": "acceval.probes.factories:neuron",
        "dcgm": "acceval.probes.factories:dcgm",
    },
    "acceval.engines": {
        "mock": "acceval.engines.mock:MockEngine",
        "ortgenai": "acceval.engines.ortgenai:OrtGenAIEngine",
        "transformers": "acceval.engines.torch_engine:TorchEngine",
        "numpy": "acceval.engines.numpy_engine:NumpyEngine",
    },
    "acceval.checkers": {
        "exact": "acceval.tasks:ExactChecker",
        "numeric": "acceval.tasks:NumericChecker",
        "regex": "acceval.tasks:RegexChecker",
        "contains": "acceval.tasks:ContainsChecker",
        "choice": "acceval.tasks:ChoiceChecker",
        "json": "acceval.tasks:JsonChecker",
    },
    "acceval.scenarios": {
        "shop": "acceval.agents.scenarios:shop_pack",
    },
}


@dataclass(frozen=True, slots=True)
class Plugin:
    """One registration: ``value`` is the entry point's ``module:attribute``."""

    group: str
    name: str
    value: str
    dist: str

    @property
    def builtin(self) -> bool:
        return self.dist == BUILTIN_DIST


class PluginError(UsageError):
    """A plugin name that is unknown, registered twice, or fails to import.

    ``headline`` says what is wrong and ``hint`` what to do (what is installed, the closest
    name), so that a caller can put them in a study problem as they are.
    """

    def __init__(self, group: str, name: str, headline: str, hint: str) -> None:
        super().__init__(f"{headline}; {hint}" if hint else headline)
        self.group = group
        self.name = name
        self.headline = headline
        self.hint = hint


def kind_of(group: str) -> str:
    try:
        return GROUPS[group]
    except KeyError:
        raise ValueError(f"unknown plugin group {group!r}; one of: {', '.join(GROUPS)}") from None


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "an unnamed distribution"


class _Selectable(Protocol):
    def select(self, *, group: str) -> Iterable[EntryPoint]: ...


@functools.cache
def _installed_entry_points() -> _Selectable:
    """Every installed distribution's entry points, read once: ``entry_points(group=...)``
    reads them all for each group it is asked for (a study names five groups)."""
    return entry_points()


@functools.cache
def _registrations(group: str) -> Mapping[str, tuple[Plugin, ...]]:
    found: dict[str, dict[str, Plugin]] = {}
    for ep in _installed_entry_points().select(group=group):
        dist = _dist_name(ep)
        found.setdefault(ep.name, {})[dist] = Plugin(group, ep.name, ep.value, dist)
    for name, value in BUILTINS[group].items():
        # The installed metadata of this package wins over the table: they are the same
        # registration, and the metadata is what ``pip`` would show.
        found.setdefault(name, {}).setdefault(BUILTIN_DIST,
                                              Plugin(group, name, value, BUILTIN_DIST))
    return {name: tuple(by_dist.values()) for name, by_dist in sorted(found.items())}


def registered(group: str) -> list[Plugin]:
    """Every registration in ``group``, by name (a conflicting name appears once per dist)."""
    kind_of(group)
    return [p for regs in _registrations(group).values() for p in regs]


def installed(group: str) -> list[str]:
    """The names that ``load_plugin(group, name)`` can be asked for here, sorted."""
    kind_of(group)
    return list(_registrations(group))


def closest(name: str, names: list[str]) -> str | None:
    """The installed name a typo most likely meant, or None."""
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return match[0] if match else None


def unknown(group: str, name: str, names: list[str] | None = None) -> PluginError:
    """The error for a name not in ``group``: what is installed and the closest name."""
    kind = kind_of(group)
    names = installed(group) if names is None else names
    near = closest(name, names)
    hint = (f"did you mean '{near}'? " if near else "") + (
        f"installed {kind}s: {', '.join(names) or '(none)'}"
        f" (a plugin registers in the '{group}' entry-point group)")
    return PluginError(group, name, f"unknown {kind} '{name}'", hint)


def plugin(group: str, name: str) -> Plugin:
    """The one registration of ``name`` in ``group``; raises :class:`PluginError`."""
    kind = kind_of(group)
    found = _registrations(group).get(name)
    if not found:
        raise unknown(group, name)
    if len(found) > 1:
        who = ", ".join(f"{p.dist} ({p.value})" for p in found)
        raise PluginError(group, name, f"the {kind} '{name}' is registered by "
                          f"{len(found)} packages: {who}", "uninstall all but one of them")
    return found[0]


@functools.cache
def load_plugin(group: str, name: str) -> Any:
    """Import and return the object registered as ``name`` in ``group`` (cached).

    Raises :class:`PluginError` for an unknown name (listing what is installed), a name two
    packages register, or a registration whose import fails. An :class:`AccevalError` raised
    while importing (a missing extra, say) passes through unchanged.
    """
    p = plugin(group, name)
    try:
        return EntryPoint(p.name, p.value, p.group).load()
    except AccevalError:
        raise
    except Exception as exc:
        kind = kind_of(group)
        raise PluginError(
            group, name, f"the {kind} plugin '{name}' ({p.value}, from {p.dist}) failed to "
            f"load: {type(exc).__name__}: {exc}",
            "reinstall or fix the package that provides it") from exc


def refresh() -> None:
    """Forget what was discovered and loaded (after installing a plugin in this process)."""
    _installed_entry_points.cache_clear()
    _registrations.cache_clear()
    load_plugin.cache_clear()
