"""Executing a study: tasks → load points per target → records and a run log → RunResult.

``execute`` only measures: the load generator stamps and stores records, and the run log
(:class:`~acceval.results.runlog.RunLog`) says what ran. Every number in the result comes
afterwards from :func:`acceval.analysis.analyze`, so ``acceval report --recompute`` gives
the same numbers from the files alone.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.agents.store import AgentRecords
from acceval.agents.store import read as read_agent_records
from acceval.analysis import (
    analysis_records,
    analyze,
    endpoint_log,
    load_result,
    point_specs,
    with_problems,
)
from acceval.checks import check_runnable, in_flight_cap, preflight_study
from acceval.claims.host import measure_host
from acceval.errors import AccevalError, StudyError, UsageError
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Describes, Prompt, Target
from acceval.loadgen.runner import PointSpec
from acceval.probes import ProbeSampler, make_probe, read_samples
from acceval.probes.base import compact_samples
from acceval.probes.prometheus import ExporterProbe, TelemetryProbe
from acceval.results.files import write_text_durable
from acceval.results.records import RECORD_SCHEMA, Record
from acceval.results.runlog import (
    JOURNAL_FILE,
    ExecutionLog,
    Journal,
    LoadGeneratorLog,
    LocalServerInfo,
    PointLog,
    ResumeLog,
    RunLog,
    TargetLog,
    TelemetryLog,
)
from acceval.results.store import (
    ANALYSIS_COLUMNS,
    PARTS_DIR,
    RECORDS_FILE,
    RecordWriter,
    read_records,
    read_stream,
    rewrite_stream,
    stream_sources,
    write_file,
)
from acceval.run_result import (
    RESULT_FILE,
    DamagedResult,
    RunResult,
    quarantine_result,
    schema_version_of,
)
from acceval.scaleout.ray_backend import RemoteClients, connected
from acceval.scaleout.spec import overridden
from acceval.scenarios import TargetRun, run_all
from acceval.study import Endpoint, Study, load_study, study_to_yaml
from acceval.study import Target as TargetSpec
from acceval.targets import make_target
from acceval.targets.preflight import served_model
from acceval.tasks import Task, TaskSets, score, to_prompt, write_answers_jsonl
from acceval.training.execute import Execution as TrainingExecution
from acceval.training.execute import read_execution, run_training
from acceval.watchdog import orphan_guard


def check_study(path: Path, *, out_dir: Path | None = None) -> tuple[Study, list[str]]:
    """Validate a study and everything a run of it would find late (see acceval.checks)."""
    study = load_study(path)
    ready = check_runnable(study, base_dir=Path(path).parent, out_dir=out_dir, source=str(path))
    return study, ready.notes


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


REDACTED = "[redacted]"


class _Scorer:
    """Joins correctness to each record as it completes, redacts any API key a server echoed
    back, then hands the record to the writer."""

    def __init__(self, tasks: list[Task], writer: RecordWriter,
                 secrets: tuple[str, ...] = ()) -> None:
        self.by_id = {t.id: t for t in tasks}
        self.writer = writer
        self.seen = 0
        self.secrets = tuple(s for s in secrets if s)

    def add(self, tasks: list[Task]) -> None:
        self.by_id.update((t.id, t) for t in tasks)

    def __call__(self, rec: Record) -> None:
        self.seen += 1
        task = self.by_id.get(rec.task_id)
        if task is not None:
            res = score(task, rec.output_text, rec.finish_reason, rec.error_kind)
            if res is not None:
                rec.correct = res.correct
                rec.check_reason = res.reason
                rec.extracted = res.extracted
        if self.secrets:
            self._redact(rec)
        self.writer.add(rec)

    def _redact(self, rec: Record) -> None:
        for field in ("error_detail", "output_text", "check_reason", "extracted"):
            text = getattr(rec, field)
            if text is not None and any(s in text for s in self.secrets):
                for s in self.secrets:
                    text = text.replace(s, REDACTED)
                setattr(rec, field, text)


class _RunTasks:
    """The run's task sets (``tasks.per_point``), and who must learn a new set before a
    point sends it: the scorer, and every local mock that answers from the study's tasks."""

    def __init__(self, sets: TaskSets, scorer: _Scorer) -> None:
        self.sets = sets
        self.scorer = scorer
        self.answer_files: list[Path] = []
        scorer.add(sets.known())
        sets.on_new = self._new

    def _new(self, tasks: list[Task]) -> None:
        self.scorer.add(tasks)
        for path in self.answer_files:
            write_answers_jsonl(tasks, path, append=True)

    def answers_file(self, path: Path) -> None:
        """Write the references of every set drawn so far to ``path``, and later ones as
        they are drawn."""
        write_answers_jsonl(self.sets.known(), path)
        self.answer_files.append(path)

    def prompts(self, api: Literal["chat", "completions"],
                max_tokens: int) -> Callable[[int], tuple[int, list[Prompt]]]:
        """Load point index -> (its task set, its prompts in the target's API)."""
        made: dict[int, list[Prompt]] = {}

        def for_point(index: int) -> tuple[int, list[Prompt]]:
            k = self.sets.set_of(index)
            got = made.get(k)
            if got is None:
                got = made[k] = [to_prompt(t, api=api, max_tokens=max_tokens)
                                 for t in self.sets.tasks(index)]
            return k, got
        return for_point


