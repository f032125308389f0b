"""acceval: compare AI accelerators by what a correct answer costs.

The documented API::

    import acceval
    study = acceval.load_study("study.yaml")
    result, run_dir = acceval.run(study)             # measure (acceval run)
    result = acceval.load_result(run_dir, recompute=True)
    print(acceval.render(result, "md"))

``run``, ``load_study``, ``load_result``, ``analyze``, ``render``, ``RunResult`` and ``Study``
load on first use, so importing one concept does not pull in the stages that compose it.
"""

from __future__ import annotations

from typing import Any

from acceval._version import __version__
from acceval.errors import (
    AccevalError,
    GateFailed,
    MissingExtra,
    StudyError,
    TargetError,
    UsageError,
)

_API = ("RunResult", "Study", "analyze", "load_result", "load_study", "render", "run")


def __getattr__(name: str) -> Any:
    if name in _API:
        from acceval import _api

        value = getattr(_api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'acceval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


__all__ = [
    "AccevalError",
    "GateFailed",
    "MissingExtra",
    "RunResult",
    "Study",
    "StudyError",
    "TargetError",
    "UsageError",
    "__version__",
    "analyze",
    "load_result",
    "load_study",
    "render",
    "run",
]
