"""Executing a study: tasks → load points per target → records and a run log → RunResult.

``execute`` only measures: the load generator stamps and stores records, and the run log
(:class:`~acceval.results.runlog.RunLog`) says what ran. Every number in the result comes
afterwards from :func:`acceval.analysis.analyze`, so ``acceval report --recompute`` gives
the same numbers from the files alone. This module runs the whole: one target at a time
(:mod:`.target_run`) or several at once (:mod:`.scaleout`), under the signal handling
(:mod:`.signals`), the disk guard (:mod:`.disk_guard`) and the journal (:mod:`.journal`)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from acceval.agents.store import AgentRecords
from acceval.agents.store import read as read_agent_records
from acceval.analysis import analysis_records, analyze, with_problems
from acceval.checks import check_runnable, preflight_study
from acceval.claims.host import measure_host
from acceval.errors import AccevalError, UsageError
from acceval.loadgen.progress import Progress
from acceval.pipeline.disk_guard import DiskGuard, disk_message
from acceval.pipeline.journal import journal_saver, keep_final_journal, prior_log
from acceval.pipeline.resume import (
    entries_of,
    resume_plan,
    set_aside_records,
    target_finished,
    timeline_end_ns,
)
from acceval.pipeline.scaleout import execution_backend, measure_together
from acceval.pipeline.signals import signals_stop_the_run
from acceval.pipeline.target_run import RunTasks, Scorer, measure_one, study_secrets
from acceval.probes import read_samples
from acceval.probes.base import compact_samples
from acceval.results.files import write_text_durable
from acceval.results.runlog import ResumeLog, RunLog, TargetLog
from acceval.results.store import ANALYSIS_COLUMNS, RecordWriter, read_records
from acceval.run_result import RESULT_FILE, RunResult
from acceval.scaleout.spec import overridden
from acceval.study import Study, load_study, study_to_yaml
from acceval.tasks import Task, TaskSets
from acceval.training.execute import run_training
from acceval.watchdog import orphan_guard


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        msg = str(first.get("msg", exc)).removeprefix("Value error, ")
        return f"{where}: {msg}" if where else msg
    return str(exc)


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _run_dir(study: Study, out_dir: Path | None, base_dir: Path, now: dt.datetime) -> Path:
    root = out_dir if out_dir is not None else base_dir / study.output.dir
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    run_dir = root / f"{study.name}-{stamp}"
    n = 1
    while run_dir.exists():
        n += 1
        run_dir = root / f"{study.name}-{stamp}-{n}"
    run_dir.mkdir(parents=True)
    return run_dir


def execute_file(path: Path, *, out_dir: Path | None = None, progress: bool = True,
                 preflight: bool = True, ray_address: str | None = None,
                 clients: int | None = None) -> tuple[RunResult, Path]:
    """Run the study in ``path``; ``ray_address`` / ``clients`` are the command line's
    ``--ray`` and ``--clients`` (they override the study's execution section)."""
    study = load_study(path)
    if ray_address is not None or clients is not None:
        try:
            execution = overridden(study.execution, address=ray_address, clients=clients)
        except ValueError as exc:
            raise UsageError(f"--ray/--clients: {_first_error(exc)}") from None
        study = study.model_copy(update={"execution": execution})
    return execute(study, base_dir=Path(path).parent, out_dir=out_dir, progress=progress,
                   preflight=preflight)


def execute(study: Study, *, base_dir: Path, out_dir: Path | None = None,
            progress: bool = True, preflight: bool = True) -> tuple[RunResult, Path]:
    """Run every target through every load point; always leaves a readable run folder."""
    ready = check_runnable(study, base_dir=base_dir, out_dir=out_dir,
                           launch_browser=_agents_only(study))
    if preflight:
        preflight_study(study)
    started = _utc_now()
    run_dir = _run_dir(study, out_dir, base_dir, started)
    write_text_durable(run_dir / "study.yaml", study_to_yaml(study))
    log = RunLog(run_id=run_dir.name, created_utc=started.isoformat(), notes=ready.notes)
    return _measure_run(study, log, ready.tasks, run_dir=run_dir, base_dir=base_dir,
                        progress=progress)


def _agents_only(study: Study) -> bool:
    """A run starts the agents' browser before its load only when agents are all it
    measures (it would run for nothing); otherwise the lookup is enough, and a browser that
    then fails to start costs only the agents part (1-2 s saved on every run)."""
    return study.agents is not None and not study.targets and study.training is None


def resume(run_dir: Path, *, progress: bool = True,
           preflight: bool = True) -> tuple[RunResult, Path]:
    """Continue a killed or interrupted run in its own folder: the points it finished are
    kept, the unfinished ones are measured again, and the result's log says which
    (docs/reliability.md). A run that finished has nothing to resume."""
    run_dir = Path(run_dir)
    prior, base_dir = prior_log(run_dir)
    study = load_study(run_dir / "study.yaml")
    tasks = check_runnable(study, base_dir=base_dir, out_dir=run_dir.parent,
                           source=f"{run_dir}/study.yaml",
                           launch_browser=_agents_only(study)).tasks
    plan = resume_plan(study, prior, run_dir=run_dir)
    if not plan.remeasure and (run_dir / RESULT_FILE).exists():
        raise UsageError(f"{run_dir}: every point finished; nothing to resume "
                         f"(`acceval report {run_dir}` renders it)")
    if not plan.remeasure:
        return _finish_measured(study, prior, run_dir=run_dir, base_dir=base_dir)
    if preflight:
        preflight_study(study)
    session = len(prior.resumes) + 1
    set_aside = set_aside_records(run_dir, plan.keep, session)
    log = plan.log
    log.resumes.append(ResumeLog(session=session, started_utc=_utc_now().isoformat(),
                                 kept=plan.kept, remeasured=plan.remeasure,
                                 set_aside=set_aside))
    return _measure_run(study, log, tasks, run_dir=run_dir, base_dir=base_dir,
                        progress=progress, session=session)


def _finish_measured(study: Study, log: RunLog, *, run_dir: Path,
                     base_dir: Path) -> tuple[RunResult, Path]:
    """A run killed after it measured everything (inside the compaction of its records or
    the analysis): compact what it kept and write the result, measuring nothing again."""
    RecordWriter(run_dir).finalize()
    compact_samples(run_dir)
    log.interrupted = False
    log.finished_utc = log.finished_utc or _utc_now().isoformat()
    problems: list[str] = []
    result = with_problems(
        analyze(study, log, analysis_records(run_dir, problems), read_samples(run_dir),
                base_dir=base_dir, agent_records=read_agent_records(run_dir),
                run_dir=run_dir), problems)
    result.warnings.insert(0, "every point was measured but result.json was missing or "
                           "damaged; `--resume` rebuilt it from the run's journal and "
                           "records, measuring nothing again")
    result.save(run_dir)
    _write_outputs(result, run_dir)
    return result, run_dir


def _measure_run(study: Study, log: RunLog, tasks: list[Task], *, run_dir: Path,
                 base_dir: Path, progress: bool, session: int = 0) -> tuple[RunResult, Path]:
    if log.host is None and study.plan is not None and study.plan.measure_host:
        # Before any server starts, so that the micro-benchmark has the host to itself.
        log.host = measure_host()
    guard = DiskGuard()
    writer = RecordWriter(run_dir, on_error=guard.fail)
    kept = read_records(run_dir, [*ANALYSIS_COLUMNS, "request_id"]) if session else None
    kept_rows = {} if kept is None else {
        t.name: kept.filter(pc.equal(kept["target"], t.name)) for t in study.targets}
    # A resumed session continues the run's timeline after what it kept, and its request
    # ids after the kept ones, so that records of every session share one clock and key.
    t0_ns = time.perf_counter_ns() - timeline_end_ns(log)
    prog = Progress(enabled=progress)
    scorer = Scorer([], writer, study_secrets(study))
    sets = TaskSets(study.tasks, base_dir=base_dir, first=tasks)
    run_tasks = RunTasks(sets, scorer)
    if sets.note is not None and sets.scheme != "text":
        note = f"tasks.per_point fresh: {sets.note}"
        if note not in log.notes:
            log.notes.append(note)
    if kept is not None and kept.num_rows:
        scorer.seen = int(pc.max(kept["request_id"]).as_py() or 0) + 1
    journal = journal_saver(run_dir, base_dir, log, writer, guard)
    journal()
    agents = read_agent_records(run_dir)  # a resumed run keeps the episodes it has
    together = study.execution.backend == "ray" and study.execution.parallel_targets
    # The guard first: a SIGKILL of this process still ends what the run starts below.
    with orphan_guard(), signals_stop_the_run() as saving, execution_backend(study, log):
        try:
            todo = []
            for t_index, tspec in enumerate(study.targets):
                tlog = log.target(tspec.name)
                if tlog is None:
                    tlog = TargetLog(name=tspec.name)
                    log.targets.append(tlog)
                    journal()  # a kill inside its first point still finds it reached
                elif target_finished(study, t_index, tlog):
                    continue
                todo.append((t_index, tspec, tlog))
            before = {id(p) for _, _, tlog in todo for p in entries_of(tlog)}
            for _, _, tlog in todo:
                tlog.failure = None
            if together and len(todo) > 1:
                if log.execution is not None:
                    log.execution.parallel_targets = True
                if prog.active:
                    prog.console.print(f"measuring {', '.join(t.name for _, t, _ in todo)} at "
                                       "the same time, from their own load generators")
                measure_together(study, todo, tasks=run_tasks, run_dir=run_dir,
                                 base_dir=base_dir, scorer=scorer, t0_ns=t0_ns,
                                 checkpoint=journal, kept_rows=kept_rows)
            else:
                for t_index, tspec, tlog in todo:
                    measure_one(study, tspec, t_index, tlog, tasks=run_tasks, run_dir=run_dir,
                                base_dir=base_dir, scorer=scorer, t0_ns=t0_ns, prog=prog,
                                checkpoint=journal, kept_rows=kept_rows.get(tspec.name))
                    journal()
            for _, _, tlog in todo:
                for entry in entries_of(tlog):
                    if id(entry) not in before:
                        entry.session = session
            journal()
            agents = _agents(study, run_dir, prog, base_dir)
            if study.training is not None:
                run_training(study.training, run_dir, base_dir,
                             echo=prog.console.print if prog.active else None)
            log.interrupted = False
        except KeyboardInterrupt:
            log.interrupted = True
        finally:
            saving()  # from here on a second signal must not cost what was measured
            prog.close()
            writer.finalize()
        if writer.error is not None or guard.error is not None:
            log.interrupted = True
        log.finished_utc = _utc_now().isoformat()
        # Artifact checks load models: an interrupted run saves what it measured first.
        problems: list[str] = []
        result = with_problems(
            analyze(study, log, analysis_records(run_dir, problems), read_samples(run_dir),
                    base_dir=base_dir, run_artifact_checks=not log.interrupted,
                    agent_records=agents, run_dir=run_dir), problems)
        disk = disk_message(run_dir, writer, guard)
        if disk is not None:
            result.warnings.insert(0, disk)
        try:
            result.save(run_dir)
            _write_outputs(result, run_dir)
        except OSError as exc:
            kept = disk or f"{writer.written} record(s) are kept in {run_dir}"
            raise AccevalError(
                f"could not write result.json and report.html ({exc}). {kept}. Once there is "
                f"room, `acceval report {run_dir}` rebuilds the result from them and "
                f"`acceval run --resume {run_dir}` measures what is missing") from exc
        keep_final_journal(run_dir, base_dir, log)
    if disk is not None:
        raise AccevalError(f"{disk}. Once there is room, `acceval run --resume {run_dir}` "
                           "measures the unfinished points")
    if log.interrupted:
        raise AccevalError(f"interrupted; what was measured is kept in {run_dir} "
                           f"(`acceval run --resume {run_dir}` measures the rest)")
    failed = [t for t in result.targets if t.failure]
    if failed and len(failed) == len(result.targets):
        reasons = "; ".join(f"{t.name}: {t.failure}" for t in failed)
        raise AccevalError(f"no target could be measured ({reasons}); see {run_dir}")
    return result, run_dir


def _agents(study: Study, run_dir: Path, prog: Progress,
            base_dir: Path | None = None) -> AgentRecords | None:
    """The agents part, after the targets (a resumed run that has its episodes keeps them)."""
    if study.agents is None:
        return None
    kept = read_agent_records(run_dir)
    if kept is not None and kept.episodes.num_rows:
        return kept
    from acceval.agents.run import execute_agents

    if prog.active:
        prog.console.print(f"agents: workflows of {study.agents.scenarios} in headless "
                           "Chromium")
    return execute_agents(study.agents, run_dir, base_dir, start_engine=_start_engine,
                          secrets=study_secrets(study))


async def _start_engine(name: str, options: dict[str, Any]) -> Any:
    """A local engine behind acceval's server, in the agents' event loop (``serve:``)."""
    from acceval.engines.base import load_engine
    from acceval.serve import start_server

    return await start_server(load_engine(name, **options), engine_name=name)


def _write_outputs(result: RunResult, run_dir: Path) -> None:
    from acceval.report import write_outputs

    write_outputs(result, run_dir)