def _study_secrets(study: Study) -> tuple[str, ...]:
    """The API keys the study's endpoints use (from the environment), to keep off disk."""
    names = {t.endpoint.api_key_env for t in study.targets
             if t.endpoint is not None and t.endpoint.api_key_env}
    return tuple(v for v in (os.environ.get(n) for n in sorted(names)) if v)


async def _measure_target(target: Target, run: TargetRun,
                          specs: list[PointSpec]) -> dict[str, Any]:
    await target.start()
    try:
        fingerprint = await target.probe() if isinstance(target, Describes) else {}
        if isinstance(run.remote, RemoteClients):
            await run.remote.start()
            run.log.load_generators = [LoadGeneratorLog.model_validate(i)
                                       for i in run.remote.info]
        # Fixed points, then the sweep, demand replay and interruption the study asks for.
        await run_all(run, specs)
        return fingerprint
    finally:
        if isinstance(run.remote, RemoteClients):
            run.remote.close()
        await target.close()


def _start_local(spec: TargetSpec, stack: ExitStack, tasks: _RunTasks,
                 run_dir: Path, handles: dict[str, Any]) -> tuple[Endpoint, LocalServerInfo]:
    from acceval.serve import spawn_server

    assert spec.serve is not None
    options = dict(spec.serve.options)
    if options.get("answers") == "@tasks":
        # The mock answers from the study's own tasks (to test correctness end to end).
        path = run_dir / f"answers-{spec.name}.jsonl"
        tasks.answers_file(path)
        options["answers"] = str(path)
    if spec.serve.model is not None:
        options["model"] = spec.serve.model
    if spec.serve.precision is not None:
        options["precision"] = spec.serve.precision
    server = stack.enter_context(
        spawn_server(spec.serve.engine, options=options, port=spec.serve.port)
    )
    model_id = served_model(spec.name, server.base_url, spec.endpoint)
    # An interruption may kill it and start it again on the same port.
    handles["server"] = server
    engine = spec.serve.engine
    handles["respawn"] = lambda: spawn_server(engine, options=options, port=server.port)
    endpoint = spec.endpoint or Endpoint(base_url=server.base_url, model=model_id,
                                         transport=spec.serve.transport)
    info = LocalServerInfo(
        engine=spec.serve.engine, model=spec.serve.model, precision=spec.serve.precision,
        pid=server.pid, startup_s=(server.ready_ns - server.started_ns) / 1e9,
    )
    return endpoint, info


