"""Executing a study: tasks → load points per target → records and a run log → RunResult.

``execute`` only measures: the load generator stamps and stores records, and the run log
(:class:`~acceval.results.runlog.RunLog`) says what ran. Every number in the result comes
afterwards from :func:`acceval.analysis.analyze`, so ``acceval report --recompute`` gives
the same numbers from the files alone.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

from acceval.analysis import (
    analysis_records,
    analyze,
    endpoint_log,
    load_result,
    point_specs,
    with_problems,
)
from acceval.checks import check_runnable, preflight_study
from acceval.errors import AccevalError, StudyError
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Describes, Target
from acceval.loadgen.runner import PointSpec
from acceval.probes import ProbeSampler, make_probe, read_samples
from acceval.results.records import Record
from acceval.results.result import RunResult
from acceval.results.runlog import LocalServerInfo, RunLog, TargetLog
from acceval.results.store import RecordWriter
from acceval.scenarios import TargetRun, run_all
from acceval.study import Endpoint, Study, load_study, study_to_yaml
from acceval.study import Target as TargetSpec
from acceval.targets import make_target
from acceval.targets.preflight import served_model
from acceval.tasks import Task, score, to_prompt, write_answers_jsonl


def check_study(path: Path, *, out_dir: Path | None = None) -> tuple[Study, list[str]]:
    """Validate a study and everything a run of it would find late (see acceval.checks)."""
    study = load_study(path)
    ready = check_runnable(study, base_dir=Path(path).parent, out_dir=out_dir, source=str(path))
    return study, ready.notes


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
        # Fixed points, then the sweep, demand replay and interruption the study asks for.
        await run_all(run, specs)
        return fingerprint
    finally:
        await target.close()


def _start_local(spec: TargetSpec, stack: ExitStack, tasks: list[Task],
                 run_dir: Path, handles: dict[str, Any]) -> tuple[Endpoint, LocalServerInfo]:
    from acceval.serve import spawn_server

    assert spec.serve is not None
    options = dict(spec.serve.options)
    if options.get("answers") == "@tasks":
        # The mock answers from the study's own tasks (to test correctness end to end).
        path = run_dir / f"answers-{spec.name}.jsonl"
        write_answers_jsonl(tasks, path)
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
    endpoint = spec.endpoint or Endpoint(base_url=server.base_url, model=model_id)
    info = LocalServerInfo(
        engine=spec.serve.engine, model=spec.serve.model, precision=spec.serve.precision,
        pid=server.pid, startup_s=(server.ready_ns - server.started_ns) / 1e9,
    )
    return endpoint, info


def _stop_later(stack: ExitStack, server: Any) -> None:
    stack.callback(server.stop)


def execute_file(path: Path, *, out_dir: Path | None = None, progress: bool = True,
                 preflight: bool = True) -> tuple[RunResult, Path]:
    study = load_study(path)
    return execute(study, base_dir=Path(path).parent, out_dir=out_dir, progress=progress,
                   preflight=preflight)


def execute(study: Study, *, base_dir: Path, out_dir: Path | None = None,
            progress: bool = True, preflight: bool = True) -> tuple[RunResult, Path]:
    """Run every target through every load point; always leaves a readable run folder."""
    tasks = check_runnable(study, base_dir=base_dir, out_dir=out_dir).tasks
    if preflight:
        preflight_study(study)
    started = _utc_now()
    run_dir = _run_dir(study, out_dir, base_dir, started)
    (run_dir / "study.yaml").write_text(study_to_yaml(study), encoding="utf-8")
    writer = RecordWriter(run_dir)
    t0_ns = time.perf_counter_ns()
    log = RunLog(run_id=run_dir.name, created_utc=started.isoformat())
    prog = Progress(enabled=progress)
    scorer = _Scorer(tasks, writer, _study_secrets(study))
    with _signals_stop_the_run() as saving:
        try:
            for t_index, tspec in enumerate(study.targets):
                tlog = TargetLog(name=tspec.name)
                log.targets.append(tlog)
                _measure(study, tspec, t_index, tlog, tasks=tasks, run_dir=run_dir,
                         base_dir=base_dir, scorer=scorer, t0_ns=t0_ns, prog=prog)
        except KeyboardInterrupt:
            log.interrupted = True
        finally:
            saving()  # from here on a second signal must not cost what was measured
            prog.close()
            writer.finalize()
        log.finished_utc = _utc_now().isoformat()
        # Artifact checks load models: an interrupted run saves what it measured first.
        problems: list[str] = []
        result = with_problems(
            analyze(study, log, analysis_records(run_dir, problems), read_samples(run_dir),
                    base_dir=base_dir, run_artifact_checks=not log.interrupted), problems)
        result.save(run_dir)
        _write_outputs(result, run_dir)
    if log.interrupted:
        raise AccevalError(f"interrupted; what was measured is kept in {run_dir}")
    failed = [t for t in result.targets if t.failure]
    if failed and len(failed) == len(result.targets):
        reasons = "; ".join(f"{t.name}: {t.failure}" for t in failed)
        raise AccevalError(f"no target could be measured ({reasons}); see {run_dir}")
    return result, run_dir


def _measure(study: Study, tspec: TargetSpec, t_index: int, tlog: TargetLog, *,
             tasks: list[Task], run_dir: Path, base_dir: Path, scorer: _Scorer, t0_ns: int,
             prog: Progress) -> None:
    """One target: start its local server if any, probe it, run its points into ``tlog``."""
    handles: dict[str, Any] = {}
    with ExitStack() as stack:
        try:
            if tspec.serve is not None:
                endpoint, tlog.local_server = _start_local(tspec, stack, tasks, run_dir,
                                                           handles)
            else:
                assert tspec.endpoint is not None
                endpoint = tspec.endpoint
            tlog.endpoint = endpoint_log(endpoint)
            prompts = [to_prompt(t, api=endpoint.api, max_tokens=study.tasks.max_tokens)
                       for t in tasks]
            specs = point_specs(study, t_index, len(prompts))
            client = make_target(tspec.name, endpoint)
            local = tlog.local_server
            pids = [local.pid] if local is not None and local.pid else []
            probe = make_probe(tspec.energy, pids=pids)
            if probe is not None:
                sampler = ProbeSampler([probe], run_dir, t0_ns=t0_ns, interval_s=0.25)
                stack.callback(_stop_sampler, sampler, tlog)
                sampler.start()
            run = TargetRun(
                study=study, name=tspec.name, t_index=t_index, base_dir=base_dir,
                target=client, prompts=prompts, sink=scorer, t0_ns=t0_ns,
                progress=prog, log=tlog, server=handles.get("server"),
                respawn=handles.get("respawn"),
                on_new_server=partial(_stop_later, stack))
            tlog.fingerprint = _run_async(_measure_target(client, run, specs))
        except StudyError:
            raise
        except AccevalError as exc:
            tlog.failure = str(exc)


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
    try:
        yield saving
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _write_outputs(result: RunResult, run_dir: Path) -> None:
    """report.html beside the result, and the run in the catalog of its runs folder."""
    from acceval.report import render
    from acceval.results.catalog import index_run

    (run_dir / "report.html").write_text(render(result, "html", run_dir=run_dir),
                                         encoding="utf-8")
    try:
        index_run(run_dir)
    except AccevalError as exc:
        # A locked or damaged catalog must not cost the user a finished run.
        result.warnings.append(f"runs catalog not updated: {exc}")
        result.save(run_dir)


def _run_async(coro: Any) -> Any:
    from acceval.loadgen.runner import run as run_loop

    return run_loop(coro)


def _stop_sampler(sampler: ProbeSampler, tlog: TargetLog) -> None:
    sampler.stop()
    tlog.probe_notes = {**sampler.unavailable, **sampler.errors}


__all__ = ["check_study", "execute", "execute_file", "load_result", "point_specs"]
