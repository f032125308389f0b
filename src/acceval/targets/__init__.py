"""Clients that speak to endpoints. Each implements :class:`acceval.loadgen.protocol.Target`."""

from acceval.targets.openai import OpenAITarget

__all__ = ["OpenAITarget"]
