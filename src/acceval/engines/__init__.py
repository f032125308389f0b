"""Local engines that ``acceval serve`` hosts behind the OpenAI-compatible API.

Engines register under the ``acceval.engines`` entry-point group, built-ins included, so a
third-party engine plugs in the same way.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.engines.base import (
        Engine,
        EngineFault,
        GenerationChunk,
        GenerationRequest,
        load_engine,
    )

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "Engine": "acceval.engines.base", "EngineFault": "acceval.engines.base",
    "GenerationChunk": "acceval.engines.base", "GenerationRequest": "acceval.engines.base",
    "load_engine": "acceval.engines.base"})

__all__ = ["Engine", "EngineFault", "GenerationChunk", "GenerationRequest", "load_engine"]
