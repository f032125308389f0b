"""What one target runs, in order: the fixed load points, then the load sweep, the demand
replay and the interruption, when the study asks for them; and, after the run, their
sections of the result, computed from the stored records.

Run-time order per target: fixed points; sweep points (stored with the fixed ones: they are
ordinary Poisson points and belong on the latency curve); the demand replay (its own point,
kept out of the curve); an interrupted re-run of a fixed point when the interruption names
one (also kept out of the curve, so the clean run stays the measurement). By default the
interruption hits the demand replay, or the last fixed point's re-run when there is none.
docs/demand-and-faults.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.capacity.curve import CurvePoint, curve_from_points
from acceval.capacity.family import capacity_rate
from acceval.capacity.replay import (
    REPLAY_LABEL,
    ReplayResult,
    plan_replay,
    replay_profile,
    summarize_replay,
)
from acceval.capacity.spec import Demand, Replay
from acceval.capacity.sweep import SweepResult, search
from acceval.errors import AccevalError, StudyError
from acceval.interruption.recovery import InterruptionResult, recovery
from acceval.interruption.spec import Interruption
from acceval.loadgen.protocol import Prompt, Target
from acceval.loadgen.spec import PoissonRate
from acceval.metrics import summarize_point
from acceval.metrics.derive import Derived, derive
from acceval.metrics.repeats import t_interval
from acceval.results.records import Record, records_to_table
from acceval.results.runlog import FaultLog, PointLog, PointRole, SweepLog, TargetLog
from acceval.results.section import PointResult, RepeatsResult
from acceval.run_result import TargetResult
from acceval.study import SLO, Study

if TYPE_CHECKING:
    # The runner (and its live display) loads when a point is run: the sections after the
    # run (``acceval report``) need none of it.
    from acceval.interruption.inject import Injector
    from acceval.loadgen.progress import Progress
    from acceval.loadgen.runner import PointRun, PointSpec

# Seed-path slot of the sweep's points (the fixed points use (study seed, target, family,
# level)); a different first element keeps their draws apart.
_SWEEP_SEED_SLOT = 7001


class RemotePoints(Protocol):
    """Load generators elsewhere (``acceval.scaleout.ray_backend.RemoteClients``) that run a
    point in place of the local runner and hand every record to ``sink`` on this loop."""

    async def run_point(self, spec: PointSpec, prompts: Sequence[Prompt],
                        sink: Callable[[Record], None], *, progress: Progress | None,
                        first_request_id: int, schedule_ns: Any = None) -> PointRun: ...

    @property
    def lost(self) -> str | None: ...


class _Tap:
    """The sink for the runner: forwards every record and keeps the current point's records
    when asked (for the sweep's online summaries), then drops them."""

    def __init__(self, sink: Callable[[Record], None], id_base: int | None = None) -> None:
        self.sink = sink
        self.keep = False
        self.kept: list[Record] = []
        self.id_base = id_base
        self._next_id = 0 if id_base is None else id_base

    @property
    def seen(self) -> int:
        """The next free request id: past every id seen (several load generators
        interleave their ids, so the count alone could fall on one of them). With an
        ``id_base`` (targets measured together) the target has ids of its own from there."""
        if self.id_base is not None:
            return self._next_id
        return max(int(getattr(self.sink, "seen", 0)), self._next_id)

    def __call__(self, rec: Record) -> None:
        self.sink(rec)
        if rec.request_id >= self._next_id:
            self._next_id = rec.request_id + 1
        if self.keep:
            self.kept.append(rec)

    def take(self) -> pa.Table:
        table = records_to_table(self.kept)
        self.kept = []
        return table


@dataclass
class TargetRun:
    """What the pipeline hands over for one target."""

    study: Study
    name: str
    t_index: int
    base_dir: Path
    target: Target
    prompts: list[Prompt]                          # the first task set's
    sink: Callable[[Record], None]
    t0_ns: int
    progress: Progress | None
    log: TargetLog                                 # what this target ran, filled as it runs
    server: Any = None                             # acceval.serve.LocalServer, when local
    respawn: Callable[[], Any] | None = None       # starts it again on the same port
    on_new_server: Callable[[Any], None] | None = None
    # Called after each point is logged (the pipeline saves the run journal).
    checkpoint: Callable[[], None] | None = None
    # A resumed run: ``log`` already holds the finished points, which are not run again;
    # their records (for the sweep's starting curve) are these.
    kept_rows: pa.Table | None = None
    # Open loop: the most requests in flight the process's open-files limit allows.
    in_flight_cap: int | None = None
    # Load generators elsewhere (execution.backend ray); None: this process sends.
    remote: RemotePoints | None = None
    # Targets measured together: this target's request ids start here (its own id space);
    # None: ids continue the run's count.
    request_id_base: int | None = None
    # Load point index -> (its task set, its prompts) (tasks.per_point); None: every point
    # sends ``prompts``.
    prompts_for: Callable[[int], tuple[int, list[Prompt]]] | None = None
    _curve: list[CurvePoint] = field(default_factory=list)

    def logged(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint()
        if self.remote is not None and self.remote.lost is not None:
            # The point is logged as incomplete; the target cannot go on without it.
            raise AccevalError(self.remote.lost)


def point_log(run: PointRun, role: PointRole = "fixed") -> PointLog:
    """The raw log entry of one point the runner ran."""
    s = run.spec
    return PointLog(
        index=s.index, label=s.label, kind=s.kind, level=float(s.level), role=role,
        requested_rate_rps=run.requested_rate_rps, started_ns=run.started_ns,
        ended_ns=run.ended_ns, sent=run.sent, completed=run.completed, errors=run.errors,
        stopped_by=run.stopped_by, seeds=dict(run.seeds), warmup=run.warmup,
        held_by_cap=run.held_by_cap, lag_p50_ms=run.lag_p50_ms, lag_p99_ms=run.lag_p99_ms,
        lag_max_ms=run.lag_max_ms, loop_lag_ms=run.loop_lag_ms, repeat=s.repeat,
        task_set=s.task_set)


def point_result(log: PointLog, table: pa.Table | Derived, slo: SLO) -> PointResult:
    """One point's summary from its records: ``table`` is the target's records, or the
    point's own rows already derived (:meth:`Derived.subset`)."""
    sel = table if isinstance(table, Derived) else table.filter(
        pc.equal(table["load_index"], log.index))
    summary = summarize_point(sel, slo=slo, requested_rate_rps=log.requested_rate_rps,
                              loop_lag_ms=log.loop_lag_ms)
    return PointResult(
        index=log.index, label=log.label, kind=log.kind, level=log.level,
        requested_rate_rps=log.requested_rate_rps, stopped_by=log.stopped_by, sent=log.sent,
        completed=log.completed, started_ns=log.started_ns, ended_ns=log.ended_ns,
        seeds=dict(log.seeds), summary=summary, repeat=log.repeat, peer=log.peer,
        task_set=log.task_set,
    )


def repeats_section(first: PointResult, runs: list[PointResult]) -> RepeatsResult:
    """The intervals over the runs of one point (``runs[0]`` is ``first``)."""
    s = [p.summary for p in runs]
    return RepeatsResult(
        label=first.label, index=first.index, runs=len(runs), labels=[p.label for p in runs],
        ttft_p50_ms=t_interval([x.ttft_ms.p50 for x in s]),
        ttft_p95_ms=t_interval([x.ttft_ms.p95 for x in s]),
        ttft_p99_ms=t_interval([x.ttft_ms.p99 for x in s]),
        e2e_p95_ms=t_interval([x.e2e_ms.p95 for x in s]),
        request_throughput_rps=t_interval([x.request_throughput_rps for x in s]),
        output_token_throughput_tps=t_interval([x.output_token_throughput_tps for x in s]),
        points=runs[1:])


def _interrupted_spec(study: Study, name: str, specs: list[PointSpec],
                      replay: bool) -> PointSpec | str | None:
    """The fixed point to re-run with the fault, "replay", or None (not this target)."""
    spec = study.interruption
    if spec is None or spec.target != name:
        return None
    if spec.point is None:
        if replay:
            return "replay"
        return [s for s in specs if s.repeat == 0][-1]
    if spec.point == REPLAY_LABEL:
        if not replay:
            raise StudyError("interruption.point is the demand replay, but the study has no "
                             "demand.replay")
        return "replay"
    for s in specs:
        if spec.point in (s.label, s.index) and not isinstance(spec.point, bool):
            return s
    labels = ", ".join(repr(s.label) for s in specs)
    raise StudyError(f"interruption.point {spec.point!r} names no load point; use an index "
                     f"0..{len(specs) - 1}, one of {labels}"
                     + (f" or {REPLAY_LABEL!r}" if replay else ""))


async def run_all(tr: TargetRun, specs: list[PointSpec]) -> None:
    """Every point of one target: fixed, sweep, replay, interruption (see the module doc)."""
    from acceval.loadgen.runner import PointSpec

    study = tr.study
    plan = plan_replay(study.demand, study.seed, tr.base_dir) if (
        study.demand is not None and study.demand.replay is not None) else None
    victim = _interrupted_spec(study, tr.name, specs, plan is not None)
    tap = _Tap(tr.sink, tr.request_id_base)
    if tr.request_id_base is not None and tr.kept_rows is not None and tr.kept_rows.num_rows:
        tap._next_id = max(tap._next_id, int(pc.max(tr.kept_rows["request_id"]).as_py()) + 1)
    tap.keep = study.sweep is not None
    done = {p.index: p for p in tr.log.points if p.role == "fixed"}  # kept by a resume
    for spec in specs:
        if spec.index in done:
            if tap.keep and tr.kept_rows is not None and spec.repeat == 0:
                tr._curve += curve_from_points([point_result(done[spec.index], tr.kept_rows,
                                                             study.slo)])
            continue
        tr.log.points.append(point_log(await _run(tr, tap, spec)))
        tr.logged()
        if tap.keep and spec.repeat > 0:
            tap.take()  # a repeat is not a new rate for the sweep's curve
        elif tap.keep:
            tr._curve += curve_from_points([point_result(tr.log.points[-1], tap.take(),
                                                         study.slo)])
    tr.log.points.sort(key=lambda p: p.index)
    index = len(specs)
    if study.sweep is not None:
        if tr.log.sweep is None:
            index = await _sweep(tr, tap, index)
        else:
            index = max((p.index + 1 for p in tr.log.points if p.role == "sweep"), default=index)
    tap.keep = False
    if plan is not None:
        if tr.log.replay is None:
            injector = _injector(tr) if victim == "replay" else None
            run = await _run(tr, tap, plan.spec(index), schedule_ns=plan.schedule_ns,
                             injector=injector)
            tr.log.replay = point_log(run, "replay")
            if injector is not None:
                tr.log.interruption = point_log(run, "replay")
                tr.log.fault = injector.events
            tr.logged()
        index += 1
    if isinstance(victim, PointSpec) and tr.log.interruption is None:
        injector = _injector(tr)
        again = dataclasses.replace(victim, index=index,
                                    label=f"{victim.label} + {injector.spec.action}")
        tr.log.interruption = point_log(await _run(tr, tap, again, injector=injector),
                                        "interruption")
        tr.log.fault = injector.events
        tr.logged()


def _injector(tr: TargetRun) -> Injector:
    from acceval.interruption.inject import Injector

    assert tr.study.interruption is not None
    return Injector(tr.study.interruption, t0_ns=tr.t0_ns, server=tr.server,
                    respawn=tr.respawn)


async def _run(tr: TargetRun, tap: _Tap, spec: PointSpec, *,
               schedule_ns: np.ndarray[Any, np.dtype[np.int64]] | None = None,
               injector: Injector | None = None) -> PointRun:
    from acceval.loadgen.runner import run_point

    cap = tr.in_flight_cap
    if cap is not None and spec.family.loop == "open" and spec.max_in_flight > cap:
        spec = dataclasses.replace(spec, max_in_flight=cap)
    task_set, prompts = (0, tr.prompts) if tr.prompts_for is None else tr.prompts_for(spec.index)
    if task_set != spec.task_set:
        spec = dataclasses.replace(spec, task_set=task_set)
    if injector is not None:
        injector.start()
    try:
        # Request ids stay unique across the run, so they join with a server's own log.
        if tr.remote is not None:
            return await tr.remote.run_point(spec, prompts, tap, progress=tr.progress,
                                             first_request_id=tap.seen,
                                             schedule_ns=schedule_ns)
        return await run_point(tr.target, prompts, spec, tap, t0_ns=tr.t0_ns,
                               progress=tr.progress, first_request_id=tap.seen,
                               schedule_ns=schedule_ns)
    finally:
        if injector is not None:
            await injector.finish()
            if injector.new_server is not None:
                tr.server = injector.new_server
                if tr.on_new_server is not None:
                    tr.on_new_server(injector.new_server)


async def _sweep(tr: TargetRun, tap: _Tap, index: int) -> int:
    sw = tr.study.sweep
    assert sw is not None
    # The sweep's points take the in-flight cap of the study's first open-loop family.
    cap = next((f.max_in_flight for f in tr.study.load if f.loop == "open"), 4096)
    counter = [index]

    async def measure(rate: float) -> CurvePoint | None:
        from acceval.loadgen.runner import PointSpec

        i = counter[0]
        counter[0] += 1
        seed = int(np.random.SeedSequence(
            [tr.study.seed, _SWEEP_SEED_SLOT, tr.t_index, i]).generate_state(1)[0])
        spec = PointSpec(index=i, label=f"sweep {rate:.4g} rps", kind=PoissonRate.kind, level=rate,
                         seed=seed, min_duration_s=sw.point_s, min_requests=1,
                         max_duration_s=sw.point_s, max_in_flight=cap)
        entry = point_log(await _run(tr, tap, spec), "sweep")
        tr.log.points.append(entry)
        tr.logged()
        pts = curve_from_points([point_result(entry, tap.take(), tr.study.slo)])
        return pts[0] if pts else None

    outcome = await search(measure, tr._curve, max_steps=sw.max_steps, point_s=sw.point_s,
                           max_s=sw.max_s, rel_tol=sw.rel_tol, max_rate_rps=sw.max_rate_rps)
    tr.log.sweep = SweepLog(steps=outcome.steps,
                            stopped_by=outcome.stopped_by,
                            elapsed_s=outcome.elapsed_s)
    return counter[0]


# --- after the run: the result's sections, from stored records --------------------------------

def scenario_sections(study: Study, t: TargetResult, table: pa.Table, log: TargetLog,
                      base_dir: Path | None,
                      derived: Callable[[int], Derived] | None,
                      pool: Executor) -> Callable[[], None]:
    """Fill ``t.sweep``, ``t.replay`` and ``t.interruption`` from the target's records
    (``table``) and what the run logged; ``derived(load_index)`` gives a point's rows derived
    (once for each point, not once for each section that reads it).

    The replay and the interruption are computed in ``pool``; the sections are filled by the
    function returned, to be called once ``t.points`` holds the target's points (the sweep is
    read from them)."""
    def rows(index: int) -> Derived:
        if derived is not None:
            return derived(index)
        return derive(table.filter(pc.equal(table["load_index"], index)))

    def replay(run: PointLog, demand: Demand, replay: Replay) -> ReplayResult:
        d = rows(run.index)
        return summarize_replay(d, point_result(run, d, study.slo), started_ns=run.started_ns,
                                profile=replay_profile(demand, base_dir),
                                compress_to_s=replay.compress_to_s, slo=study.slo)

    def interruption(irun: PointLog, fault: FaultLog,
                     spec: Interruption) -> InterruptionResult:
        d = rows(irun.index)
        rec = recovery(d, fault, slo=study.slo, sent=irun.sent, window_s=spec.window_s)
        return InterruptionResult.of(fault, rec, point=point_result(irun, d, study.slo),
                                     target=spec.target, started_ns=irun.started_ns,
                                     ended_ns=irun.ended_ns)

    replay_job = interruption_job = None
    if log.replay is not None and study.demand is not None and study.demand.replay is not None:
        replay_job = pool.submit(replay, log.replay, study.demand, study.demand.replay)
    irun = log.interruption
    if irun is not None and log.fault is not None and study.interruption is not None:
        interruption_job = pool.submit(interruption, irun, log.fault, study.interruption)

    def fill() -> None:
        if log.sweep is not None:
            mr = capacity_rate(curve_from_points(t.points))
            t.sweep = SweepResult(runs=len(log.sweep.steps), steps=log.sweep.steps,
                                  stopped_by=log.sweep.stopped_by,
                                  elapsed_s=log.sweep.elapsed_s,
                                  bracket_rps=(mr.low_rps, mr.high_rps), max_rate=mr)
        if replay_job is not None:
            t.replay = replay_job.result()
        if interruption_job is not None:
            t.interruption = interruption_job.result()

    return fill


__all__ = ["TargetRun", "point_log", "point_result", "repeats_section", "run_all",
           "scenario_sections"]