def _stop_later(stack: ExitStack, server: Any) -> None:
    stack.callback(server.stop)


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
    prior, base_dir = _prior_log(run_dir)
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
    set_aside = _set_aside(run_dir, plan.keep, session)
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
    guard = _DiskGuard()
    writer = RecordWriter(run_dir, on_error=guard.fail)
    kept = read_records(run_dir, [*ANALYSIS_COLUMNS, "request_id"]) if session else None
    kept_rows = {} if kept is None else {
        t.name: kept.filter(pc.equal(kept["target"], t.name)) for t in study.targets}
    # A resumed session continues the run's timeline after what it kept, and its request
    # ids after the kept ones, so that records of every session share one clock and key.
    t0_ns = time.perf_counter_ns() - _timeline_end_ns(log)
    prog = Progress(enabled=progress)
    scorer = _Scorer([], writer, _study_secrets(study))
    sets = TaskSets(study.tasks, base_dir=base_dir, first=tasks)
    run_tasks = _RunTasks(sets, scorer)
    if sets.note is not None and sets.scheme != "text":
        note = f"tasks.per_point fresh: {sets.note}"
        if note not in log.notes:
            log.notes.append(note)
    if kept is not None and kept.num_rows:
        scorer.seen = int(pc.max(kept["request_id"]).as_py() or 0) + 1
    journal = _journal(run_dir, base_dir, log, writer, guard)
    journal()
    agents = read_agent_records(run_dir)  # a resumed run keeps the episodes it has
    together = study.execution.backend == "ray" and study.execution.parallel_targets
    # The guard first: a SIGKILL of this process still ends what the run starts below.
    with orphan_guard(), _signals_stop_the_run() as saving, _execution(study, log):
        try:
            todo = []
            for t_index, tspec in enumerate(study.targets):
                tlog = log.target(tspec.name)
                if tlog is None:
                    tlog = TargetLog(name=tspec.name)
                    log.targets.append(tlog)
                    journal()  # a kill inside its first point still finds it reached
                elif _finished(study, t_index, tlog):
                    continue
                todo.append((t_index, tspec, tlog))
            before = {id(p) for _, _, tlog in todo for p in _entries(tlog)}
            for _, _, tlog in todo:
                tlog.failure = None
            if together and len(todo) > 1:
                if log.execution is not None:
                    log.execution.parallel_targets = True
                if prog.active:
                    prog.console.print(f"measuring {', '.join(t.name for _, t, _ in todo)} at "
                                       "the same time, from their own load generators")
                _measure_together(study, todo, tasks=run_tasks, run_dir=run_dir,
                                  base_dir=base_dir, scorer=scorer, t0_ns=t0_ns,
                                  checkpoint=journal, kept_rows=kept_rows)
            else:
                for t_index, tspec, tlog in todo:
                    _measure(study, tspec, t_index, tlog, tasks=run_tasks, run_dir=run_dir,
                             base_dir=base_dir, scorer=scorer, t0_ns=t0_ns, prog=prog,
                             checkpoint=journal, kept_rows=kept_rows.get(tspec.name))
                    journal()
            for _, _, tlog in todo:
                for entry in _entries(tlog):
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
        disk = _disk_message(run_dir, writer, guard)
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
        _keep_final_journal(run_dir, base_dir, log)
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


@contextmanager
def _execution(study: Study, log: RunLog) -> Iterator[None]:
    """The Ray cluster a ``backend: ray`` run sends from, joined (or started) for the run and
    left after it; nothing for the local backend."""
    ex = study.execution
    if ex.backend == "local":
        yield
        return
    clients = sum(ex.clients_for(t.name) for t in study.targets)
    with connected(ex, clients=clients) as cluster:
        log.execution = ExecutionLog(backend=ex.backend, address=ex.address,
                                     ray_version=cluster.ray_version, nodes=cluster.nodes,
                                     parallel_targets=False)
        yield


# --- what a run keeps while it measures, and what a resume reads back -------------------------

SUPERSEDED_DIR = "superseded"


class _DiskGuard:
    """The first error writing the run's own files (records, journal): the run stops
    sending, as on Ctrl-C, and says what was kept."""

    def __init__(self) -> None:
        self.error: OSError | None = None
        self._lock = threading.Lock()
        # Only a run on the main thread owns the process's Ctrl-C (see _signals_stop_the_run).
        self._stops = threading.current_thread() is threading.main_thread()

    def fail(self, exc: OSError) -> None:
        """From any thread (the records writer's included): the first error stops the run."""
        with self._lock:
            first, self.error = self.error is None, self.error or exc
        if first and self._stops:
            signal.raise_signal(signal.SIGINT)


def _disk_message(run_dir: Path, writer: RecordWriter, guard: _DiskGuard) -> str | None:
    error = writer.error or guard.error
    if error is None:
        return None
    lost = (f"; {writer.unwritten} record(s) could not be written"
            if writer.unwritten else "")
    return (f"writing the run's files failed ({error}), so the run stopped sending; "
            f"{writer.written} record(s) are kept in {run_dir}{lost}")


def _journal(run_dir: Path, base_dir: Path, log: RunLog, writer: RecordWriter,
             guard: _DiskGuard) -> Callable[[], None]:
    """Saves runlog.json after each point, once that point's records are on disk."""
    path = run_dir / JOURNAL_FILE

    def save() -> None:
        if guard.error is not None:
            return
        writer.flush()
        writer.wait()
        try:
            write_text_durable(path, Journal(study_dir=str(base_dir.resolve()),
                                             log=log).model_dump_json())
        except OSError as exc:
            guard.fail(exc)

    return save


