"""acceval: compare AI accelerators by what a correct answer costs."""

from acceval.errors import (
    AccevalError,
    GateFailed,
    MissingExtra,
    StudyError,
    TargetError,
    UsageError,
)

__version__ = "0.1.0"

__all__ = [
    "AccevalError",
    "GateFailed",
    "MissingExtra",
    "StudyError",
    "TargetError",
    "UsageError",
    "__version__",
]
