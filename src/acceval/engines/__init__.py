"""Local engines that ``acceval serve`` hosts behind the OpenAI-compatible API.

Engines register under the ``acceval.engines`` entry-point group, built-ins included, so a
third-party engine plugs in the same way.
"""

from acceval.engines.base import (
    Engine,
    EngineFault,
    GenerationChunk,
    GenerationRequest,
    load_engine,
)

__all__ = ["Engine", "EngineFault", "GenerationChunk", "GenerationRequest", "load_engine"]
