"""The engine protocol, the options model each engine declares, and engine lookup through the
``acceval.engines`` plugin group.

An engine class may name a pydantic model of its options as ``Options`` (a subclass of
:class:`EngineOptions`). Then everything that would stop it from starting (an unknown or
badly typed option, a missing extra, a model folder that is not there) is found by
:func:`check_engine` before a server is spawned, so ``acceval validate`` reports it instead of
a child process dying mid-run. Engines without ``Options`` (older plugins) are checked
against their constructor's signature.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from acceval.errors import UsageError
from acceval.plugins import installed, load_plugin

GROUP = "acceval.engines"

EngineProblem = tuple[str, str, str]
"""``(option, what is wrong, what to do)``; the option is ``""`` for the engine itself."""


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
    # Generate exactly max_tokens (the model's context permitting): an end-of-sequence token
    # does not stop the request (vLLM's ``ignore_eos``).
    ignore_eos: bool = False


@dataclass(slots=True)
class GenerationChunk:
    text: str
    n_tokens: int
    finish_reason: str | None = None   # "stop" or "length" on the last chunk


@dataclass(slots=True, frozen=True)
class ToolCall:
    """One tool call an engine answers a chat request carrying ``tools`` with (an engine
    with a ``tool_call`` attribute that is not None: the mock's scripted agent policy)."""

    id: str
    name: str
    arguments: str             # JSON text, as the OpenAI API carries it


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


class EngineOptions(BaseModel):
    """The options an engine accepts: strict types (YAML and JSON values as written), no
    unknown names. Field names and defaults match the engine constructor's keywords."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    #: ``(extra, module)`` pairs the engine imports when it starts.
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()

    def problems(self) -> list[tuple[str, str]]:
        """``(option, what is wrong)`` for what only the filesystem can tell (a model folder,
        an answers file), found without loading a model."""
        return []


def engine_names() -> list[str]:
    """The engines installed here: built-ins and plugins of the ``acceval.engines`` group."""
    return installed(GROUP)


def engine_class(name: str) -> Any:
    """The class registered as engine ``name``; an unknown name raises
    :class:`acceval.plugins.PluginError` (a :class:`UsageError`) listing what is installed."""
    return load_plugin(GROUP, name)


def _unknown_engine(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1)
    guess = f"did you mean '{close[0]}'? " if close else ""
    return f"{guess}installed engines: {', '.join(names) or 'none'}"


def _accepted(cls: type[Any]) -> list[str]:
    options = getattr(cls, "Options", None)
    if isinstance(options, type) and issubclass(options, EngineOptions):
        return list(options.model_fields)
    return [p for p in inspect.signature(cls).parameters if p not in ("self", "args")]


def _option_problems(name: str, cls: type[Any], options: Mapping[str, Any]
                     ) -> tuple[list[EngineProblem], EngineOptions | None]:
    accepted = _accepted(cls)
    model = getattr(cls, "Options", None)
    if not (isinstance(model, type) and issubclass(model, EngineOptions)):
        unknown = [k for k in options if k not in accepted]
        return [_unknown_option(name, k, accepted) for k in unknown], None
    try:
        return [], model.model_validate(dict(options))
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                out.append(_unknown_option(name, key, accepted))
            else:
                msg = err["msg"].removeprefix("Value error, ")
                if "got" not in msg:
                    msg += f", got {err['input']!r}"
                out.append((key, msg, f"the {name} engine's options are in docs/serve.md"))
        return out, None


def _unknown_option(engine: str, key: str, accepted: list[str]) -> EngineProblem:
    close = difflib.get_close_matches(key, accepted, n=1)
    guess = f"did you mean '{close[0]}'? " if close else ""
    return (key, f"engine '{engine}' has no option '{key}'",
            f"{guess}it accepts: {', '.join(accepted) or 'no options'}")


def check_engine(name: str, options: Mapping[str, Any]) -> list[EngineProblem]:
    """Everything that would stop engine ``name`` from starting with ``options``: an unknown
    engine, unknown or invalid options, a missing extra, a model or file that is not there.
    Nothing is loaded or started."""
    try:
        cls = engine_class(name)
    except UsageError:
        names = engine_names()
        return [("", f"unknown engine '{name}'", _unknown_engine(name, names))]
    problems, opts = _option_problems(name, cls, options)
    model = getattr(cls, "Options", None)
    for extra, module in getattr(model, "requires", ()):
        if importlib.util.find_spec(module) is None:
            problems.append(("", f"engine '{name}' needs the '{module}' package",
                             f"pip install 'acceval[{extra}]'"))
    if opts is not None and not problems:
        problems += [(key, msg, "") for key, msg in opts.problems()]
    return problems


def load_engine(name: str, **options: Any) -> Engine:
    """Instantiate a registered engine by name with its options."""
    cls = engine_class(name)
    problems, _ = _option_problems(name, cls, options)
    if problems:
        listed = "; ".join(f"{key}: {msg} ({hint})" for key, msg, hint in problems)
        raise UsageError(f"engine '{name}' cannot take these options: {listed}")
    engine: Engine = cls(**options)
    return engine
