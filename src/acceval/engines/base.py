"""The engine protocol, and engine lookup through the ``acceval.engines`` plugin group."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from acceval.errors import UsageError
from acceval.plugins import installed, load_plugin

GROUP = "acceval.engines"


@dataclass(slots=True, frozen=True)
class GenerationRequest:
    request_id: str
    prompt: str                 # chat messages are rendered to text by the server
    max_tokens: int
    temperature: float = 0.0
    is_chat: bool = False
    # perf_counter_ns when the server had the whole request; an engine that simulates time
    # (the mock) schedules from it so that server-side queueing counts toward TTFT.
    received_ns: int | None = None


@dataclass(slots=True)
class GenerationChunk:
    text: str
    n_tokens: int
    finish_reason: str | None = None   # "stop" or "length" on the last chunk


class EngineFault(Exception):
    """Raised by ``generate`` to make the server fail this request in a chosen, observable way.

    ``action`` is ``"http"`` (an error response with ``status``; only before the first chunk,
    later it becomes an error event), ``"broken_stream"`` (the connection is closed mid-response)
    or ``"malformed"`` (a non-JSON event or body is sent, then the response ends). ``label`` names
    the injected fault in the server's ground-truth log (e.g. ``"http429"``).
    """

    HTTP = "http"
    BROKEN_STREAM = "broken_stream"
    MALFORMED = "malformed"

    def __init__(
        self, action: str, *, status: int = 500, label: str | None = None,
        message: str = "injected fault",
    ) -> None:
        super().__init__(message)
        self.action = action
        self.status = status
        self.label = label or action
        self.message = message


class Engine(Protocol):
    model_id: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def count_tokens(self, text: str) -> int: ...

    def render_chat(self, messages: list[tuple[str, str]]) -> str:
        """Turn (role, content) chat messages into the prompt text the model expects."""
        ...

    def generate(self, req: GenerationRequest) -> AsyncIterator[GenerationChunk]: ...


def engine_names() -> list[str]:
    """The engines installed here: built-ins and plugins of the ``acceval.engines`` group."""
    return installed(GROUP)


def engine_class(name: str) -> Any:
    """The class registered as engine ``name``; an unknown name raises
    :class:`acceval.plugins.PluginError` (a :class:`UsageError`) listing what is installed."""
    return load_plugin(GROUP, name)


def load_engine(name: str, **options: Any) -> Engine:
    """Instantiate a registered engine by name with its options."""
    cls = engine_class(name)
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        params = [p for p in inspect.signature(cls).parameters if p not in ("self", "args")]
        raise UsageError(f"engine '{name}' does not take these options ({exc}); "
                         f"it accepts: {', '.join(params)}") from None
    engine: Engine = cls(**options)
    return engine
