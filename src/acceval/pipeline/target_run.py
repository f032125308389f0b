"""One target measured: its local server and probes started, its client built, its points
run, and every record scored (and scrubbed of echoed API keys) on its way to the writer."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import pyarrow as pa

from acceval.analysis import endpoint_log, point_specs
from acceval.checks import in_flight_cap
from acceval.errors import AccevalError, StudyError
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Describes, Prompt, Target
from acceval.loadgen.runner import PointSpec
from acceval.probes import ProbeSampler, make_probe
from acceval.probes.prometheus import ExporterProbe, TelemetryProbe
from acceval.redaction import keys_of, scrub
from acceval.results.records import Record
from acceval.results.runlog import (
    Fingerprint,
    LoadGeneratorLog,
    LocalServerInfo,
    TargetLog,
    TelemetryLog,
)
from acceval.results.store import RecordWriter
from acceval.scaleout.ray_backend import RemoteClients
from acceval.scenarios import TargetRun, run_all
from acceval.study import Endpoint, Study
from acceval.study import Target as TargetSpec
from acceval.targets import make_target
from acceval.targets.preflight import served_model
from acceval.tasks import Task, TaskSets, score, to_prompt, write_answers_jsonl


class Scorer:
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
            if text is not None:
                setattr(rec, field, scrub(text, self.secrets))


class RunTasks:
    """The run's task sets (``tasks.per_point``), and who must learn a new set before a
    point sends it: the scorer, and every local mock that answers from the study's tasks."""

    def __init__(self, sets: TaskSets, scorer: Scorer) -> None:
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


def study_secrets(study: Study) -> tuple[str, ...]:
    """The API keys the study's endpoints use (from the environment), inference and agent
    targets alike, to keep off disk."""
    agents = study.agents.targets if study.agents is not None else []
    return keys_of([t.endpoint.api_key_env for t in study.targets if t.endpoint is not None]
                   + [a.key_env for a in agents])


async def _measure_target(target: Target, run: TargetRun,
                          specs: list[PointSpec]) -> Fingerprint:
    await target.start()
    try:
        fingerprint = await target.probe() if isinstance(target, Describes) else Fingerprint()
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


def _start_local(spec: TargetSpec, stack: ExitStack, tasks: RunTasks,
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
                                         transport=spec.serve.transport,
                                         receive_stamps=spec.serve.receive_stamps)
    info = LocalServerInfo(
        engine=spec.serve.engine, model=spec.serve.model, precision=spec.serve.precision,
        pid=server.pid, startup_s=(server.ready_ns - server.started_ns) / 1e9,
    )
    return endpoint, info


def _stop_later(stack: ExitStack, server: Any) -> None:
    stack.callback(server.stop)


@dataclass
class Prepared:
    """One target ready to measure: its client, what it runs, and its points."""

    client: Target
    run: TargetRun
    specs: list[PointSpec]


def prepare(study: Study, tspec: TargetSpec, t_index: int, tlog: TargetLog,
            stack: ExitStack, *, tasks: RunTasks, run_dir: Path, base_dir: Path,
            scorer: Scorer, t0_ns: int, prog: Progress | None,
            checkpoint: Callable[[], None] | None = None,
            kept_rows: pa.Table | None = None, together: bool = False) -> Prepared:
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
    return Prepared(client, run, specs)


#: Targets measured together each have this many request ids of their own (target i from
#: i * REQUEST_ID_SPACE), so ids stay unique across the run without a shared counter.
REQUEST_ID_SPACE = 1 << 40


async def measured(p: Prepared) -> None:
    """Measure one prepared target; a failure of the target is logged, not raised."""
    try:
        p.run.log.fingerprint = await _measure_target(p.client, p.run, p.specs)
    except StudyError:
        raise
    except AccevalError as exc:
        p.run.log.failure = str(exc)


def measure_one(study: Study, tspec: TargetSpec, t_index: int, tlog: TargetLog, *,
                tasks: RunTasks, run_dir: Path, base_dir: Path, scorer: Scorer, t0_ns: int,
                prog: Progress, checkpoint: Callable[[], None] | None = None,
                kept_rows: pa.Table | None = None) -> None:
    """One target: start its local server if any, probe it, run its points into ``tlog``."""
    with ExitStack() as stack:
        try:
            prepared = prepare(study, tspec, t_index, tlog, stack, tasks=tasks,
                               run_dir=run_dir, base_dir=base_dir, scorer=scorer,
                               t0_ns=t0_ns, prog=prog, checkpoint=checkpoint,
                               kept_rows=kept_rows)
        except StudyError:
            raise
        except AccevalError as exc:
            tlog.failure = str(exc)
            return
        run_async(measured(prepared))


def run_async(coro: Any) -> Any:
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
        f"the last: {st.last_error}" if st.failures else None)
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
