"""The async runner: drives one load point against a target and accounts for every request.

Closed loop (``concurrency``): N workers, each sending its next request when the previous
one ends. Open loop (``constant``/``poisson``/``gamma``): a schedule computed up front
(:mod:`acceval.loadgen.arrivals`) and a dispatcher that sends each request at its time
(a timerfd wake-up, :mod:`acceval.loadgen._timer`), whatever the target is doing
(``max_in_flight`` is the only brake, and a request it holds back keeps its intended
``scheduled_ns``, so the delay shows up as schedule lag, ``sent_ns - scheduled_ns``).

A conversation (a prompt with ``turns``) is one issue of the stop rule and several
requests: each later turn is sent when the previous answer is in, carrying the history and
that answer (its record has ``turn`` k and no schedule of its own). A conversation whose
turn fails ends there; one in flight when the point stops issuing goes on to its last turn
while the point drains.

Timing is measured from the point's start: requests are warm-up while they are among the
first ``warmup_requests`` or are issued (closed loop) / scheduled (open loop) before
``warmup_s``. Issuing stops when (elapsed >= ``min_duration_s`` and measured requests >=
``min_requests``) or elapsed >= ``max_duration_s``; then in-flight requests finish (bounded
by the target's timeout). Every request issued reaches ``sink`` exactly once, also when the
point is interrupted: such a request ends with ``error_kind="client"``,
``error_detail="interrupted"``.

Self-check, both loops: a monitor callback due every ``LOOP_TICK_MS`` records how late the
event loop ran it, for the whole point (sending and draining). A stalled or overloaded client
loop delays sends and reads alike, so its latencies describe the client; the runner only
stamps these lags (``PointRun.loop_lag_ms``), the metrics judge them
(:func:`acceval.metrics.summarize_point`).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.ma
import numpy.typing as npt

from acceval import collector
from acceval.loadgen import arrivals
from acceval.loadgen._timer import LOOP_TICK_MS, LoopMonitor, Waker, make_waker
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Prompt, Target
from acceval.loadgen.spec import ArrivalKind, LoadFamily, family
from acceval.metrics.distribution import Distribution
from acceval.results.records import Record

_now = time.perf_counter_ns
_NS = 1_000_000_000

# Extra time, past the target's own timeout, that in-flight requests get after the last send.
DRAIN_MARGIN_S = 5.0

StoppedBy = Literal["min_satisfied", "max_duration", "interrupted", "client_lost"]
T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop when installed (cheaper per request, tighter timers), else asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a fresh loop from :func:`new_event_loop` (Ctrl-C cancels it cleanly)."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)


@dataclass(frozen=True, slots=True)
class PointSpec:
    """One load point, fully resolved (levels expanded, defaults applied)."""

    index: int
    label: str
    kind: ArrivalKind
    level: float                    # concurrency (closed loop) or rate in req/s (open loop)
    burstiness: float = 1.0
    seed: int = 0
    warmup_requests: int = 0
    warmup_s: float = 0.0
    min_duration_s: float = 0.0
    min_requests: int = 1
    max_duration_s: float = 120.0
    max_in_flight: int = 4096
    repeat: int = 0                 # 0: the point's first run; n: its n-th repeat
    task_set: int = 0               # the task set it sends (tasks.per_point)
    # The study's family, for a shape's own schedule (a ramp's rates, a step's durations).
    load: LoadFamily | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.level <= 0:
            raise ValueError(f"load point {self.label!r}: level must be positive")
        if self.family.whole_levels and self.level != int(self.level):
            raise ValueError(f"load point {self.label!r}: {self.kind} must be whole")

    @property
    def family(self) -> type[LoadFamily]:
        return family(self.kind)

    @classmethod
    def from_study(cls, load: LoadFamily, level: float, index: int, seed: int, n_prompts: int,
                   attempts: int) -> PointSpec:
        min_requests = load.min_requests
        if min_requests is None:
            min_requests = max(1, n_prompts * attempts)
        min_s, max_s = load.min_duration_s, load.max_duration_s
        if load.whole_schedule:  # a shape is sent whole: only its horizon ends it
            min_s = max_s = load.horizon_s(level)
            min_requests = 1
        return cls(index=index, label=load.label(level), kind=load.kind, level=float(level),
                   burstiness=load.burstiness, seed=seed,
                   warmup_requests=load.warmup_requests, warmup_s=load.warmup_s,
                   min_duration_s=min_s, min_requests=min_requests,
                   max_duration_s=max_s, max_in_flight=load.max_in_flight, load=load)


@dataclass(slots=True)
class PointRun:
    """What happened at one load point. Counts include warm-up requests (``warmup`` of them)."""

    spec: PointSpec
    requested_rate_rps: float | None   # None for closed loop
    started_ns: int                    # relative to the run's t0, like the records
    ended_ns: int
    sent: int
    completed: int                     # ended without error_kind
    errors: int
    stopped_by: StoppedBy
    seeds: dict[str, Any] = field(default_factory=dict)
    warmup: int = 0
    held_by_cap: int = 0               # open loop: sends delayed by max_in_flight
    lag_p50_ms: float | None = None    # open loop: dispatch time minus scheduled time
    lag_p99_ms: float | None = None
    lag_max_ms: float | None = None
    # How late each event-loop monitor tick ran (None: not monitored); the self-check's
    # input for summarize_point(loop_lag_ms=...).
    loop_lag_ms: Distribution | None = None

    @classmethod
    def from_result(cls, p: Any) -> PointRun:
        """Rebuild from a stored ``results.section.PointResult`` (re-analysis without re-running).

        Only what the result keeps comes back; the spec has the point's identity and level,
        and the event-loop lags come from the summary, where the first analysis put them.
        """
        spec = PointSpec(index=p.index, label=p.label, kind=p.kind, level=p.level)
        loop = getattr(p.summary, "loop_lag_ms", None)
        return cls(spec=spec, requested_rate_rps=p.requested_rate_rps,
                   started_ns=p.started_ns, ended_ns=p.ended_ns, sent=p.sent,
                   completed=p.completed, errors=p.sent - p.completed,
                   stopped_by=p.stopped_by, seeds=dict(p.seeds),
                   loop_lag_ms=loop if loop is not None and loop.count else None)


#: The interpreter's switch interval inside a point. The records writer's thread converts
#: records while requests are in flight, and the loop that stamps them waits for the
#: interpreter while it does; at the default 5 ms the loop may wait for a whole conversion
#: step. Open loop at 7,930 req/s on 2 cores (fast mock, 6 + 6 runs alternated): schedule-lag
#: p99 median 1.20 ms at 5 ms, 0.85 ms at 0.2 ms, CPU per request the same (90 us).
POINT_SWITCH_INTERVAL_S = 200e-6


def _switch_fast() -> float:
    before = sys.getswitchinterval()
    sys.setswitchinterval(POINT_SWITCH_INTERVAL_S)
    return before


# Held while any point runs (points gathered on one loop, or in threads, share it).
_FAST_SWITCHING = collector.Held(_switch_fast, sys.setswitchinterval)


def start_eagerly(loop: asyncio.AbstractEventLoop,
                  coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """Run ``coro`` up to its first suspension now, then continue it in a task.

    Python 3.12 does this natively (``eager_start``). On 3.11 the first step runs here and a
    small driver resumes the coroutine, awaiting for it whatever it was blocked on, so results,
    exceptions and cancellation reach it as they would under a task. Only for coroutines whose
    first step enters no ``asyncio.timeout`` (it would bind the caller's task).
    """
    if _NATIVE_EAGER:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    try:
        blocked_on = coro.send(None)
    except StopIteration:
        return loop.create_task(_finished())
    except BaseException as exc:  # the first step failed: surface it through a task
        return loop.create_task(_failed(exc))
    return loop.create_task(_drive(coro, blocked_on))


_NATIVE_EAGER = sys.version_info >= (3, 12)


async def _finished() -> None:
    return None


async def _failed(exc: BaseException) -> None:
    raise exc


async def _drive(coro: Coroutine[Any, Any, None], blocked_on: Any) -> None:
    while True:
        try:
            if blocked_on is None:   # a bare yield (asyncio.sleep(0))
                await asyncio.sleep(0)
            else:
                # What a task does with a yielded future: take over the "blocking" flag the
                # coroutine set, then wait for it here.
                blocked_on._asyncio_future_blocking = False
                await blocked_on
        except BaseException as exc:  # incl. CancelledError when this task is cancelled
            try:
                blocked_on = coro.throw(exc)
            except StopIteration:
                return
            continue
        try:
            blocked_on = coro.send(None)
        except StopIteration:
            return


class _Point:
    """The mutable state of one point while it runs."""

    def __init__(self, target: Target, prompts: Sequence[Prompt], spec: PointSpec,
                 sink: Callable[[Record], None], t0_ns: int, progress: Progress | None,
                 first_request_id: int, request_id_step: int = 1) -> None:
        self.target = target
        self.name = target.name
        self.prompts = prompts
        self.n_prompts = len(prompts)
        self.spec = spec
        self.sink = sink
        self.t0 = t0_ns
        self.progress = progress
        self.first_id = first_request_id
        self.id_step = request_id_step
        self.start = 0
        self.warmup_ns = int(spec.warmup_s * _NS)
        self.min_ns = int(spec.min_duration_s * _NS)
        self.max_ns = int(spec.max_duration_s * _NS)
        self.issued = 0
        self.n_warm = 0
        self.n_measured = 0
        self.done = 0
        self.errors = 0
        self.in_flight = 0
        self.stopping = False
        self.stopped_by: StoppedBy = "max_duration"
        self.tasks: set[asyncio.Task[None]] = set()
        self.slot: asyncio.Future[None] | None = None   # open loop: wakes a capped dispatcher
        # The open loop's dispatch state (:meth:`open`).
        self._sched: list[int] = []
        self._next = 0
        self._waker = Waker()
        self._issuing: asyncio.Future[None] | None = None
        self.cancel_kind = ("client", "interrupted")
        self.held = 0
        self.lags: list[int] = []
        self.sink_error: Exception | None = None

    # --- decisions ----------------------------------------------------------------------------

    def stop_due(self, elapsed: int) -> bool:
        """The stop rule, at ``elapsed`` ns since the point's start."""
        if elapsed >= self.max_ns:
            self.stopped_by = "max_duration"
            return True
        if elapsed >= self.min_ns and self.n_measured >= self.spec.min_requests:
            self.stopped_by = "min_satisfied"
            return True
        return False

    def next_request(self, elapsed: int, scheduled_ns: int | None) -> tuple[Prompt, Record]:
        i = self.issued
        self.issued = i + 1
        n = self.n_prompts
        if i < self.spec.warmup_requests or elapsed < self.warmup_ns:
            j = self.n_warm
            self.n_warm = j + 1
            prompt = self.prompts[j % n]
            attempt, warm = 0, True
        else:
            m = self.n_measured
            self.n_measured = m + 1
            prompt = self.prompts[m % n]
            attempt, warm = m // n, False
        rec = Record(self.name, self.spec.index, self.spec.label,
                     self.first_id + i * self.id_step, prompt.task_id, attempt, warm,
                     scheduled_ns, turn=0 if prompt.turns else None)
        return prompt, rec

    def turn_record(self, prev: Record, turn: int) -> Record:
        """The record of a conversation's next turn: the next request id, in flight now."""
        i = self.issued
        self.issued = i + 1
        self.in_flight += 1
        return Record(self.name, self.spec.index, self.spec.label, self.first_id + i,
                      prev.task_id, prev.attempt, prev.warmup, None, turn=turn)

    # --- one request --------------------------------------------------------------------------

    async def one(self, prompt: Prompt, rec: Record) -> None:
        """Closed loop: send in the worker's own task."""
        self.in_flight += 1
        if prompt.turns:
            conv = _Conversation(rec)
            try:
                await self.converse(prompt, conv)
            except asyncio.CancelledError:
                self._end_conversation(conv, None)
                raise
            return
        try:
            await self.target.send(prompt, rec, self.t0)
        except asyncio.CancelledError:
            self._cancelled(rec)
            raise
        except Exception as exc:  # a target broke its contract; keep the run going
            self._raised(rec, exc)
        finally:
            self._account(rec)

    def launch(self, prompt: Prompt, rec: Record) -> None:
        """Open loop: send in a task of its own. The accounting is a done-callback, so it
        also runs for a task cancelled before it ever started.

        When the target can write at once (an idle connection), the send starts eagerly:
        the request leaves now, not after the response callbacks already queued on the loop,
        which is most of the schedule lag at high rates."""
        self.in_flight += 1
        loop = asyncio.get_running_loop()
        if prompt.turns:
            conv = _Conversation(rec)
            task = loop.create_task(self.converse(prompt, conv))
            self.tasks.add(task)
            task.add_done_callback(partial(self._conversation_landed, conv))
            return
        coro = self.target.send(prompt, rec, self.t0)
        task = (start_eagerly(loop, coro) if self.target.ready_to_send()
                else loop.create_task(coro))
        self.tasks.add(task)
        task.add_done_callback(partial(self._landed, rec))

    def _landed(self, rec: Record, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            self._cancelled(rec)
        else:
            exc = task.exception()
            if exc is not None:
                self._raised(rec, exc)
        self._account(rec)

    async def converse(self, prompt: Prompt, conv: _Conversation) -> None:
        """A conversation's turns in order; each turn's record is accounted when it ends.
        ``conv.current`` is the record in flight, not accounted yet (None between turns)."""
        sent = prompt
        for k in range(len(prompt.turns) + 1):
            if k:
                assert conv.last is not None
                sent = next_turn(sent, conv.last.output_text or "", prompt.turns[k - 1])
                conv.current = self.turn_record(conv.last, k)
            rec = conv.current
            assert rec is not None
            try:
                await self.target.send(sent, rec, self.t0)
            except Exception as exc:  # a target broke its contract; keep the run going
                self._raised(rec, exc)
            conv.current, conv.last = None, rec
            self._account(rec)
            if rec.error_kind is not None or self.sink_error is not None:
                return

    def _conversation_landed(self, conv: _Conversation, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self._end_conversation(conv, task)

    def _end_conversation(self, conv: _Conversation, task: asyncio.Task[None] | None) -> None:
        """Account the turn a conversation left in flight (cancelled, or it raised)."""
        rec = conv.current
        if rec is None:
            return
        conv.current = None
        exc = None if task is None or task.cancelled() else task.exception()
        if exc is not None:
            self._raised(rec, exc)
        else:
            self._cancelled(rec)
        self._account(rec)

    def _cancelled(self, rec: Record) -> None:
        if rec.done_ns is None or rec.error_kind is None:
            rec.done_ns = _now() - self.t0
            rec.error_kind, rec.error_detail = self.cancel_kind

    def _raised(self, rec: Record, exc: BaseException) -> None:
        rec.error_kind = "client"
        rec.error_detail = f"target raised {type(exc).__name__}: {exc}"[:300]
        if rec.done_ns is None:
            rec.done_ns = _now() - self.t0

    def _account(self, rec: Record) -> None:
        self.in_flight -= 1
        self.done += 1
        if rec.error_kind is not None:
            self.errors += 1
        slot = self.slot
        if slot is not None and not slot.done():
            slot.set_result(None)
        if self.progress is not None:
            self.progress.record(rec)
        try:
            self.sink(rec)
        except Exception as exc:  # e.g. the disk is full: stop issuing, report after draining
            if self.sink_error is None:
                self.sink_error = exc
            self.stopping = True

    # --- closed loop --------------------------------------------------------------------------

    async def closed(self) -> None:
        """Start the workers; return once issuing has stopped (in-flight requests go on)."""
        decided = asyncio.Event()
        for _ in range(int(self.spec.level)):
            self._spawn(self._worker(decided))
        # Workers decide at issue time; this wakes at the rule's deadlines too, so a point
        # whose requests all hang still stops issuing (and starts draining) on time.
        start = self.start
        while not self.stopping:
            elapsed = _now() - start
            if self.stop_due(elapsed):
                self.stopping = True
                break
            wake = self.min_ns if elapsed < self.min_ns else self.max_ns
            try:
                async with asyncio.timeout((wake - elapsed) / _NS):
                    await decided.wait()
            except TimeoutError:
                pass

    async def _worker(self, decided: asyncio.Event) -> None:
        min_requests = self.spec.min_requests
        try:
            while not self.stopping:
                elapsed = _now() - self.start
                if self.stop_due(elapsed):
                    break
                prompt, rec = self.next_request(elapsed, None)
                if self.n_measured >= min_requests and elapsed >= self.min_ns:
                    self.stopped_by = "min_satisfied"   # that was the last request to issue
                    self.stopping = True
                    decided.set()
                await self.one(prompt, rec)
        finally:
            self.stopping = True
            decided.set()

    # --- open loop ----------------------------------------------------------------------------

    async def open(self, offsets: npt.NDArray[np.int64], waker: Waker) -> None:
        """Send on the schedule; return once issuing has stopped (in-flight requests go on).

        The sends happen in :meth:`_dispatch`, which the waker calls at each due time: no
        task, future or loop pass per arrival, which is most of what an open loop paid over
        a closed one (``benchmarks/openloop.py``)."""
        self._sched = offsets.tolist()   # Python ints: cheaper to index than numpy scalars
        self._next = 0
        self._waker = waker
        self._issuing = issuing = asyncio.get_running_loop().create_future()
        self._dispatch()
        try:
            await issuing
        finally:
            waker.cancel()
            slot, self.slot = self.slot, None
            if slot is not None:
                slot.cancel()

    def _dispatch(self, _slot: object = None) -> None:
        """Send everything due now (the loop may have woken late), then arm the waker for
        the next arrival, or wait for a free slot under the in-flight cap."""
        issuing = self._issuing
        if issuing is None or issuing.done():   # open() has returned: send nothing more
            return
        try:
            if self._send_due():
                return
        except BaseException as exc:  # surfaced by open(), in the driver task
            issuing.set_exception(exc)
            return
        issuing.set_result(None)

    def _send_due(self) -> bool:
        """True while issuing goes on (the waker or a slot will call back)."""
        sched, start, lags = self._sched, self.start, self.lags
        total, cap = len(sched), self.spec.max_in_flight
        i = self._next
        try:
            while i < total and not self.stopping:
                off = sched[i]
                if self.stop_due(off):
                    return False
                due = start + off
                now = _now()
                if due > now:
                    self._waker.call_at(due, self._dispatch)
                    return True
                if now - start >= self.max_ns:
                    self.stopped_by = "max_duration"
                    return False
                if self.in_flight >= cap:
                    if self.slot is None:   # this arrival starts waiting: counted once
                        self.held += 1
                    self.slot = asyncio.get_running_loop().create_future()
                    self.slot.add_done_callback(self._dispatch)
                    return True
                self.slot = None
                while True:
                    lags.append(now - due)
                    prompt, rec = self.next_request(off, due - self.t0)
                    self.launch(prompt, rec)
                    i += 1
                    if i >= total or self.in_flight >= cap:
                        break
                    off = sched[i]
                    due = start + off
                    if due > now or self.stop_due(off):
                        break
            return False
        finally:
            self._next = i

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def cancel_all(self, kind: str, detail: str) -> None:
        self.cancel_kind = (kind, detail)
        pending = list(self.tasks)
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending)


class _Conversation:
    """A conversation in flight: the turn being sent and the last one answered."""

    __slots__ = ("current", "last")

    def __init__(self, first: Record) -> None:
        self.current: Record | None = first
        self.last: Record | None = None


def next_turn(sent: Prompt, answer: str, text: str) -> Prompt:
    """The request after ``sent``: its history, the target's ``answer`` and the next user
    ``text`` (chat), or the same joined as text (completions)."""
    if sent.messages is not None:
        return Prompt(task_id=sent.task_id, max_tokens=sent.max_tokens,
                      ignore_eos=sent.ignore_eos,
                      messages=(*sent.messages, ("assistant", answer), ("user", text)))
    return Prompt(task_id=sent.task_id, max_tokens=sent.max_tokens, ignore_eos=sent.ignore_eos,
                  prompt=f"{sent.prompt or ''}{answer}\n{text}")


def _schedule_rate(offsets: npt.NDArray[np.int64]) -> float | None:
    """Sends per second a schedule asks for, (n - 1) / span; None for sends all at once."""
    if offsets.size < 2 or offsets[-1] <= offsets[0]:
        return None
    return float((offsets.size - 1) / ((offsets[-1] - offsets[0]) / _NS))


def point_schedule(spec: PointSpec, prompts: Sequence[Prompt] = ()
                   ) -> tuple[npt.NDArray[np.int64], dict[str, Any] | str]:
    """An open-loop point's send offsets (ns from its start) drawn from its seed (or, for
    a trace, its tasks' timestamps), and their provenance: what :func:`run_point` sends when
    no schedule is given."""
    ss = arrivals.arrivals_seed(spec.seed, spec.index)
    if spec.load is not None:
        timed = spec.family.timed_by_tasks
        offsets = spec.load.offsets(spec.level, spec.max_duration_s,
                                    rng=np.random.default_rng(ss),
                                    at_ns=[q.at_ns for q in prompts] if timed else None)
        return offsets, "task timestamps" if timed else arrivals.seed_info(ss)
    offsets = spec.family.schedule(spec.level, spec.max_duration_s,
                                   rng=np.random.default_rng(ss), burstiness=spec.burstiness)
    return offsets, arrivals.seed_info(ss)


def lag_stats(lags: list[int]) -> tuple[float | None, float | None, float | None]:
    """p50, p99 and max of dispatch lags (ns), in ms."""
    if not lags:
        return None, None, None
    a = np.asarray(lags, dtype=np.float64) / 1e6
    p50, p99 = np.percentile(a, [50, 99])
    return float(p50), float(p99), float(a.max())


async def run_point(target: Target, prompts: Sequence[Prompt], spec: PointSpec,
                    sink: Callable[[Record], None], *, t0_ns: int,
                    progress: Progress | None = None, stop: asyncio.Event | None = None,
                    first_request_id: int = 0, drain_timeout_s: float | None = None,
                    schedule_ns: npt.NDArray[np.int64] | None = None,
                    request_id_step: int = 1, start_at_ns: int | None = None,
                    lags_out: list[int] | None = None) -> PointRun:
    """Run one load point. Request ids are ``first_request_id + i * request_id_step`` in
    issue order (a step above 1 interleaves the ids of several load generators).

    ``stop`` (optional) interrupts gracefully: issuing stops, in-flight requests are
    cancelled and recorded as interrupted, and the result says ``stopped_by="interrupted"``.
    If the calling task is cancelled instead, in-flight requests are recorded the same way
    and the cancellation propagates. ``drain_timeout_s`` bounds the wait for in-flight
    requests after the last send (default: the target's ``timeout_s`` plus a margin).
    ``schedule_ns`` (open loop only) replaces the drawn schedule with given send offsets
    (sorted int64 ns from the point's start), e.g. a demand replay's
    (:mod:`acceval.capacity.replay`); ``spec.level`` is then its mean rate.
    ``start_at_ns`` (``perf_counter_ns``, optional) starts the point at that instant rather
    than at once, so that several load generators share one start; ``lags_out`` receives
    the raw dispatch lags (ns), for merging them exactly.
    """
    if not prompts:
        raise ValueError("run_point needs at least one prompt")
    p = _Point(target, prompts, spec, sink, t0_ns, progress, first_request_id,
               request_id_step)
    seeds: dict[str, Any] = {}
    offsets: npt.NDArray[np.int64] | None = None
    rate: float | None = None
    if spec.family.loop == "open":
        rate = spec.level
        if schedule_ns is not None:
            offsets = np.asarray(schedule_ns, dtype=np.int64)
            seeds["arrivals"] = "given schedule"
        else:
            offsets, seeds["arrivals"] = point_schedule(spec, prompts)
        if not spec.family.rate_levels:  # a count or a speed: the schedule's own rate
            rate = _schedule_rate(offsets)
    if drain_timeout_s is None:
        drain_timeout_s = float(target.timeout_s) + DRAIN_MARGIN_S
    if progress is not None:
        # A request count is only the finish line when no minimum duration is set.
        by_count = spec.min_duration_s == 0 and spec.min_requests < 10**8
        progress.start_point(spec.label,
                             spec.min_requests + spec.warmup_requests if by_count else None)
    loop = asyncio.get_running_loop()
    monitor = LoopMonitor(loop, LOOP_TICK_MS)
    if start_at_ns is not None and start_at_ns > _now():
        await asyncio.sleep((start_at_ns - _now()) / _NS)
    p.start = _now() if start_at_ns is None else start_at_ns
    monitor.start()
    waker = make_waker(loop) if offsets is not None else None
    driver = loop.create_task(p.closed() if offsets is None or waker is None
                              else p.open(offsets, waker))
    waiter = loop.create_task(stop.wait()) if stop is not None else None
    interrupted = False
    # No collector pauses inside a point (acceval.collector: a full collection is a lag spike
    # on every request in flight, and a request leaves no cyclic garbage). No full collection
    # first: it took 74 ms of CPU at a fresh process's first point.
    collector.pause()
    _FAST_SWITCHING.begin()
    try:
        await asyncio.wait([driver] if waiter is None else [driver, waiter],
                           return_when=asyncio.FIRST_COMPLETED)
        if driver.done():
            driver.result()
        else:
            interrupted = True
            driver.cancel()
            await asyncio.wait([driver])
            await p.cancel_all("client", "interrupted")
        p.stopping = True
        if p.tasks:
            await asyncio.wait(list(p.tasks), timeout=drain_timeout_s)
        if p.tasks:
            await p.cancel_all("timeout", f"still in flight {drain_timeout_s:g} s after the "
                                          f"point stopped issuing")
    except BaseException:  # cancelled (Ctrl-C) or a bug: still account for every request
        driver.cancel()
        await asyncio.wait([driver])
        await p.cancel_all("client", "interrupted")
        raise
    finally:
        loop_lag = Distribution.of(np.asarray(monitor.stop(), dtype=np.float64) / 1e6)
        if waiter is not None:
            waiter.cancel()
        if waker is not None:
            waker.close()
        collector.resume()
        _FAST_SWITCHING.end()
        if progress is not None:
            progress.end_point()
    if p.sink_error is not None:
        raise p.sink_error
    ended = _now()
    if lags_out is not None:
        lags_out.extend(p.lags)
    lag50, lag99, lagmax = lag_stats(p.lags)
    return PointRun(
        spec=spec, requested_rate_rps=rate, started_ns=p.start - t0_ns, ended_ns=ended - t0_ns,
        sent=p.issued, completed=p.done - p.errors, errors=p.errors,
        stopped_by="interrupted" if interrupted else p.stopped_by, seeds=seeds,
        warmup=p.n_warm, held_by_cap=p.held, lag_p50_ms=lag50, lag_p99_ms=lag99,
        lag_max_ms=lagmax, loop_lag_ms=loop_lag,
    )
