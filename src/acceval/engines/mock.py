"""The ``mock`` engine: calibrated delays, faults and answers, no model.

It stands in for a real accelerator when testing the client, the metrics and the report:
every delay, fault and answer is chosen by options and a seed, so a run's ground truth is
known in advance.

Tokens: one mock token is one whitespace-separated word (with the whitespace before it), so
``count_tokens`` is the whitespace word count and joining a response's chunks gives back the
answer text exactly. Filler output is ``"tok tok tok ..."``.

Timing: the first chunk is due ``ttft_ms`` after the request was received, each later chunk
``tokens_per_chunk * itl_ms`` after the previous one's due time (plus jitter). Due times are
absolute ``perf_counter_ns`` deadlines, so sleeping late once does not push every later chunk.
With zero delays nothing awaits, and the whole response is produced in one step.

Slots: with ``slots`` = c > 0 at most c responses are produced at once, and the others wait
in arrival order (first come, first served) for a free slot, as requests queue for a batch
slot in a real server. A response's delays then count from the moment it got its slot, so the
wait shows in its TTFT: the mock becomes a c-server queue. ``slots`` = 0 (the default) is an
unlimited number.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from acceval.engines.base import (
    EngineFault,
    EngineOptions,
    GenerationChunk,
    GenerationRequest,
    ToolCall,
)
from acceval.errors import UsageError

ERROR_KINDS = ("http500", "http429", "broken_stream", "malformed")
JITTER_KINDS = ("uniform", "lognormal")
_TOKEN_RE = re.compile(r"\s*\S+")
_FILLER = "tok"


def _as_number(name: str, value: Any, *, low: float, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"mock option {name} must be a number, got {value!r}")
    if not (low <= float(value) <= high):
        raise UsageError(f"mock option {name} must be in [{low}, {high}], got {value!r}")
    return float(value)


def _as_int(name: str, value: Any, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UsageError(f"mock option {name} must be an integer >= {low}, got {value!r}")
    return value


def parse_error_kinds(value: Any) -> dict[str, float]:
    """Normalise ``error_kinds``: a list (equal weights), a dict of weights, or "a,b" text."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, Sequence) and not isinstance(value, str):
        weights = {str(kind): 1.0 for kind in value}
    elif isinstance(value, Mapping):
        weights = {str(k): _as_number(f"error_kinds[{k}]", v, low=0.0) for k, v in value.items()}
    else:
        raise UsageError(f"mock option error_kinds must be a list or a mapping, got {value!r}")
    unknown = sorted(set(weights) - set(ERROR_KINDS))
    if unknown or not weights or sum(weights.values()) <= 0:
        raise UsageError(
            f"mock option error_kinds must name some of {', '.join(ERROR_KINDS)} "
            f"with a positive weight, got {value!r}"
        )
    return weights


class MockOptions(EngineOptions):
    """What ``serve.options`` (or ``--option``) may set for the mock (docs/serve.md)."""

    ttft_ms: float = Field(0.0, ge=0, description="Time to the first chunk, in ms.")
    itl_ms: float = Field(0.0, ge=0, description="Time between tokens, in ms.")
    jitter_ms: float = Field(0.0, ge=0, description="Random extra delay per chunk, in ms.")
    jitter: Literal["uniform", "lognormal"] = Field("uniform", description="Jitter shape.")
    output_tokens: int = Field(16, ge=0, description="Filler tokens when there is no answer.")
    tokens_per_chunk: int = Field(1, ge=1, description="Tokens per streamed chunk.")
    error_rate: float = Field(0.0, ge=0, le=1, description="Share of requests that fail.")
    error_kinds: Any = Field(
        list(ERROR_KINDS), description="Which faults, as a list, weights or 'a,b' text.")
    seed: int = Field(0, ge=0, description="Seed of the fault and jitter draws.")
    answers: str | None = Field(
        None, description="JSONL of prompt/messages and reference answers; '@tasks' in a "
        "study: the study's own tasks.")
    correct_fraction: float = Field(1.0, ge=0, le=1, description="Share answered right.")
    model_id: str = Field("mock", description="Model name the server lists.")
    slots: int = Field(0, ge=0, description="Responses produced at once (0: unlimited); the "
                       "others queue first come, first served.")
    prefix_cache_block: int = Field(
        0, ge=0, description="Simulate a prefix cache of blocks of this many tokens (vLLM's "
        "automatic prefix caching: a prompt's leading blocks seen before are cached) and "
        "report usage.prompt_tokens_details.cached_tokens; 0: no cache.")

    tool_policy: str | None = Field(
        None, description="Answer chat requests that carry `tools` with the scripted agent "
        "policy's tool calls (docs/agents.md): careful, hasty, liar, reckless, mismatched, "
        "stale or asks_human. Its errors draw from `seed` and the request's seed.")

    @field_validator("tool_policy")
    @classmethod
    def _policy(cls, v: str | None) -> str | None:
        from acceval.agents.spec import STYLES

        if v is not None and v not in STYLES:
            raise ValueError(f"tool_policy must be one of {', '.join(STYLES)}, got {v!r}")
        return v

    @field_validator("error_kinds")
    @classmethod
    def _kinds(cls, v: Any) -> Any:
        try:
            parse_error_kinds(v)
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        return v

    def problems(self) -> list[tuple[str, str]]:
        if self.answers is None or self.answers == "@tasks":
            return []
        try:
            read_answers(self.answers)
        except UsageError as exc:
            return [("answers", str(exc))]
        return []


