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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.capacity.curve import CurvePoint, curve_from_points, max_rate_under_slo
from acceval.capacity.profile import load_profile
from acceval.errors import StudyError
from acceval.interruption import FaultEvents, Injector, recovery
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Prompt, Target
from acceval.loadgen.replay import REPLAY_LABEL, plan_replay, summarize_replay
from acceval.loadgen.runner import PointRun, PointSpec, run_point
from acceval.loadgen.sweep import search
from acceval.metrics import summarize_point
from acceval.results.records import Record, records_to_table
from acceval.results.result import PointResult, TargetResult
from acceval.study import SLO, Study

# Seed-path slot of the sweep's points (the fixed points use (study seed, target, family,
# level)); a different first element keeps their draws apart.
_SWEEP_SEED_SLOT = 7001


class _Tap:
    """The sink for the runner: forwards every record and keeps the current point's records
    when asked (for the sweep's online summaries), then drops them."""

    def __init__(self, sink: Callable[[Record], None]) -> None:
        self.sink = sink
        self.keep = False
        self.kept: list[Record] = []

    @property
    def seen(self) -> int:
        return int(getattr(self.sink, "seen", 0))

    def __call__(self, rec: Record) -> None:
        self.sink(rec)
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
    prompts: list[Prompt]
    sink: Callable[[Record], None]
    t0_ns: int
    progress: Progress | None
    runs: list[PointRun]
    info: dict[str, Any]                           # the pipeline's meta for this target
    server: Any = None                             # acceval.serve.LocalServer, when local
    respawn: Callable[[], Any] | None = None       # starts it again on the same port
    on_new_server: Callable[[Any], None] | None = None
    _curve: list[CurvePoint] = field(default_factory=list)


def _point_result(run: PointRun, table: pa.Table, slo: SLO) -> PointResult:
    sel = table.filter(pc.equal(table["load_index"], run.spec.index))
    summary = summarize_point(sel, slo=slo, requested_rate_rps=run.requested_rate_rps)
    s = run.spec
    return PointResult(
        index=s.index, label=s.label, kind=s.kind, level=float(s.level),
        requested_rate_rps=run.requested_rate_rps, stopped_by=run.stopped_by, sent=run.sent,
        completed=run.completed, started_ns=run.started_ns, ended_ns=run.ended_ns,
        seeds=dict(run.seeds), summary=summary,
    )


def _interrupted_spec(study: Study, name: str, specs: list[PointSpec],
                      replay: bool) -> PointSpec | str | None:
    """The fixed point to re-run with the fault, "replay", or None (not this target)."""
    spec = study.interruption
    if spec is None or spec.target != name:
        return None
    if spec.point is None:
        if replay:
            return "replay"
        return specs[-1]
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
    study = tr.study
    plan = plan_replay(study.demand, study.seed, tr.base_dir) if (
        study.demand is not None and study.demand.replay is not None) else None
    victim = _interrupted_spec(study, tr.name, specs, plan is not None)
    tap = _Tap(tr.sink)
    tap.keep = study.sweep is not None
    for spec in specs:
        tr.runs.append(await _run(tr, tap, spec))
        if tap.keep:
            tr._curve += curve_from_points([_point_result(tr.runs[-1], tap.take(), study.slo)])
    index = len(specs)
    if study.sweep is not None:
        index = await _sweep(tr, tap, index)
    tap.keep = False
    if plan is not None:
        injector = _injector(tr) if victim == "replay" else None
        run = await _run(tr, tap, plan.spec(index), schedule_ns=plan.schedule_ns,
                         injector=injector)
        tr.info["replay_run"] = run
        if injector is not None:
            tr.info["interruption_run"] = run
            tr.info["interruption_events"] = injector.events.to_dict()
        index += 1
    if isinstance(victim, PointSpec):
        injector = _injector(tr)
        again = dataclasses.replace(victim, index=index,
                                    label=f"{victim.label} + {injector.spec.action}")
        tr.info["interruption_run"] = await _run(tr, tap, again, injector=injector)
        tr.info["interruption_events"] = injector.events.to_dict()


def _injector(tr: TargetRun) -> Injector:
    assert tr.study.interruption is not None
    return Injector(tr.study.interruption, t0_ns=tr.t0_ns, server=tr.server,
                    respawn=tr.respawn)


