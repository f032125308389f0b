"""What the load generator needs from a target. Targets implement it; loadgen never imports them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from acceval.results.records import Record
from acceval.results.runlog import Fingerprint


@dataclass(slots=True, frozen=True)
class Prompt:
    """One request's content. Exactly one of ``prompt`` / ``messages`` is set.

    ``ignore_eos`` asks the server to generate exactly ``max_tokens`` (vLLM's, SGLang's and
    llama.cpp's request field). ``turns`` makes it a conversation: each later user message is
    sent once the previous answer is in, with that answer and the whole history before it
    (:mod:`acceval.loadgen.runner`). ``at_ns`` is a trace's send time, from the point's start.
    """

    task_id: str
    prompt: str | None = None
    messages: tuple[tuple[str, str], ...] | None = None  # (role, content) pairs
    max_tokens: int = 64
    ignore_eos: bool = False
    turns: tuple[str, ...] = ()
    at_ns: int | None = None


class Target(Protocol):
    """Everything the runner uses of a target; a client plugin implements all of it."""

    name: str
    timeout_s: float  # one request's whole-response limit: the runner drains within it

    def ready_to_send(self) -> bool:
        """Whether a send can start writing at once (an idle connection is open): the runner
        then starts it eagerly, in the caller's step, instead of scheduling it."""

    async def start(self) -> None:
        """Open connections / sessions. May raise TargetError if the target cannot work at all."""

    async def send(self, prompt: Prompt, rec: Record, t0_ns: int) -> None:
        """Send one request and fill ``rec`` in place (stamps relative to ``t0_ns``).

        Never raises for a failed request: the failure is classified into ``rec.error_kind``.
        """

    async def close(self) -> None:
        """Release connections."""


@runtime_checkable
class Describes(Protocol):
    """A target that can say what serves it (models, versions), recorded in the run log."""

    async def probe(self) -> Fingerprint: ...