#: The simulated prefix cache forgets everything past this many blocks.
_MAX_CACHED_BLOCKS = 1 << 20


def render_chat(messages: list[tuple[str, str]]) -> str:
    """The mock's chat template. A lone user message renders to itself, so a task's prompt
    matches the answers file whether it was sent as a completion or as a chat."""
    if len(messages) == 1 and messages[0][0] == "user":
        return messages[0][1]
    body = "".join(f"<|{role}|>\n{content}\n" for role, content in messages)
    return body + "<|assistant|>\n"


def read_answers(path: str) -> dict[str, str]:
    """Prompt (as rendered) -> reference answer, from an answers JSONL file."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"mock option answers: no such file {path}")
    answers: dict[str, str] = {}
    for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            reference = str(row["reference"])
            if "prompt" in row:
                key = str(row["prompt"])
            else:
                key = render_chat([(str(m["role"]), str(m["content"])) for m in row["messages"]])
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"mock option answers: {path}:{lineno} needs 'prompt' or 'messages' "
                f"and 'reference' ({exc})"
            ) from exc
        answers[key] = reference
    return answers


def wrong_answer(reference: str) -> str:
    """A deterministic answer that differs from ``reference`` and does not contain it."""
    digits = [i for i, ch in enumerate(reference) if ch.isdigit()]
    if digits:
        i = digits[-1]
        return reference[:i] + str((int(reference[i]) + 1) % 10) + reference[i + 1 :]
    stripped = reference.strip()
    if len(stripped) == 1 and stripped.isalpha() and stripped.isupper():
        return "B" if stripped == "A" else "A"
    return "incorrect" if "wrong" in reference else "wrong"


def _stable_unit(seed: int, key: str) -> float:
    """A number in [0, 1) that depends only on ``seed`` and ``key`` (not on PYTHONHASHSEED)."""
    digest = hashlib.blake2b(f"{seed}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _tool_policy(style: str, seed: int) -> Callable[[list[dict[str, Any]], int | None],
                                                    ToolCall]:
    """The scripted agent policy of ``style`` as a tool-call answerer (the agents extra's
    policy reads the built-in shop's pages; it is imported only when asked for)."""
    from acceval.agents.policy import Decider
    from acceval.agents.spec import ScriptedPolicy

    decider = Decider(ScriptedPolicy.model_validate({"style": style, "seed": seed}))

    def answer(messages: list[dict[str, Any]], request_seed: int | None) -> ToolCall:
        call = decider.decide(messages, request_seed)
        return ToolCall(call.id, call.name, json.dumps(call.arguments))

    return answer


class MockEngine:
    """A configurable fake LLM. Options are the constructor's keyword arguments."""

    Options = MockOptions

    def __init__(
        self,
        *,
        ttft_ms: float = 0.0,
        itl_ms: float = 0.0,
        jitter_ms: float = 0.0,
        jitter: str = "uniform",
        output_tokens: int = 16,
        tokens_per_chunk: int = 1,
        error_rate: float = 0.0,
        error_kinds: Any = ERROR_KINDS,
        seed: int = 0,
        answers: str | None = None,
        correct_fraction: float = 1.0,
        model_id: str = "mock",
        slots: int = 0,
        prefix_cache_block: int = 0,
        tool_policy: str | None = None,
    ) -> None:
        self.ttft_ms = _as_number("ttft_ms", ttft_ms, low=0.0)
        self.itl_ms = _as_number("itl_ms", itl_ms, low=0.0)
        self.jitter_ms = _as_number("jitter_ms", jitter_ms, low=0.0)
        if jitter not in JITTER_KINDS:
            raise UsageError(f"mock option jitter must be one of {JITTER_KINDS}, got {jitter!r}")
        self.jitter = jitter
        self.output_tokens = _as_int("output_tokens", output_tokens, low=0)
        self.tokens_per_chunk = _as_int("tokens_per_chunk", tokens_per_chunk, low=1)
        self.error_rate = _as_number("error_rate", error_rate, low=0.0, high=1.0)
        self.error_kinds = parse_error_kinds(error_kinds)
        self.seed = _as_int("seed", seed, low=0)
        self.correct_fraction = _as_number("correct_fraction", correct_fraction, low=0.0, high=1.0)
        self.model_id = str(model_id)
        self.slots = _as_int("slots", slots, low=0)
        self.prefix_cache_block = _as_int("prefix_cache_block", prefix_cache_block, low=0)
        self._blocks: set[int] = set()
        self._free: asyncio.Semaphore | None = asyncio.Semaphore(self.slots) if self.slots else None
        self.answers: dict[str, str] = read_answers(answers) if answers else {}
        # A run whose points draw fresh tasks appends their references to the file before
        # each such point: a prompt not found reads the file again when it has grown.
        self._answers_path = Path(answers) if answers else None
        self._answers_size = self._answers_path.stat().st_size if self._answers_path else 0
        # One generator per random dimension, so enabling jitter does not change which
        # requests fail.
        self._error_rng = random.Random(f"acceval-mock-errors-{self.seed}")
        self._jitter_rng = random.Random(f"acceval-mock-jitter-{self.seed}")
        self._kinds = list(self.error_kinds)
        self._kind_weights = [self.error_kinds[k] for k in self._kinds]
        # The server answers a request with tools through this when it is set.
        self.tool_call: Callable[[list[dict[str, Any]], int | None], ToolCall] | None = (
            _tool_policy(tool_policy, self.seed) if tool_policy is not None else None)

    # -- Engine protocol ------------------------------------------------------------------

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def render_chat(self, messages: list[tuple[str, str]]) -> str:
        return render_chat(messages)

    def cached_prompt_tokens(self, prompt: str) -> int | None:
        """How many of ``prompt``'s tokens the simulated prefix cache holds (None: no
        cache), then cache its blocks. A block counts when it and every block before it were
        seen in that order, as vLLM's block hashes chain."""
        block = self.prefix_cache_block
        if not block:
            return None
        tokens = prompt.split()
        seen, chain, hit = self._blocks, 0, 0
        if len(seen) > _MAX_CACHED_BLOCKS:
            seen.clear()   # a bounded cache: forget everything rather than grow forever
        for i in range(len(tokens) // block):
            chain = hash((chain, *tokens[i * block:(i + 1) * block]))
            if chain in seen and hit == i * block:
                hit += block
            seen.add(chain)
        return hit

    def generate(self, req: GenerationRequest) -> AsyncIterator[GenerationChunk]:
        fault = self.choose_fault()
        tokens, finish = self.plan_output(req.prompt, req.max_tokens, ignore_eos=req.ignore_eos)
        start_ns = req.received_ns if req.received_ns is not None else time.perf_counter_ns()
        return self._stream(tokens, finish, fault, start_ns)

    # -- deterministic choices (public so tests and docs can state them) -------------------

    def choose_fault(self) -> str | None:
        """Draw this request's injected fault (or None) from the seeded error generator."""
        if self.error_rate <= 0.0 or self._error_rng.random() >= self.error_rate:
            return None
        return self._error_rng.choices(self._kinds, self._kind_weights)[0]

    def answer_for(self, prompt: str) -> str | None:
        """The text the mock answers for ``prompt``, or None for filler output."""
        reference = self._reference(prompt)
        if reference is None and self._reread():
            reference = self._reference(prompt)
        if reference is None:
            return None
        if _stable_unit(self.seed, prompt) < self.correct_fraction:
            return reference
        return wrong_answer(reference)

    def _reference(self, prompt: str) -> str | None:
        reference = self.answers.get(prompt)
        if reference is None:
            user = self._last_user_message(prompt)
            reference = self.answers.get(user) if user is not None else None
        return reference

    def _reread(self) -> bool:
        """Read the answers file again if it grew; whether it did."""
        path = self._answers_path
        if path is None:
            return False
        try:
            size = path.stat().st_size
        except OSError:
            return False
        if size == self._answers_size:
            return False
        self._answers_size = size
        self.answers = read_answers(str(path))
        return True

    def plan_output(self, prompt: str, max_tokens: int, *,
                    ignore_eos: bool = False) -> tuple[list[str], str]:
        """The output tokens (pieces whose concatenation is the text) and the finish reason.
        With ``ignore_eos`` the answer (or filler) runs on with filler to ``max_tokens``."""
        answer = self.answer_for(prompt)
        if answer is None:
            n = self.output_tokens
            tokens = [_FILLER] + [" " + _FILLER] * (n - 1) if n > 0 else []
        else:
            tokens = _TOKEN_RE.findall(answer)
        if ignore_eos and len(tokens) < max_tokens:
            tokens += [" " + _FILLER if tokens else _FILLER]
            tokens += [" " + _FILLER] * (max_tokens - len(tokens))
        if ignore_eos:  # stopped by its length, as vLLM says of an ignore_eos request
            return tokens[: max(max_tokens, 0)], "length"
        if len(tokens) > max_tokens:
            return tokens[: max(max_tokens, 0)], "length"
        return tokens, "stop"

    # -- internals -----------------------------------------------------------------------

    async def _stream(
        self, tokens: list[str], finish: str, fault: str | None, start_ns: int
    ) -> AsyncIterator[GenerationChunk]:
        if fault in ("http500", "http429"):
            status = 500 if fault == "http500" else 429
            raise EngineFault(EngineFault.HTTP, status=status, label=fault,
                              message=f"mock: injected HTTP {status}")
        free = self._free
        if free is not None:
            await free.acquire()
            start_ns = max(start_ns, time.perf_counter_ns())
        try:
            k = self.tokens_per_chunk
            pieces = ["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)] or [""]
            cut_at = max(1, len(pieces) // 2) if fault is not None else -1
            gap_ms = k * self.itl_ms
            due_ns = start_ns + self._delay_ns(self.ttft_ms)
            last = len(pieces) - 1
            for i, text in enumerate(pieces):
                if i == cut_at:
                    action = EngineFault.BROKEN_STREAM if fault == "broken_stream" else (
                        EngineFault.MALFORMED)
                    raise EngineFault(action, label=fault, message=f"mock: injected {fault}")
                if i > 0:
                    due_ns += self._delay_ns(gap_ms)
                # uvloop rounds timers to whole milliseconds and can wake early; sleeping
                # again for the remainder makes a chunk never early and rarely more than
                # ~0.5 ms late.
                while (wait_ns := due_ns - time.perf_counter_ns()) > 0:
                    await asyncio.sleep(wait_ns / 1e9)
                n = min(k, len(tokens) - i * k)
                yield GenerationChunk(text, n, finish if i == last else None)
            if fault is not None and cut_at >= len(pieces):
                raise EngineFault(EngineFault.BROKEN_STREAM if fault == "broken_stream"
                                  else EngineFault.MALFORMED, label=fault)
        finally:  # also when the client goes away mid-stream (the server closes us)
            if free is not None:
                free.release()

    def _delay_ns(self, base_ms: float) -> int:
        if self.jitter_ms <= 0.0:
            return int(base_ms * 1e6)
        if self.jitter == "uniform":
            ms = base_ms + self._jitter_rng.uniform(-self.jitter_ms, self.jitter_ms)
        else:
            # Lognormal extra delay with mean jitter_ms (sigma 1): a long right tail, as when
            # a real server's batch fills up; never earlier than the base delay.
            ms = base_ms + self.jitter_ms * self._jitter_rng.lognormvariate(-0.5, 1.0)
        return int(max(ms, 0.0) * 1e6)

    @staticmethod
    def _last_user_message(rendered: str) -> str | None:
        marker, tail = "<|user|>\n", "\n<|assistant|>\n"
        start = rendered.rfind(marker)
        if start < 0 or not rendered.endswith(tail):
            return None
        return rendered[start + len(marker) : len(rendered) - len(tail)]
