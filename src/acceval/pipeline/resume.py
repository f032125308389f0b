"""What a resume keeps and what it measures again: which logged points of an earlier session
finished, where the new session's clock starts, and the unfinished points' records set aside
in ``superseded/`` (docs/reliability.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.agents.store import read as read_agent_records
from acceval.analysis import point_specs
from acceval.results.records import RECORD_SCHEMA
from acceval.results.runlog import PointLog, RunLog, TargetLog
from acceval.results.store import (
    PARTS_DIR,
    RECORDS_FILE,
    read_stream,
    rewrite_stream,
    stream_sources,
    write_file,
)
from acceval.study import Study
from acceval.training.execute import Execution as TrainingExecution
from acceval.training.execute import read_execution

SUPERSEDED_DIR = "superseded"


@dataclass
class ResumePlan:
    log: RunLog                  # the prior log with only its finished entries
    keep: dict[str, set[int]]    # target -> load indexes whose records are kept
    kept: list[str]
    remeasure: list[str]


def resume_plan(study: Study, prior: RunLog, *, run_dir: Path | None = None) -> ResumePlan:
    """Which entries of ``prior`` finished (kept) and which did not (measured again).

    A fixed point finished unless it was stopped inside; the sweep only as a whole (it is a
    search: a partial one starts again); the demand replay and the interruption each on its
    own. A target that failed, or was never reached, is measured again from its start.
    With ``run_dir``, the agents and training parts it lacks are measured again too (a study
    may have no inference targets at all)."""
    log = RunLog(run_id=prior.run_id, created_utc=prior.created_utc,
                 resumes=list(prior.resumes), host=prior.host)
    keep: dict[str, set[int]] = {}
    kept: list[str] = []
    remeasure: list[str] = []
    for t_index, tspec in enumerate(study.targets):
        old = prior.target(tspec.name)
        fresh = TargetLog(name=tspec.name)
        specs = point_specs(study, t_index, max(1, study.tasks.count))
        if old is not None and old.failure is None:
            fresh = old.model_copy(update={"points": [], "sweep": None, "replay": None,
                                           "interruption": None, "fault": None}, deep=True)
            done = {p.index: p for p in old.points if p.role == "fixed" and p.finished}
            fresh.points = [done[s.index] for s in specs if s.index in done]
            sweep = [p for p in old.points if p.role == "sweep"]
            if old.sweep is not None and all(p.finished for p in sweep):
                fresh.sweep = old.sweep
                fresh.points += sweep
            if _complete(old.replay):
                fresh.replay = old.replay
            # When the fault hit the replay, both entries are the same run and agree.
            if _complete(old.interruption) and old.fault is not None:
                fresh.interruption, fresh.fault = old.interruption, old.fault
        log.targets.append(fresh)
        entries = sorted(entries_of(fresh), key=lambda p: p.index)
        keep[tspec.name] = {p.index for p in entries}
        kept += [f"{tspec.name}: {p.label}" for p in entries]
        remeasure += _unfinished(study, t_index, fresh)
    if run_dir is not None:
        remeasure += _parts_unfinished(study, run_dir)
    return ResumePlan(log=log, keep=keep, kept=kept, remeasure=remeasure)


def _parts_unfinished(study: Study, run_dir: Path) -> list[str]:
    """The agents and training parts a run folder does not hold yet. An agents part that
    was skipped (no browser) is finished: it said why, and a resume would skip it again."""
    out = []
    if study.agents is not None:
        kept = read_agent_records(run_dir)
        if kept is None or (not kept.episodes.num_rows and kept.log.skipped is None):
            out.append("agents: the workflows")
    if study.training is not None:
        done = read_execution(run_dir) or TrainingExecution()
        out += [f"training: {p.name}" for p in study.training.platforms
                if p.logs is None and (p.name not in done.platforms
                                       or done.platforms[p.name].status != "ok")]
    return out


def _complete(p: PointLog | None) -> bool:
    return p is not None and p.finished


def entries_of(tlog: TargetLog) -> list[PointLog]:
    """Every logged point of a target: fixed and sweep points, the replay, the interruption
    (the replay and the interruption may be the same run, logged twice)."""
    seen: dict[int, PointLog] = {}
    for p in (*tlog.points, tlog.replay, tlog.interruption):
        if p is not None:
            seen.setdefault(id(p), p)
    return list(seen.values())


def _unfinished(study: Study, t_index: int, tlog: TargetLog) -> list[str]:
    """What the study asks of this target that ``tlog`` does not hold yet."""
    name = tlog.name
    done = {p.index for p in tlog.points if p.role == "fixed"}
    out = [f"{name}: {s.label}" for s in point_specs(study, t_index, max(1, study.tasks.count))
           if s.index not in done]
    if study.sweep is not None and tlog.sweep is None:
        out.append(f"{name}: the load sweep")
    if study.demand is not None and study.demand.replay is not None and tlog.replay is None:
        out.append(f"{name}: the demand replay")
    fault = study.interruption
    if fault is not None and fault.target == name and tlog.interruption is None:
        out.append(f"{name}: the interruption")
    return out


def target_finished(study: Study, t_index: int, tlog: TargetLog) -> bool:
    return tlog.failure is None and not _unfinished(study, t_index, tlog)


def timeline_end_ns(log: RunLog) -> int:
    """Where a resumed session's clock starts: a second after the last kept point ended."""
    ends = [p.ended_ns for t in log.targets for p in entries_of(t)]
    return max(ends) + 1_000_000_000 if ends else 0


def set_aside_records(run_dir: Path, keep: dict[str, set[int]], session: int) -> int:
    """Keep in records.parquet only the records of finished points; move the others (the
    points a resume measures again) to ``superseded/``, where nothing reads them but
    nothing is lost. Returns how many were moved."""
    problems: list[str] = []
    sources = stream_sources(run_dir, RECORDS_FILE, PARTS_DIR)
    table = read_stream(run_dir, RECORDS_FILE, PARTS_DIR, RECORD_SCHEMA, problems=problems,
                        sources=sources)
    mask = pa.array(np.zeros(table.num_rows, dtype=bool))
    for name, indexes in keep.items():
        if indexes:
            values = pa.array(sorted(indexes), type=table.schema.field("load_index").type)
            mask = pc.or_(mask, pc.and_(pc.equal(table["target"], name),
                                        pc.is_in(table["load_index"], value_set=values)))
    aside = table.filter(pc.invert(mask))
    if aside.num_rows:
        folder = run_dir / SUPERSEDED_DIR
        folder.mkdir(exist_ok=True)
        write_file(aside, folder / f"records-before-resume-{session}.parquet")
    # Crash-safe as compaction is: the kept records' file covers the parts it replaces.
    rewrite_stream(run_dir, RECORDS_FILE, PARTS_DIR, table.filter(mask), sources, "target")
    return int(aside.num_rows)