def _keep_final_journal(run_dir: Path, base_dir: Path, log: RunLog) -> None:
    """The journal, kept with the run's final log once result.json is written: a damaged
    result.json is rebuilt from it and the records exactly (analysis.rebuild_damaged)."""
    with suppress(OSError):  # result.json is written; the journal is only its spare
        write_text_durable(run_dir / JOURNAL_FILE, Journal(
            study_dir=str(base_dir.resolve()), log=log).model_dump_json())


def _prior_log(run_dir: Path) -> tuple[RunLog, Path]:
    """What an earlier session of ``run_dir`` logged, and the folder its study came from."""
    if not (run_dir / "study.yaml").exists():
        raise UsageError(f"{run_dir}: not a run folder (no study.yaml); --resume takes the "
                         "folder an interrupted `acceval run` wrote")
    if (run_dir / RESULT_FILE).exists():
        try:
            if schema_version_of(run_dir) < 2:
                raise UsageError(f"{run_dir}: written by acceval 0.1, which kept no run log "
                                 "to resume from; run the study again")
            stored = RunResult.load(run_dir)
            return stored.log, Path(stored.environment.study_dir or run_dir)
        except DamagedResult as exc:
            # Its journal knows what finished: resume from it (a finished run's result is
            # then written again, measuring nothing).
            moved = quarantine_result(run_dir)
            print(f"acceval: {RESULT_FILE} was damaged ({exc.problem}); moved to "
                  f"{moved.relative_to(run_dir)}, resuming from the run's journal and "
                  "records", file=sys.stderr)
    if (run_dir / JOURNAL_FILE).exists():
        try:
            journal = Journal.model_validate_json(
                (run_dir / JOURNAL_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise AccevalError(f"{run_dir}/{JOURNAL_FILE} could not be read ({exc}); "
                               "run the study again") from exc
        return journal.log, Path(journal.study_dir)
    # Killed before it kept a journal (an older version): nothing is known to be finished.
    created = dt.datetime.fromtimestamp((run_dir / "study.yaml").stat().st_mtime, dt.UTC)
    return RunLog(run_id=run_dir.name, created_utc=created.isoformat()), run_dir


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
        entries = sorted(_entries(fresh), key=lambda p: p.index)
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


def _entries(tlog: TargetLog) -> list[PointLog]:
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


def _finished(study: Study, t_index: int, tlog: TargetLog) -> bool:
    return tlog.failure is None and not _unfinished(study, t_index, tlog)


def _timeline_end_ns(log: RunLog) -> int:
    """Where a resumed session's clock starts: a second after the last kept point ended."""
    ends = [p.ended_ns for t in log.targets for p in _entries(t)]
    return max(ends) + 1_000_000_000 if ends else 0


def _set_aside(run_dir: Path, keep: dict[str, set[int]], session: int) -> int:
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


@dataclass
class _Prepared:
    """One target ready to measure: its client, what it runs, and its points."""

    client: Target
    run: TargetRun
    specs: list[PointSpec]


def _prepare(study: Study, tspec: TargetSpec, t_index: int, tlog: TargetLog,
             stack: ExitStack, *, tasks: _RunTasks, run_dir: Path, base_dir: Path,
             scorer: _Scorer, t0_ns: int, prog: Progress | None,
             checkpoint: Callable[[], None] | None = None,
             kept_rows: pa.Table | None = None, together: bool = False) -> _Prepared:
    """Start the target's local server if any and its probes (stopped by ``stack``).
    ``together``: measured at the same time as other targets, so its probes leave their
    parts for :func:`compact_samples` and its request ids have a space of their own."""
    handles: dict[str, Any] = {}
    if tspec.serve is not None:
        endpoint, tlog.local_server = _start_local(tspec, stack, tasks, run_dir, handles)
    else:
        assert tspec.endpoint is not None
        endpoint = tspec.endpoint
    tlog.endpoint = endpoint_log(endpoint)
    prompts_for = tasks.prompts(endpoint.api, study.tasks.max_tokens)
    prompts = prompts_for(0)[1]
    specs = point_specs(study, t_index, len(prompts))
    client = make_target(tspec.name, endpoint)
    local = tlog.local_server
    pids = [local.pid] if local is not None and local.pid else []
    probe = make_probe(tspec.energy, pids=pids)
    probes = [] if probe is None else [probe]
    scraper = _telemetry_probe(tspec, handles.get("server"))
    exporter = _exporter_probe(tspec, handles.get("server"))
    probes += [p for p in (scraper, exporter) if p is not None]
    if probes:
        sampler = ProbeSampler(probes, run_dir, t0_ns=t0_ns, interval_s=0.25)
        stack.callback(_stop_sampler, sampler, tlog, scraper, not together, exporter)
        sampler.start()
    execution = study.execution
    remote = None if execution.backend == "local" else RemoteClients(
        tspec.name, endpoint, clients=execution.clients_for(tspec.name),
        placement=execution.placement_for(tspec.name), t0_ns=t0_ns)
    run = TargetRun(
        study=study, name=tspec.name, t_index=t_index, base_dir=base_dir,
        target=client, prompts=prompts, prompts_for=prompts_for, sink=scorer, t0_ns=t0_ns,
        progress=prog, log=tlog, server=handles.get("server"),
        respawn=handles.get("respawn"),
        on_new_server=partial(_stop_later, stack), checkpoint=checkpoint,
        kept_rows=kept_rows, in_flight_cap=in_flight_cap(), remote=remote,
        request_id_base=t_index * REQUEST_ID_SPACE if together else None)
    return _Prepared(client, run, specs)


#: Targets measured together each have this many request ids of their own (target i from
#: i * REQUEST_ID_SPACE), so ids stay unique across the run without a shared counter.
REQUEST_ID_SPACE = 1 << 40


async def _measured(p: _Prepared) -> None:
    """Measure one prepared target; a failure of the target is logged, not raised."""
    try:
        p.run.log.fingerprint = await _measure_target(p.client, p.run, p.specs)
    except StudyError:
        raise
    except AccevalError as exc:
        p.run.log.failure = str(exc)


def _measure(study: Study, tspec: TargetSpec, t_index: int, tlog: TargetLog, *,
             tasks: _RunTasks, run_dir: Path, base_dir: Path, scorer: _Scorer, t0_ns: int,
             prog: Progress, checkpoint: Callable[[], None] | None = None,
             kept_rows: pa.Table | None = None) -> None:
    """One target: start its local server if any, probe it, run its points into ``tlog``."""
    with ExitStack() as stack:
        try:
            prepared = _prepare(study, tspec, t_index, tlog, stack, tasks=tasks,
                                run_dir=run_dir, base_dir=base_dir, scorer=scorer,
                                t0_ns=t0_ns, prog=prog, checkpoint=checkpoint,
                                kept_rows=kept_rows)
        except StudyError:
            raise
        except AccevalError as exc:
            tlog.failure = str(exc)
            return
        _run_async(_measured(prepared))


def _measure_together(study: Study, todo: list[tuple[int, TargetSpec, TargetLog]], *,
                      tasks: _RunTasks, run_dir: Path, base_dir: Path, scorer: _Scorer,
                      t0_ns: int, checkpoint: Callable[[], None],
                      kept_rows: dict[str, pa.Table]) -> None:
    """Several targets at the same time (execution.backend ray): each is prepared here in
    turn, then all are measured on one event loop, their load sent by their own load
    generators; this loop only receives their records. No live progress line (several
    points run at once)."""
    with ExitStack() as stack:
        prepared = []
        for t_index, tspec, tlog in todo:
            try:
                prepared.append(_prepare(study, tspec, t_index, tlog, stack, tasks=tasks,
                                         run_dir=run_dir, base_dir=base_dir, scorer=scorer,
                                         t0_ns=t0_ns, prog=None, checkpoint=checkpoint,
                                         kept_rows=kept_rows.get(tspec.name),
                                         together=True))
            except StudyError:
                raise
            except AccevalError as exc:
                tlog.failure = str(exc)

        async def together() -> None:
            await asyncio.gather(*[_measured(p) for p in prepared])

        _run_async(together())
    problem = compact_samples(run_dir)  # every sampler has stopped
    if problem is not None:
        todo[0][2].probe_notes["samples"] = problem


_STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                      if s is not None)


@contextmanager
def _signals_stop_the_run() -> Iterator[Callable[[], None]]:
    """SIGTERM and SIGHUP (``timeout``, ``docker stop``, CI cancellation, a closed terminal)
    stop a run the way Ctrl-C does: sending stops, local servers are stopped, the records are
    flushed and the result and report are written from what was measured. The callable it
    yields marks the saving phase, during which further signals (Ctrl-C included) are ignored.
    Outside the main thread (a library caller's worker) signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    previous = {s: signal.getsignal(s) for s in (*_STOP_SIGNALS, signal.SIGINT)}

    def stop(signum: int, frame: FrameType | None) -> None:
        # Become a Ctrl-C: inside the event loop its runner cancels the measuring task
        # cleanly (requests in flight are cancelled, not left as stray task errors), and
        # outside it SIGINT raises KeyboardInterrupt where the run is.
        signal.raise_signal(signal.SIGINT)

    def saving() -> None:
        for s in previous:
            signal.signal(s, signal.SIG_IGN)

    for s in _STOP_SIGNALS:
        signal.signal(s, stop)
    # A process started with SIGINT ignored (any `cmd &` in a script, some CI runners) would
    # ignore the SIGINT that SIGTERM becomes, and run on: the run takes Ctrl-C's usual meaning.
    if not callable(previous[signal.SIGINT]):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield saving
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


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
    return execute_agents(study.agents, run_dir, base_dir, start_engine=_start_engine)


async def _start_engine(name: str, options: dict[str, Any]) -> Any:
    """A local engine behind acceval's server, in the agents' event loop (``serve:``)."""
    from acceval.engines.base import load_engine
    from acceval.serve import start_server

    return await start_server(load_engine(name, **options), engine_name=name)


def _write_outputs(result: RunResult, run_dir: Path) -> None:
    from acceval.report import write_outputs

    write_outputs(result, run_dir)


def _run_async(coro: Any) -> Any:
    from acceval.loadgen.runner import run as run_loop

    return run_loop(coro)


def _telemetry_probe(tspec: TargetSpec, server: Any) -> TelemetryProbe | None:
    """The scraper of the target's /metrics: the study's URL, or a local server's own."""
    tel = tspec.telemetry
    if not tel.enabled:
        return None
    url = tel.metrics_url
    if url is None and server is not None:
        u = urlsplit(server.base_url)
        url = f"{u.scheme}://{u.netloc}/metrics"
    if url is None:
        return None
    # A local server is cheap to ask often; a remote one is asked once a second.
    interval = tel.interval_s or (LOCAL_SCRAPE_S if server is not None else REMOTE_SCRAPE_S)
    return TelemetryProbe(url, interval_s=interval)


def _exporter_probe(tspec: TargetSpec, server: Any) -> ExporterProbe | None:
    """The accelerator exporter's scraper: the study's, or the DCGM exporter its energy
    probe reads (utilization, memory and power shown, not only turned into energy)."""
    tel = tspec.telemetry
    energy = tspec.energy
    url = tel.exporter_url or (energy.exporter_url if energy.probe == "dcgm" else None)
    if not tel.enabled or url is None:
        return None
    interval = tel.interval_s or (LOCAL_SCRAPE_S if server is not None else REMOTE_SCRAPE_S)
    return ExporterProbe(url, interval_s=interval)


LOCAL_SCRAPE_S = 0.25
REMOTE_SCRAPE_S = 1.0


def _scrape_log(scraper: TelemetryProbe, notes: dict[str, str]) -> TelemetryLog:
    st = scraper.stats
    note = notes.pop(scraper.name, None) or (
        f"{st.failures} scrape(s) failed, the last: {st.last_error}" if st.failures else None)
    return TelemetryLog(url=st.url, source=st.source, scrapes=st.scrapes,
                        failures=st.failures, note=note, unmapped=st.unmapped,
                        first_ns=st.first_ns, last_ns=st.last_ns, interval_s=st.interval_s)


def _stop_sampler(sampler: ProbeSampler, tlog: TargetLog,
                  scraper: TelemetryProbe | None = None, compact: bool = True,
                  exporter: ExporterProbe | None = None) -> None:
    sampler.stop(compact=compact)
    notes = {**sampler.unavailable, **sampler.errors}
    if scraper is not None:
        tlog.telemetry = _scrape_log(scraper, notes)
    if exporter is not None:
        tlog.exporter = _scrape_log(exporter, notes)
    tlog.probe_notes = notes


__all__ = ["check_study", "execute", "execute_file", "load_result", "point_specs", "resume",
           "resume_plan"]
