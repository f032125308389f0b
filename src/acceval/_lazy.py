"""Re-exports that import their module on first use.

A concept's package re-exports its parts' public names (``from acceval.serve import
start_server``), but a process that needs one spec of it (``acceval report`` validating a
study reads ``acceval.serve.spec``) should not pay for the server, the HTTP client or the
probes behind the other names. Each such package sets ``__getattr__ = exports(...)`` (PEP 562)
and lists the same names under ``if TYPE_CHECKING:`` for the type checker and the import-graph
tests.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


class _Package(types.ModuleType):
    """A package one of whose exported names is also one of its modules' names
    (``acceval.metrics.accuracy`` defines ``accuracy``). Importing that module makes the
    import system bind the module to the name in the package, where an eager re-export would
    have bound the function right after; here the binding is skipped, so the name still
    resolves to what the package exports."""

    _shadowed: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if (name in self._shadowed and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return
        super().__setattr__(name, value)


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``names[name]`` (a module) when
    ``name`` is first read, and keeps the value in the package for later reads."""
    module = sys.modules[package]
    folders = list(getattr(module, "__path__", []))
    shadowed = frozenset(n for n in names if any(
        os.path.exists(os.path.join(f, n + ".py")) or os.path.isdir(os.path.join(f, n))
        for f in folders))
    if shadowed:
        module.__class__ = _Package
        setattr(module, "_shadowed", shadowed)  # noqa: B010 (a ModuleType has no such slot)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
