"""Load generation past one process: the ``execution:`` section, splitting a point over
several load generators and merging what they ran, and the Ray backend
(docs/scale-out.md). Ray itself is an extra, imported only when a run uses it."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.scaleout.spec import Execution, Placement

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "Execution": "acceval.scaleout.spec", "Placement": "acceval.scaleout.spec"})

__all__ = ["Execution", "Placement"]
