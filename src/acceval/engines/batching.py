"""Dynamic batching for the local engines: the throughput-versus-waiting trade-off.

Requests that arrive within ``batch_window_ms`` of the oldest waiting one (up to ``max_batch``)
are decoded together, greedily, in one worker thread, so the event loop never blocks. Tokens
stream back to each request as the batched decoder produces them.

The window is counted from the oldest request's arrival (like Triton's ``max_queue_delay``):
time spent queued behind a running batch counts towards it, so a busy engine never adds a
window on top of the queueing. A batch holds prompts of one token length only; the built-in
tasks all have the same length, and equal lengths need no padding, which runtimes handle
differently (ONNX Runtime GenAI pads on the right). Other lengths wait for their own batch.

An engine supplies a :data:`StepFn`: given equal-length prompts it yields, per decoding step,
the next token of every row. The batcher owns stop rules (EOS, per-request ``max_tokens``),
text decoding and delivery; it stops pulling steps once every row has finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from acceval.engines.base import EngineFault, EngineOptions, GenerationChunk, GenerationRequest
from acceval.errors import MissingExtra, UsageError
from acceval.models import ModelArtifact, resolve_model

StepFn = Callable[[list[list[int]], int, int], Iterator[Sequence[int]]]
"""``step_fn(prompts, max_new_tokens, min_new_tokens)`` yields the next token id of each row,
step by step, for at least ``min_new_tokens`` steps (an ``ignore_eos`` batch asks for all of
them: a runtime that stops a row at its end-of-sequence token must not stop it early)."""

DecodeFn = Callable[[list[int]], str]

_END = object()


class BatchedOptions(EngineOptions):
    """Options every batched model engine takes (docs/serve.md)."""

    model: str = Field("builtin:tiny", description="builtin:NAME or a model folder.")
    max_batch: int = Field(16, ge=1, description="Most requests decoded together.")
    batch_window_ms: float = Field(2.0, ge=0, description="Wait for more requests, in ms.")
    threads: int = Field(1, ge=1, description="Intra-op threads.")
    model_id: str | None = Field(None, description="Model name the server lists.")

    def artifact(self) -> ModelArtifact:
        """The model's files (raises UsageError naming what exists)."""
        return resolve_model(self.model)

    def problems(self) -> list[tuple[str, str]]:
        try:
            art = self.artifact()
        except UsageError as exc:
            return [("model", str(exc))]
        if art.hf_dir is None:
            return [("model", f"model '{self.model}' has no HF-format folder (config.json)")]
        return []


@dataclass(slots=True)
class _Pending:
    ids: list[int]
    max_new_tokens: int
    arrived_ns: int
    loop: asyncio.AbstractEventLoop
    out: asyncio.Queue[object]
    ignore_eos: bool = False
    cancelled: bool = False
    generated: list[int] = field(default_factory=list)
    text: str = ""


@dataclass(slots=True)
class BatchStats:
    """Counters a server may expose; sizes of the batches actually run."""

    batches: int = 0
    requests: int = 0
    max_batch_seen: int = 0

    @property
    def mean_batch(self) -> float | None:
        return self.requests / self.batches if self.batches else None


