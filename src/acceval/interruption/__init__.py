"""Interruption: inject one fault into a target during a load point (kill and restart, freeze,
or a user command) and measure from the records how it failed and how it recovered.

The study section is :class:`Interruption`; :class:`Injector` acts at run time;
:func:`recovery` is pure over the point's records. docs/demand-and-faults.md explains each.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.interruption.inject import Injector
    from acceval.interruption.recovery import recovery, rolling_health
    from acceval.interruption.spec import Interruption, check_interruption

# The injector (signals, subprocesses) loads when a name is used, not when a study's
# ``acceval.interruption.spec`` is read.
__getattr__ = exports(__name__, {
    "Injector": "acceval.interruption.inject", "recovery": "acceval.interruption.recovery",
    "rolling_health": "acceval.interruption.recovery",
    "Interruption": "acceval.interruption.spec",
    "check_interruption": "acceval.interruption.spec"})

__all__ = ["Injector", "Interruption", "check_interruption", "recovery",
           "rolling_health"]
