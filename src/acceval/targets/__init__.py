"""Clients that speak to endpoints. Each implements :class:`acceval.loadgen.protocol.Target`.

Clients register in the ``acceval.targets`` entry-point group; :func:`make_target` builds one
by name (``openai``, the OpenAI-compatible HTTP client, is the built-in).
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.targets.factories import TargetFactory, make_target, target_names
    from acceval.targets.openai import OpenAITarget

# The clients load when a name is used, not when a study's ``acceval.targets.spec`` is read.
__getattr__ = exports(__name__, {
    "TargetFactory": "acceval.targets.factories", "make_target": "acceval.targets.factories",
    "target_names": "acceval.targets.factories", "OpenAITarget": "acceval.targets.openai"})

__all__ = ["OpenAITarget", "TargetFactory", "make_target", "target_names"]
