"""The load generator: arrival processes and the async runner. Owns the ``Target`` protocol."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.loadgen.protocol import Prompt, Target

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "Prompt": "acceval.loadgen.protocol", "Target": "acceval.loadgen.protocol"})

__all__ = ["Prompt", "Target"]