async def _run(tr: TargetRun, tap: _Tap, spec: PointSpec, *,
               schedule_ns: np.ndarray[Any, np.dtype[np.int64]] | None = None,
               injector: Injector | None = None) -> PointRun:
    if injector is not None:
        injector.start()
    try:
        # Request ids stay unique across the run, so they join with a server's own log.
        return await run_point(tr.target, tr.prompts, spec, tap, t0_ns=tr.t0_ns,
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
    cap = next((f.max_in_flight for f in tr.study.load if f.kind != "concurrency"), 4096)
    counter = [index]

    async def measure(rate: float) -> CurvePoint | None:
        i = counter[0]
        counter[0] += 1
        seed = int(np.random.SeedSequence(
            [tr.study.seed, _SWEEP_SEED_SLOT, tr.t_index, i]).generate_state(1)[0])
        spec = PointSpec(index=i, label=f"sweep {rate:.4g} rps", kind="poisson", level=rate,
                         seed=seed, min_duration_s=sw.point_s, min_requests=1,
                         max_duration_s=sw.point_s, max_in_flight=cap)
        run = await _run(tr, tap, spec)
        tr.runs.append(run)
        pts = curve_from_points([_point_result(run, tap.take(), tr.study.slo)])
        return pts[0] if pts else None

    outcome = await search(measure, tr._curve, max_steps=sw.max_steps, point_s=sw.point_s,
                           max_s=sw.max_s, rel_tol=sw.rel_tol, max_rate_rps=sw.max_rate_rps)
    tr.info["sweep"] = {k: v for k, v in outcome.to_dict().items()
                        if k not in ("max_rate", "bracket_rps")}
    return counter[0]


# --- after the run: the result's sections, from stored records --------------------------------

def apply_scenarios(study: Study, t: TargetResult, table: pa.Table, info: dict[str, Any],
                    base_dir: Path | None) -> None:
    """Fill ``t.sweep``, ``t.replay`` and ``t.interruption`` from the target's records
    (``table``) and what the run noted (``info``)."""
    if info.get("sweep") is not None:
        mr = max_rate_under_slo(curve_from_points(t.points))
        t.sweep = {**info["sweep"], "bracket_rps": [mr.low_rps, mr.high_rps],
                   "max_rate": mr.to_dict()}
    run: PointRun | None = info.get("replay_run")
    if run is not None and study.demand is not None and study.demand.replay is not None:
        point = _point_result(run, table, study.slo)
        sel = table.filter(pc.equal(table["load_index"], run.spec.index))
        profile = load_profile(study.demand, base_dir)
        t.replay = {"point": point.model_dump(mode="json"),
                    **summarize_replay(sel, started_ns=run.started_ns, profile=profile,
                                       compress_to_s=study.demand.replay.compress_to_s,
                                       slo=study.slo)}
    irun: PointRun | None = info.get("interruption_run")
    events = info.get("interruption_events")
    if irun is not None and events is not None and study.interruption is not None:
        sel = table.filter(pc.equal(table["load_index"], irun.spec.index))
        point = _point_result(irun, table, study.slo)
        rec = recovery(sel, FaultEvents.from_dict(events), slo=study.slo, sent=irun.sent,
                       window_s=study.interruption.window_s)
        t.interruption = {"point_label": irun.spec.label, "load_index": irun.spec.index,
                          "target": study.interruption.target,
                          "point_started_ns": irun.started_ns,
                          "point_ended_ns": irun.ended_ns,
                          "point": point.model_dump(mode="json"), **rec}


def quality_records(table: pa.Table, info: dict[str, Any]) -> pa.Table:
    """The target's records that judge its answers: all but the interrupted point's, whose
    failures are the fault's doing, not the model's."""
    run: PointRun | None = info.get("interruption_run")
    if run is None:
        return table
    return table.filter(pc.not_equal(table["load_index"], run.spec.index))


def meta_from_result(t: TargetResult) -> dict[str, Any]:
    """What :func:`apply_scenarios` needs, rebuilt from a stored result (re-analysis)."""
    out: dict[str, Any] = {}
    if t.sweep is not None:
        out["sweep"] = {k: v for k, v in t.sweep.items() if k not in ("max_rate", "bracket_rps")}
    if t.replay is not None:
        out["replay_run"] = PointRun.from_result(PointResult.model_validate(t.replay["point"]))
    if t.interruption is not None:
        out["interruption_run"] = PointRun.from_result(
            PointResult.model_validate(t.interruption["point"]))
        out["interruption_events"] = FaultEvents.from_dict(t.interruption).to_dict()
    return out


__all__ = ["TargetRun", "apply_scenarios", "meta_from_result", "quality_records", "run_all"]
