"""The load generator: arrival processes and the async runner. Owns the ``Target`` protocol."""

from acceval.loadgen.protocol import Prompt, Target

__all__ = ["Prompt", "Target"]
