"""Load generation past one process: the ``execution:`` section, splitting a point over
several load generators and merging what they ran, and the Ray backend
(docs/scale-out.md). Ray itself is an extra, imported only when a run uses it."""

from acceval.scaleout.spec import Execution, Placement

__all__ = ["Execution", "Placement"]
