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
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``names[name]`` (a module) when
    ``name`` is first read, and keeps the value in the package for later reads."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
