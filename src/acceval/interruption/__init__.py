"""Interruption: inject one fault into a target during a load point (kill and restart, freeze,
or a user command) and measure from the records how it failed and how it recovered.

The study section is :class:`Interruption`; :class:`Injector` acts at run time;
:func:`recovery` is pure over the point's records. docs/demand-and-faults.md explains each.
"""

from acceval.interruption.inject import Injector
from acceval.interruption.recovery import recovery, rolling_health
from acceval.interruption.spec import Interruption, check_interruption

__all__ = ["Injector", "Interruption", "check_interruption", "recovery",
           "rolling_health"]