class DynamicBatcher:
    """Collects requests into batches and runs them on one worker thread."""

    def __init__(
        self,
        step_fn: StepFn,
        decode: DecodeFn,
        *,
        eos_ids: Sequence[int],
        max_batch: int = 16,
        batch_window_ms: float = 2.0,
        thread_name: str = "acceval-engine",
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if batch_window_ms < 0:
            raise ValueError("batch_window_ms must not be negative")
        self._step_fn = step_fn
        self._decode = decode
        self._eos = frozenset(eos_ids)
        self.max_batch = max_batch
        self.batch_window_ms = batch_window_ms
        self._thread_name = thread_name
        self._pending: deque[_Pending] = deque()
        self.running = 0  # rows of the batch being decoded (written by the worker thread)
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self.stats = BatchStats()

    async def start(self) -> None:
        if self._task is not None:
            return
        # One thread: batches run one after another, as on a single accelerator stream.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._thread_name)
        self._wakeup = asyncio.Event()
        self._task = asyncio.create_task(self._collect(), name=f"{self._thread_name}-batcher")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while self._pending:
            p = self._pending.popleft()
            p.out.put_nowait(RuntimeError("engine stopped"))
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    async def submit(self, ids: list[int], max_new_tokens: int, *,
                     ignore_eos: bool = False) -> AsyncIterator[GenerationChunk]:
        """Queue one prompt; yield its chunks (one per generated token) as they are decoded.
        With ``ignore_eos`` an end-of-sequence token counts and decoding goes on."""
        if self._task is None or self._wakeup is None:
            raise RuntimeError("engine not started: await engine.start() first")
        if max_new_tokens <= 0:
            yield GenerationChunk(text="", n_tokens=0, finish_reason="length")
            return
        loop = asyncio.get_running_loop()
        p = _Pending(list(ids), max_new_tokens, time.perf_counter_ns(), loop, asyncio.Queue(),
                     ignore_eos)
        self._pending.append(p)
        self._wakeup.set()
        try:
            while True:
                item = await p.out.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, GenerationChunk)
                yield item
        finally:
            # A client that goes away leaves its row running; its tokens are dropped.
            p.cancelled = True
            with contextlib.suppress(ValueError):
                self._pending.remove(p)

    async def _collect(self) -> None:
        assert self._wakeup is not None
        loop = asyncio.get_running_loop()
        while True:
            while not self._pending:
                self._wakeup.clear()
                await self._wakeup.wait()
            deadline_ns = self._pending[0].arrived_ns + int(self.batch_window_ms * 1e6)
            while len(self._pending) < self.max_batch:
                wait_s = (deadline_ns - time.perf_counter_ns()) / 1e9
                if wait_s <= 0:
                    break
                self._wakeup.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), wait_s)
            batch = self._take_batch()
            if not batch:
                continue
            self.stats.batches += 1
            self.stats.requests += len(batch)
            self.stats.max_batch_seen = max(self.stats.max_batch_seen, len(batch))
            try:
                await loop.run_in_executor(self._executor, self._run, batch)
            except Exception as exc:  # the runtime failed: every row of the batch gets the error
                for p in batch:
                    p.loop.call_soon_threadsafe(p.out.put_nowait, exc)

    def _take_batch(self) -> list[_Pending]:
        """The oldest request and the next waiting ones with the same prompt length and the
        same ``ignore_eos`` (FIFO): a runtime's minimum length holds for a whole batch."""
        while self._pending and self._pending[0].cancelled:
            self._pending.popleft()
        if not self._pending:
            return []
        n, keep_on = len(self._pending[0].ids), self._pending[0].ignore_eos
        batch = [p for p in self._pending
                 if len(p.ids) == n and p.ignore_eos == keep_on and not p.cancelled]
        batch = batch[: self.max_batch]
        for p in batch:
            self._pending.remove(p)
        return batch

    def _run(self, batch: list[_Pending]) -> None:
        """Worker thread: decode the batch, streaming each row's tokens to its request."""
        max_new = max(p.max_new_tokens for p in batch)
        live = list(range(len(batch)))
        self.running = len(batch)
        steps = self._step_fn([p.ids for p in batch], max_new,
                              max_new if batch[0].ignore_eos else 0)
        try:
            for step_tokens in steps:
                still: list[int] = []
                for row in live:
                    finish = self._advance(batch[row], int(step_tokens[row]))
                    if not finish:
                        still.append(row)
                live = still
                if not live:
                    break
                _hand_over(batch[0].loop)
        finally:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
        self.running = 0
        for row in live:  # the runtime ran out of context before EOS or max_tokens
            p = batch[row]
            self._emit(p, GenerationChunk(text="", n_tokens=0, finish_reason="length"))
            p.loop.call_soon_threadsafe(p.out.put_nowait, _END)

    def _advance(self, p: _Pending, token: int) -> bool:
        """Add one token to a row; True when the row has finished."""
        if token in self._eos and not p.ignore_eos:
            # EOS counts as a generated token (it cost a decoding step) but adds no text.
            self._emit(p, GenerationChunk(text="", n_tokens=1, finish_reason="stop"))
            p.loop.call_soon_threadsafe(p.out.put_nowait, _END)
            return True
        p.generated.append(token)
        text = self._decode(p.generated)
        delta, p.text = text[len(p.text):], text
        done = len(p.generated) >= p.max_new_tokens
        self._emit(p, GenerationChunk(text=delta, n_tokens=1,
                                      finish_reason="length" if done else None))
        if done:
            p.loop.call_soon_threadsafe(p.out.put_nowait, _END)
        return done

    @staticmethod
    def _emit(p: _Pending, chunk: GenerationChunk) -> None:
        if not p.cancelled:
            p.loop.call_soon_threadsafe(p.out.put_nowait, chunk)


