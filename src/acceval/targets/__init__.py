"""Clients that speak to endpoints. Each implements :class:`acceval.loadgen.protocol.Target`.

Clients register in the ``acceval.targets`` entry-point group; :func:`make_target` builds one
by name (``openai``, the OpenAI-compatible HTTP client, is the built-in).
"""

from acceval.targets.factories import TargetFactory, make_target, target_names
from acceval.targets.openai import OpenAITarget

__all__ = ["OpenAITarget", "TargetFactory", "make_target", "target_names"]