#: How long the worker waits for the event loop to send a step's tokens before it decodes
#: the next step anyway (a loop that is this late is overloaded; the tokens then leave
#: together, as they would from any server that falls behind).
HAND_OVER_TIMEOUT_S = 0.05


async def _settled() -> None:
    # Three turns of the loop: the request's coroutine takes the chunk (1), writes its
    # event (2), and the connection flushes it to the socket (3).
    for _ in range(3):
        await asyncio.sleep(0)


def _hand_over(loop: asyncio.AbstractEventLoop) -> None:
    """Worker thread, after each decoding step: wait until the event loop has sent the
    step's tokens. A runtime that keeps the GIL while it computes (ONNX Runtime GenAI on a
    small model does) would otherwise decode a whole answer before the loop can write one
    token of it, and every token would leave in one write: TTFT = E2E, TPOT = 0. Waiting
    here lets each token leave when it is made, as a streaming server's would."""
    try:
        fut = asyncio.run_coroutine_threadsafe(_settled(), loop)
    except RuntimeError:  # the loop is closing: nothing left to hand over to
        return
    with contextlib.suppress(Exception):
        fut.result(timeout=HAND_OVER_TIMEOUT_S)


class BatchedEngine:
    """The shared half of the local engines: tokenizer, chat rendering and the batcher.

    A subclass loads its runtime in :meth:`_load` and returns the :data:`StepFn` that decodes
    a batch; everything a request sees (token counts, stop rules, streaming) is common, so
    the ONNX Runtime and torch engines differ only in how they run the model.
    """

    model_id: str

    def __init__(self, *, model_id: str, tokenizer_json: Path, eos_ids: Sequence[int],
                 context_length: int, max_batch: int, batch_window_ms: float) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtra("local", "tokenizers") from exc
        self.model_id = model_id
        self._tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.eos_ids = tuple(eos_ids)
        self.context_length = context_length
        self.max_batch = max_batch
        self.batch_window_ms = batch_window_ms
        self._batcher: DynamicBatcher | None = None

    def _load(self) -> StepFn:
        raise NotImplementedError

    def _unload(self) -> None:
        """Release the runtime's resources (called after the batcher has stopped)."""

    async def start(self) -> None:
        if self._batcher is not None:
            return
        step_fn = await asyncio.to_thread(self._load)
        batcher = DynamicBatcher(step_fn, self._decode, eos_ids=self.eos_ids,
                                 max_batch=self.max_batch, batch_window_ms=self.batch_window_ms,
                                 thread_name=type(self).__name__)
        await batcher.start()
        self._batcher = batcher

    async def stop(self) -> None:
        batcher, self._batcher = self._batcher, None
        if batcher is not None:
            await batcher.stop()
            self._unload()

    @property
    def stats(self) -> BatchStats | None:
        return self._batcher.stats if self._batcher is not None else None

    def queue_state(self) -> tuple[int, int]:
        """(rows being decoded, requests waiting for a batch), for the server's /metrics."""
        b = self._batcher
        if b is None:
            return 0, 0
        return b.running, len(b._pending)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self._tokenizer.encode(text, add_special_tokens=False).ids
        return ids

    def _decode(self, ids: list[int]) -> str:
        text: str = self._tokenizer.decode(ids, skip_special_tokens=True)
        return text

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))

    def render_chat(self, messages: list[tuple[str, str]]) -> str:
        # The tiny models have no chat template: the prompt is the users' text, concatenated.
        return "".join(content for role, content in messages if role == "user")

    async def generate(self, req: GenerationRequest) -> AsyncIterator[GenerationChunk]:
        """Greedy decoding (``temperature`` is ignored), streamed one token per chunk."""
        if self._batcher is None:
            raise RuntimeError(f"{type(self).__name__} not started: await engine.start() first")
        ids = self.encode(req.prompt)
        if not ids:
            raise EngineFault(EngineFault.HTTP, status=400, label="empty_prompt",
                              message="empty prompt: the model needs at least one token")
        room = self.context_length - len(ids)
        if room <= 0:
            # What vLLM does too: a prompt that leaves no room to generate is a client error.
            raise EngineFault(EngineFault.HTTP, status=400, label="prompt_too_long",
                              message=f"prompt of {len(ids)} tokens does not fit the model's "
                                      f"context of {self.context_length} tokens")
        async for chunk in self._batcher.submit(ids, min(req.max_tokens, room),
                                                ignore_eos=req.ignore_eos):
            yield chunk
