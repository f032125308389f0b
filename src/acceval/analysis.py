"""``analyze(study, log, records) -> RunResult``: every number of a result, from raw data.

The stages run in one direction, each a typed section computed from its own slice of the
study: points → quality → scenarios (sweep, replay, interruption) → capacity → economics and
energy → verdict (operating points, then ranking) → portability and exit. Nothing here
measures; ``acceval report --recompute`` and ``--set`` are this function over a stored run.

Reading a run folder lives here too (:func:`load_result`): a schema-2 ``result.json`` as it
is, a schema-1 one (acceval 0.1) and a killed run (no ``result.json``) re-analysed from their
records.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import platform
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from acceval._version import __version__
from acceval.agents.store import AgentRecords
from acceval.agents.store import read as read_agent_records
from acceval.capacity import TargetCapacity, availability_without_demand
from acceval.capacity.apply import demand_section
from acceval.claims import PlanTarget, Side, check_claim, gather, ledger_rows, plan_target
from acceval.claims.against import ClaimsResult
from acceval.claims.plan import PlanResult
from acceval.collector import collector_paused
from acceval.economics import Catalog, load_catalog
from acceval.economics.apply import Priced, RunEconomics, price_target
from acceval.economics.inputs import resolve_rate
from acceval.economics.sensitivity import SensitivityResult, sensitivity
from acceval.errors import AccevalError, StudyError
from acceval.metrics import accuracy, has_correctness, pass_at_1
from acceval.metrics.derive import Derived, derive, outcomes, task_codes
from acceval.metrics.point import loop_fell_behind
from acceval.portability import assess_target
from acceval.portability.artifact import ArtifactCheck
from acceval.portability.assess import PortabilityResult, summary_label
from acceval.portability.exit import ExitResult
from acceval.portability.ledger import compile_time_for
from acceval.portability.levels import ArtifactLevel
from acceval.probes import read_samples, table_to_samples
from acceval.quality import evaluate_gate
from acceval.results.runlog import (
    JOURNAL_FILE,
    EndpointLog,
    FaultLog,
    Fingerprint,
    HostBenchLog,
    Journal,
    PointLog,
    ResumeLog,
    RunLog,
    SweepLog,
    TargetLog,
)
from acceval.results.section import SourcedValue
from acceval.results.store import ANALYSIS_COLUMNS, read_records
from acceval.run_result import (
    RESULT_FILE,
    DamagedResult,
    Environment,
    RunResult,
    Seeds,
    TargetResult,
    TasksRun,
    quarantine_result,
    read_result_text,
    schema_version_of,
)
from acceval.scenarios import point_result, repeats_section, scenario_sections
from acceval.study import Study, apply_overrides, load_study, study_from_dict
from acceval.targets.spec import Endpoint
from acceval.telemetry.accelerator import accelerator_section
from acceval.telemetry.summary import telemetry_section
from acceval.training.result import TrainingResult
from acceval.units import report_scale
from acceval.verdict import (
    Rules,
    cheapest,
    decide,
    decide_training,
    decide_workflows,
    money_scale,
    standings,
)

if TYPE_CHECKING:
    from acceval.loadgen.runner import PointSpec

_SOFTWARE = ("aiohttp", "numpy", "pyarrow", "pydantic", "duckdb", "uvloop",
             "onnxruntime-genai", "torch", "transformers")


def software() -> dict[str, str]:
    out = {"acceval": __version__, "python": sys.version.split()[0]}
    for name in _SOFTWARE:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def environment(base_dir: Path | None) -> Environment:
    return Environment(host=platform.node(), platform=platform.platform(),
                       machine=platform.machine(), cpu_count=os.cpu_count(),
                       python=sys.version.split()[0],
                       study_dir=str(base_dir.resolve()) if base_dir else None)


def study_catalog(study: Study, base_dir: Path | None) -> Catalog:
    user = study.costs.catalog
    if user is None:
        return load_catalog(None)
    path = Path(user) if Path(user).is_absolute() else (base_dir or Path.cwd()) / user
    if not path.exists():
        raise StudyError(f"costs.catalog: no such file {path}",
                         [("costs.catalog", f"{path} does not exist",
                           "give a path relative to the study file")])
    return load_catalog(path)


# --- the stages ------------------------------------------------------------------------------

def _target_points(study: Study, t: TargetResult, log: TargetLog, sel: pa.Table,
                   base_dir: Path | None, pool: ThreadPoolExecutor) -> None:
    # Each point is derived from its own rows when it is summarised, so a target's
    # per-request arrays are never all held at once (a third of the peak memory of a 1 M
    # record run); the target's accuracy reads the outcome columns only. A point's rows keep
    # their target's task codes: pass@1 groups attempts as over the whole target.
    index = sel["load_index"].to_numpy(zero_copy_only=False)
    codes = task_codes(sel)

    def derived(load_index: int) -> Derived:
        rows = index == load_index
        return derive(_rows_of(sel, rows), task_code=codes[rows])

    # The points are independent: two at a time (NumPy's sorts and partitions and Arrow's
    # kernels run without the interpreter's lock), the replay and the interruption first.
    fill_scenarios = scenario_sections(study, t, sel, log, base_dir, derived, pool)
    t.points = list(pool.map(lambda p: point_result(p, derived(p.index), study.slo),
                             log.points))
    _repeats(t)
    fill_scenarios()
    if sel.num_rows:
        o = outcomes(sel, codes)
        if log.interruption is not None:
            # The interrupted point's failures are the fault's doing, not the model's.
            o = o.subset(index != log.interruption.index)
        if has_correctness(o):
            t.accuracy = accuracy(o)
            t.pass_at_1 = pass_at_1(o)


def _rows_of(table: pa.Table, rows: npt.NDArray[np.bool_]) -> pa.Table:
    """The ``rows`` of ``table``: a zero-copy slice when they are one block (a run writes its
    points one after another), a filtered copy otherwise (a merged or resumed run)."""
    at = np.flatnonzero(rows)
    if at.size and at[-1] - at[0] + 1 == at.size:
        return table.slice(int(at[0]), int(at.size))
    return table.filter(pa.array(rows))


def _quality(study: Study, targets: list[TargetResult],
             mean_tokens: dict[str, float | None]) -> None:
    ref = next((t for t in targets if t.name == study.quality.relative_to), None)
    for t in targets:
        t.gate = evaluate_gate(study.quality, t.accuracy,
                               reference=ref.accuracy if ref else None,
                               mean_output_tokens=mean_tokens.get(t.name))


def _capacity(study: Study, t: TargetResult, catalog: Catalog,
              base_dir: Path | None) -> TargetCapacity | None:
    from acceval.capacity import capacity_for

    cap = capacity_for(study, t, catalog=catalog, base_dir=base_dir)
    if cap is not None:
        t.capacity = cap.result()
        t.availability = t.capacity.availability
    else:
        spec = next(s for s in study.targets if s.name == t.name)
        if spec.availability is not None:
            t.availability = availability_without_demand(
                spec.name, spec.availability, chips_per_replica=spec.platform.chips).result()
    return cap


def _economics(study: Study, targets: list[TargetResult], samples: list[Any],
               catalog: Catalog, base_dir: Path | None,
               capacity: dict[str, TargetCapacity | None]) -> dict[str, Priced]:
    priced: dict[str, Priced] = {}
    for t in targets:
        cap = capacity[t.name]
        spec = next(s for s in study.targets if s.name == t.name)
        compile_time = compile_time_for(
            spec, startup_s=t.local_server.startup_s if t.local_server else None,
            base_dir=base_dir)
        p = price_target(study, t, samples, catalog,
                         utilization=cap.utilization_input if cap is not None else None,
                         compile_time=compile_time)
        if p is not None:
            t.economics = p.economics
            priced[t.name] = p
    return priced


def _run_economics(study: Study, priced: dict[str, Priced],
                   operating: dict[str, str | None],
                   qualified: set[str]) -> RunEconomics | None:
    """The frontier and the sensitivity over the qualified targets' operating points."""
    from acceval.economics.bill import compute_bill, frontier

    inputs = [priced[n].inputs[label] for n, label in operating.items()
              if n in priced and n in qualified and label is not None
              and label in priced[n].inputs]
    if not inputs:
        return None
    front = frontier([compute_bill(ci) for ci in inputs], study.costs.baseline_usd_per_task)
    sens = sensitivity(inputs, cheapest, study.costs.sensitivity)
    return RunEconomics(frontier=front, sensitivity=sens)


def slo_text(study: Study) -> str:
    """The study's SLO as one line (``ttft_ms<=50, e2e_ms<=100 at p95``)."""
    slo = study.slo.model_dump(exclude_none=True)
    pct = slo.pop("percentile", None)
    bounds = ", ".join(f"{k}<={v:g}" for k, v in slo.items() if isinstance(v, int | float))
    return (bounds or "no latency bound") + (f" at p{pct:g}" if pct is not None else "")


def _side(study: Study, t: TargetResult) -> Side:
    spec = next(s for s in study.targets if s.name == t.name)
    # The declared model, else the one the server listed (GET /v1/models) when measured: two
    # local `serve:` targets of one engine serve the same model even when none is declared.
    declared = (spec.serve.model if spec.serve else None) or (
        spec.endpoint.model if spec.endpoint else None)
    model = declared or (t.endpoint.model if t.endpoint is not None else None)
    precision = spec.platform.precision or (spec.serve.precision if spec.serve else None)
    return Side(name=t.name, hardware=spec.platform.hardware, model=model,
                precision=precision, software=spec.platform.software, points=t.points)


def _claims(study: Study, targets: list[TargetResult],
            base_dir: Path | None) -> ClaimsResult | None:
    """The claim ledger, its conflicts, and each ratio claim against the two targets the
    study maps it to."""
    if study.claims is None:
        return None
    found = gather(study.claims, base_dir)
    rows, clashes = ledger_rows(found)
    by_id = {c.id: c for c, _ in found}
    sides = {t.name: _side(study, t) for t in targets}
    checks = [check_claim(by_id[c.claim], c, sides[c.subject], sides[c.comparator],
                          slo_text=slo_text(study))
              for c in study.claims.check if c.claim in by_id]
    return ClaimsResult(claims=rows, conflicts=clashes, checks=checks)


def plan_study(study: Study, catalog: Catalog, host: HostBenchLog | None = None,
               targets: list[TargetResult] | None = None) -> list[PlanResult]:
    """The roofline plan of every target (``acceval plan``), with each target's measured
    points and accuracy beside it when ``targets`` come from a run."""
    if study.plan is None:
        return []
    measured = {t.name: t for t in targets or []}
    out = []
    for spec in study.targets:
        rate = None
        if spec.price is not None:
            r = resolve_rate(spec.name, spec.price, catalog, spec.platform.hardware)
            u = r.usd_per_chip_hour
            rate = SourcedValue(value=u.value, origin=u.origin, source=u.source, date=u.date)
        t = measured.get(spec.name)
        acc = t.accuracy.accuracy if t is not None and t.accuracy is not None else None
        out.append(plan_target(study.plan, PlanTarget(
            name=spec.name, hardware=spec.platform.hardware, chips=spec.platform.chips,
            precision=spec.platform.precision or (spec.serve.precision if spec.serve else None),
            usd_per_chip_hour=rate, accuracy=acc, points=t.points if t else []),
            catalog.chip(spec.platform.hardware), host))
    return out


Records: TypeAlias = pa.Table | Callable[[str], pa.Table]
# The columns the migration ledger's warm-up reads, kept per target after its first pass.
_WARM_COLUMNS = ["target", "sent_ns", "first_token_ns", "done_ns", "error_kind"]


def _by_target(records: Records) -> Callable[[str], pa.Table]:
    """One target's analysis columns, from a table or from a reader of one target at a time
    (a run folder's grouped records.parquet is read a target at a time: bounded memory)."""
    if callable(records):
        return records
    table = records.select([c for c in ANALYSIS_COLUMNS if c in records.column_names])
    return lambda name: table.filter(pc.equal(table["target"], name))


def analyze(study: Study, log: RunLog, records: Records, samples: pa.Table | None = None, *,
            base_dir: Path | None = None,
            artifact_checks: dict[str, ArtifactCheck] | None = None,
            run_artifact_checks: bool = False,
            kept_artifact_levels: dict[str, ArtifactLevel] | None = None,
            agent_records: AgentRecords | None = None,
            run_dir: Path | None = None,
            measured_on: tuple[Environment, dict[str, str]] | None = None) -> RunResult:
    """Every number from stored records and the run log (pure apart from reading the files
    the study names, and loading models when ``run_artifact_checks``). ``agent_records``
    are the agents part's step and episode records, when the study has one; ``run_dir``
    holds the logs the training section's commands wrote; ``measured_on``, the environment
    and software versions a stored run recorded (a re-analysis keeps them instead of
    describing this process)."""
    kept_artifact_levels = kept_artifact_levels or {}
    catalog = study_catalog(study, base_dir)
    # No collection inside (acceval.collector): the analysis leaves no cycles, and a full
    # pass over a training trace's parsed JSON held every thread still for 74 ms.
    # Beside the per-target work, one thread reads the training logs and traces (they need
    # nothing from the points), and each target's points are summarised two at a time
    # (_target_points). The results are the same objects, whichever finishes first.
    with collector_paused(), \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="acceval-training") as aside, \
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="acceval-points") as points:
        training_job = None
        if study.training is not None:
            training_job = aside.submit(
                _training, study, base_dir=base_dir or Path.cwd(), run_dir=run_dir,
                catalog=catalog,
                host_fp32_tflops=log.host.peak_fp32_tflops if log.host is not None else None)
        return _analyze(study, log, _by_target(records), samples,
                        catalog=catalog, training_job=training_job, points_pool=points,
                        base_dir=base_dir,
                        artifact_checks=artifact_checks,
                        run_artifact_checks=run_artifact_checks,
                        kept_artifact_levels=kept_artifact_levels,
                        agent_records=agent_records, measured_on=measured_on)


def _training(study: Study, *, base_dir: Path, run_dir: Path | None, catalog: Catalog,
              host_fp32_tflops: float | None) -> TrainingResult:
    # Imported for a study that has the part: the others do not load its analysis.
    from acceval.training.analyze import training_section

    assert study.training is not None
    return training_section(study.training, base_dir=base_dir, run_dir=run_dir,
                            study_costs=study.costs, catalog=catalog,
                            host_fp32_tflops=host_fp32_tflops)


def _analyze(study: Study, log: RunLog, rows_of: Callable[[str], pa.Table],
             samples: pa.Table | None, *, catalog: Catalog,
             training_job: Future[TrainingResult] | None, points_pool: ThreadPoolExecutor,
             base_dir: Path | None, artifact_checks: dict[str, ArtifactCheck] | None,
             run_artifact_checks: bool, kept_artifact_levels: dict[str, ArtifactLevel],
             agent_records: AgentRecords | None,
             measured_on: tuple[Environment, dict[str, str]] | None) -> RunResult:
    targets: list[TargetResult] = []
    mean_tokens: dict[str, float | None] = {}
    warm: dict[str, pa.Table] = {}
    capacity: dict[str, Future[TargetCapacity | None]] = {}
    for tspec in study.targets:
        tlog = log.target(tspec.name) or TargetLog(name=tspec.name,
                                                   failure="not run (interrupted)")
        endpoint = tlog.endpoint
        if endpoint is None and tspec.endpoint is not None:
            endpoint = endpoint_log(tspec.endpoint)
        t = TargetResult(name=tspec.name, endpoint=endpoint,
                         platform=tspec.platform,
                         fingerprint=tlog.fingerprint, local_server=tlog.local_server,
                         failure=tlog.failure)
        sel = rows_of(tspec.name)
        if log.interrupted and not log.rebuilt:
            # The point the run was stopped inside has records but no log entry yet.
            t_index = [s.name for s in study.targets].index(tspec.name)
            missing = points_from_records(study, t_index, sel,
                                          logged={p.index for p in tlog.points}
                                          | tlog.scenario_indexes())
            if missing:
                tlog = tlog.model_copy(update={"points": [*tlog.points, *missing]})
        _target_points(study, t, tlog, sel, base_dir, points_pool)
        t.telemetry = telemetry_section(tlog.telemetry, t.points, samples)
        t.accelerator = accelerator_section(tlog.telemetry, tlog.exporter, t.points, samples)
        mean_tokens[t.name] = _mean_output_tokens(sel)
        warm[t.name] = sel.select(_WARM_COLUMNS)
        del sel
        targets.append(t)
        # Its fleet and what-if read only its own points and accuracy: computed beside the
        # next target's reading.
        capacity[t.name] = points_pool.submit(_capacity, study, t, catalog, base_dir)
    _quality(study, targets, mean_tokens)
    sample_list = table_to_samples(samples) if samples is not None else []
    priced = _economics(study, targets, sample_list, catalog, base_dir,
                        {n: c.result() for n, c in capacity.items()})
    rules = Rules(min_point_requests=study.quality.min_point_requests)
    rows = standings(targets, rules)
    operating = {s.target: s.operating_point for s in rows}
    for t in targets:
        if t.name in priced:
            label = operating[t.name] or _cheapest(priced[t.name])
            t.energy = priced[t.name].energy.get(label) if label else None
    qualified = {s.target for s in rows if s.qualified}
    economics = _run_economics(study, priced, operating, qualified)
    claims = _claims(study, targets, base_dir)
    for t, plan in zip(targets, plan_study(study, catalog, log.host, targets), strict=False):
        t.plan = plan
    agents = None
    if study.agents is not None:
        # Imported for a study that has the part: the others do not load its analysis.
        from acceval.agents.analyze import agents_section

        agents = agents_section(study.agents, agent_records, study, catalog)
    # One money scale for the whole result: the verdict's sentences are written in it and
    # every format renders the rest of the report in it (Verdict.money_scale).
    with report_scale(money_scale(targets, agents)) as scale:
        verdict = decide(targets, rules, _sensitivity(economics), rows=rows)
        verdict.workflows = decide_workflows(agents)
    verdict.money_scale = scale.factor
    checks = artifact_checks or {}

    def assess(t: TargetResult) -> tuple[PortabilityResult, ExitResult | None]:
        return assess_target(
            study, targets, t, base_dir=base_dir or Path.cwd(), operating=operating,
            records=warm[t.name], artifact_check=checks.get(t.name),
            run_artifact_check=run_artifact_checks)

    # Each target's ledger reads its own records (and the reference's points); two at a time,
    # except where the artifact checks load models (one model in memory at a time).
    assessed = map(assess, targets) if run_artifact_checks else points_pool.map(assess, targets)
    for t, (portability, exit_) in zip(targets, assessed, strict=True):
        t.portability, t.exit = portability, exit_
        kept = kept_artifact_levels.get(t.name)
        if kept is not None and t.portability is not None:
            t.portability.levels.artifact = kept
            t.portability.level = summary_label(dict(t.portability.levels.items()))
    warnings = [f"{tl.name}: energy probe {probe}: {why}"
                for tl in log.targets for probe, why in tl.probe_notes.items()]
    warnings += log.notes + [_resume_note(r) for r in log.resumes]
    warnings += [f"{tl.name}: point {p.label!r} is incomplete: a load generator was lost "
                 f"while it ran ({p.sent} requests kept); `acceval run --resume` measures it "
                 "again" for tl in log.targets for p in _entries_of(tl)
                 if p.stopped_by == "client_lost"]
    warnings += _client_bound_notes(targets, log, os.cpu_count())
    training = None
    if training_job is not None:
        training = training_job.result()
        training.verdict = decide_training(training.platforms)
        verdict.training = training.verdict
        warnings += [f"training {n}" for n in training.notes]
    return RunResult(
        run_id=log.run_id, study_name=study.name, created_utc=log.created_utc,
        finished_utc=log.finished_utc, interrupted=log.interrupted,
        study=study, environment=measured_on[0] if measured_on else environment(base_dir),
        software=measured_on[1] if measured_on else software(),
        seeds=Seeds(study=study.seed, tasks=study.tasks.seed),
        tasks=TasksRun(source=study.tasks.source, count=study.tasks.count,
                       attempts=study.tasks.attempts),
        targets=targets, economics=economics, claims=claims, verdict=verdict, warnings=warnings,
        log=log, agents=agents, training=training,
        demand=demand_section(study.demand, base_dir,
                              [t.capacity.plan for t in targets if t.capacity is not None]))


def _client_bound_notes(targets: list[TargetResult], log: RunLog,
                        cpus: int | None) -> list[str]:
    """One note per target whose client's own event loop fell behind on some point: those
    points describe the client, not the target, and more client processes are the fix.
    (A schedule lag alone can come from the target: sends held at the in-flight cap.)"""
    notes = []
    for t in targets:
        bound = [p for p in t.points if loop_fell_behind(p.summary.loop_lag_ms)]
        if not bound:
            continue
        tl = log.target(t.name)
        gens = len(tl.load_generators) if tl is not None else 0
        cores = f" (this machine has {cpus})" if cpus else ""
        how = ("spread the load over client processes, each with a core of its own"
               f"{cores}: `acceval run --clients 2`, or execution.clients (docs/scale-out.md)"
               if gens <= 1 else
               f"it ran {gens} load generators already: add more, each with a core of its "
               "own (execution.placement)")
        labels = ", ".join(repr(p.label) for p in bound[:3]) + (
            f" and {len(bound) - 3} more" if len(bound) > 3 else "")
        notes.append(f"{t.name}: the client could not keep up at {labels} "
                     f"({'; '.join(bound[0].summary.degraded_reasons)}), so those points are "
                     f"not trusted; {how}, or lower the rate")
    return notes


def _cheapest(p: Priced) -> str | None:
    pts = p.economics.points
    return min(pts, key=lambda x: x.bill.cost_per_correct_usd).label if pts else None


def _sensitivity(e: RunEconomics | None) -> SensitivityResult | None:
    return e.sensitivity if e is not None else None


def _mean_output_tokens(table: pa.Table) -> float | None:
    """Mean output tokens of one target's measured requests (the quality level's floor)."""
    # The one column filtered, not the table (its chunk stamps are most of a target's bytes).
    toks = pc.filter(table["output_tokens"], pc.invert(table["warmup"])).drop_null()
    return float(pc.mean(toks).as_py()) if len(toks) else None


def endpoint_log(ep: Endpoint) -> EndpointLog:
    # The key's *variable name* is fine to record; the key never is.
    return EndpointLog(base_url=ep.base_url, model=ep.model, api=ep.api, stream=ep.stream,
                       api_key_env=ep.api_key_env, transport=ep.transport, client=ep.client,
                       receive_stamps=ep.receive_stamps)


def _seed_for(base: int, *path: int) -> int:
    return int(np.random.SeedSequence([base, *path]).generate_state(1)[0])


def point_specs(study: Study, t_index: int, n_prompts: int) -> list[PointSpec]:
    """The fixed load points of target ``t_index``, resolved, each with its own seed."""
    from acceval.loadgen.runner import PointSpec  # the runner: only where points are planned

    specs = []
    index = 0
    for f_index, family in enumerate(study.load):
        for l_index, level in enumerate(family.levels):
            seed = _seed_for(study.seed, t_index, f_index, l_index)
            specs.append(PointSpec.from_study(family, level, index, seed, n_prompts,
                                              study.tasks.attempts))
            index += 1
    # Repeats run after every point's first run, round by round (drift spreads over all
    # points instead of piling on one); each has its own seed and index.
    firsts = list(specs)
    rounds = max((f.repeats for f in study.load), default=1)
    for r in range(1, rounds):
        i = 0
        for f_index, family in enumerate(study.load):
            for l_index, _ in enumerate(family.levels):
                first = firsts[i]
                i += 1
                if r >= family.repeats:
                    continue
                seed = _seed_for(study.seed, t_index, f_index, l_index, r)
                specs.append(dataclasses.replace(first, index=index, seed=seed, repeat=r,
                                                 label=repeat_label(first.label, r)))
                index += 1
    return specs


def repeat_label(label: str, repeat: int) -> str:
    """The label of a point's ``repeat``-th repeat (its first run keeps its own label)."""
    return f"{label} · repeat {repeat + 1}"


def _repeats(t: TargetResult) -> None:
    """Move each point's repeats out of ``t.points`` into ``t.repeats``, with intervals."""
    extra = [p for p in t.points if p.repeat > 0]
    if not extra:
        return
    t.points = [p for p in t.points if p.repeat == 0]
    for first in t.points:
        runs = [first, *(p for p in extra if p.label.startswith(first.label + " · repeat "))]
        if len(runs) > 1:
            t.repeats.append(repeats_section(first, runs))


def analysis_records(run_dir: Path, problems: list[str] | None = None, *,
                     first: str | None = None) -> Callable[[str], pa.Table]:
    """A reader of one target's analysis columns at a time (not the texts) from a run folder;
    an unreadable records file is quarantined and said in ``problems``.

    ``first``: the target asked for first, whose columns start being read now in a thread of
    their own (Arrow decodes them without the interpreter's lock, beside what the caller
    does before it asks: reading the stored result's other files, first imports)."""
    def read(name: str) -> pa.Table:
        return read_records(run_dir, ANALYSIS_COLUMNS, target=name, problems=problems)

    if first is None:
        return read
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acceval-records")
    ahead: Future[pa.Table] | None = pool.submit(read, first)
    pool.shutdown(wait=False)

    def rows_of(name: str) -> pa.Table:
        nonlocal ahead
        if ahead is not None and name == first:
            table, ahead = ahead.result(), None
            return table
        return read(name)

    return rows_of


def with_problems(result: RunResult, problems: list[str]) -> RunResult:
    """The result with what reading its files found (quarantined parts) among its warnings."""
    result.warnings.extend(p for p in dict.fromkeys(problems) if p not in result.warnings)
    return result


# --- reading a run folder --------------------------------------------------------------------

def load_result(run_dir: Path, *, recompute: bool = False,
                overrides: list[str] | None = None) -> RunResult:
    """Read result.json, or re-analyse the stored log and records with ``recompute``.

    ``overrides`` (``path=value``, e.g. ``targets.h200.price.usd_per_hour=40``) change the
    study before recomputing: a what-if on prices, SLOs or boundaries without re-running.
    A schema-1 result (acceval 0.1) is always re-analysed; a run killed before it wrote
    result.json is rebuilt from its records.
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULT_FILE
    if not path.exists():
        if (run_dir / "study.yaml").exists():
            return _rebuild_killed(run_dir)
        raise AccevalError(f"{run_dir}: no {RESULT_FILE} and no study.yaml; is this a run "
                           "folder?")
    try:
        if schema_version_of(run_dir) < 2:
            return _from_v1(run_dir, overrides or [])
        stored = RunResult.load(run_dir)
    except DamagedResult as exc:
        stored = rebuild_damaged(run_dir, exc)
        recompute = False  # the rebuild just analysed the records with this version's rules
    if not recompute and not overrides:
        return stored
    # The stored study was validated as the result was read; only a what-if is checked again.
    study = study_from_dict(apply_overrides(stored.study.model_dump(mode="json"), overrides),
                            source=f"{run_dir} with overrides") if overrides else stored.study
    kept = {t.name: t.portability.levels.artifact for t in stored.targets
            if t.portability is not None
            and t.portability.levels.artifact.verdict != "not assessed"}
    base = Path(stored.environment.study_dir or run_dir)
    problems: list[str] = []
    records = analysis_records(run_dir, problems,
                               first=study.targets[0].name if study.targets else None)
    fresh = with_problems(analyze(study, stored.log, records,
                                  read_samples(run_dir), base_dir=base,
                                  kept_artifact_levels=kept,
                                  agent_records=read_agent_records(run_dir),
                                  run_dir=run_dir,
                                  measured_on=(stored.environment, stored.software)), problems)
    fresh.warnings[:0] = [w for w in stored.warnings if w.startswith(f"{RESULT_FILE} was damaged")]
    if overrides:
        fresh.warnings.insert(0, "what-if: recomputed from the stored records with "
                              + ", ".join(overrides))
        # Every format opens with the headline, so the what-if is said where it is read.
        fresh.verdict.headline = (f"What-if ({', '.join(overrides)}), not measured as "
                                  f"such: {fresh.verdict.headline}")
    return fresh


def _from_v1(run_dir: Path, overrides: list[str]) -> RunResult:
    """A result.json written by acceval 0.1: its log rebuilt from its points, re-analysed;
    :class:`DamagedResult` when it lacks what 0.1 wrote."""
    try:
        return _v1_result(run_dir, overrides)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise DamagedResult(run_dir, f"not a result acceval 0.1 wrote: no or bad {exc}") \
            from None


def _v1_result(run_dir: Path, overrides: list[str]) -> RunResult:
    data = json.loads(read_result_text(run_dir))
    study = study_from_dict(apply_overrides(data["study"], overrides),
                            source=f"{run_dir} (acceval 0.1 result)")
    targets = []
    for t in data.get("targets", []):
        tl = TargetLog(name=t["name"], fingerprint=_v1_fingerprint(t.get("fingerprint")),
                       failure=t.get("failure"), local_server=t.get("local_server"),
                       endpoint=_v1_endpoint(t.get("endpoint")))
        tl.points = [_v1_point(p, "fixed") for p in t.get("points", [])]
        if t.get("sweep"):
            tl.sweep = SweepLog(steps=t["sweep"].get("steps") or [],
                                stopped_by=t["sweep"].get("stopped_by", "max_steps"),
                                elapsed_s=t["sweep"].get("elapsed_s", 0.0))
        if t.get("replay"):
            tl.replay = _v1_point(t["replay"]["point"], "replay")
        if t.get("interruption"):
            tl.interruption = _v1_point(t["interruption"]["point"], "interruption")
            tl.fault = FaultLog.model_validate(
                {k: v for k, v in t["interruption"].items() if k in FaultLog.model_fields})
        targets.append(tl)
    log = RunLog(run_id=data["run_id"], created_utc=data["created_utc"],
                 finished_utc=data.get("finished_utc"),
                 interrupted=bool(data.get("interrupted")), targets=targets)
    base = Path((data.get("environment") or {}).get("study_dir") or run_dir)
    problems: list[str] = []
    result = with_problems(analyze(study, log, analysis_records(run_dir, problems),
                                   read_samples(run_dir), base_dir=base), problems)
    result.warnings.insert(0, "written by acceval 0.1 (result schema 1); re-analysed from its "
                           "records with this version's rules")
    return result


def _v1_endpoint(d: dict[str, Any] | None) -> EndpointLog | None:
    if not d or not d.get("base_url"):
        return None
    return EndpointLog.model_validate({k: v for k, v in d.items()
                                       if k in EndpointLog.model_fields})


def _v1_fingerprint(d: dict[str, Any] | None) -> Fingerprint:
    return Fingerprint.model_validate({k: v for k, v in (d or {}).items()
                                       if k in Fingerprint.model_fields})


def _v1_point(p: dict[str, Any], role: str) -> PointLog:
    return PointLog(index=p["index"], label=p["label"], kind=p["kind"], level=p["level"],
                    role=role,
                    requested_rate_rps=p.get("requested_rate_rps"),
                    started_ns=p["started_ns"], ended_ns=p["ended_ns"], sent=p["sent"],
                    completed=p["completed"], errors=p["sent"] - p["completed"],
                    stopped_by=p["stopped_by"], seeds=p.get("seeds") or {})


def points_from_records(study: Study, t_index: int, sel: pa.Table,
                        logged: set[int]) -> list[PointLog]:
    """The fixed load points of target ``t_index`` that have records but no log entry (the
    run was stopped inside them), rebuilt from those records and marked interrupted."""
    out = []
    for spec in point_specs(study, t_index, max(1, study.tasks.count)):
        if spec.index in logged:
            continue
        rows = sel.filter(pc.equal(sel["load_index"], spec.index))
        if rows.num_rows == 0:
            continue
        sent = pc.min(rows["sent_ns"]).as_py()
        done = pc.max(rows["done_ns"]).as_py()
        ok = rows.num_rows - len(rows["error_kind"].drop_null())
        out.append(PointLog(
            index=spec.index, label=spec.label, kind=spec.kind, level=spec.level,
            requested_rate_rps=None if spec.family.loop == "closed" else spec.level,
            started_ns=int(sent or 0), ended_ns=int(done or 0), sent=rows.num_rows,
            completed=ok, errors=rows.num_rows - ok, stopped_by="interrupted"))
    return out


def _entries_of(tlog: TargetLog) -> list[PointLog]:
    return [*tlog.points, *(p for p in (tlog.replay, tlog.interruption) if p is not None)]


def _resume_note(r: ResumeLog) -> str:
    again = ", ".join(r.remeasured) or "nothing"
    aside = (f"; {r.set_aside} record(s) of the unfinished points were moved to "
             "superseded/ and are not analysed" if r.set_aside else "")
    return (f"resumed ({r.started_utc}, session {r.session}): {len(r.kept)} finished "
            f"point(s) kept from before, measured again: {again}{aside}")


def rebuild_damaged(run_dir: Path, exc: DamagedResult) -> RunResult:
    """A run whose result.json is damaged: move it to ``quarantine/``, rebuild the result
    from the journal and records, and save it in its place; say so in its warnings."""
    if not (run_dir / "study.yaml").exists():
        raise AccevalError(f"{exc}; but {run_dir} has no study.yaml to rebuild it from"
                           "\n  hint: restore result.json from a copy") from None
    moved = quarantine_result(run_dir)
    result = _rebuild_killed(run_dir)
    result.warnings[0] = (f"{RESULT_FILE} was damaged ({exc.problem}): moved to "
                          f"{moved.relative_to(run_dir)}; " + result.warnings[0])
    result.save(run_dir)
    return result


def _rebuild_killed(run_dir: Path) -> RunResult:
    """A run killed before it wrote result.json: rebuild what its records support.

    With the run's journal (runlog.json, saved after every point) every finished point,
    sweep, replay and interruption comes back exactly, and the point it was killed inside
    from its records. Without one (acceval before 0.2) the fixed load points are recognised
    from the study; sweep, replay and fault points are left out (their plans are not in the
    records).
    """
    study = load_study(run_dir / "study.yaml")
    problems: list[str] = []
    rows_of = analysis_records(run_dir, problems)
    journal = _journal(run_dir)
    if journal is not None:
        # A journal kept after the run finished holds its final log (pipeline.measure._measure_run).
        finished = journal.log.finished_utc is not None
        log = journal.log if finished else journal.log.model_copy(update={"interrupted": True})
        result = with_problems(analyze(study, log, rows_of, read_samples(run_dir),
                                       base_dir=Path(journal.study_dir),
                                       agent_records=read_agent_records(run_dir),
                                       run_dir=run_dir), problems)
        result.warnings.insert(0, "rebuilt from the run's journal and records" + (
            "" if finished else
            ": the run ended before writing result.json (killed, or its disk was full); "
            f"`acceval run --resume {run_dir}` measures what it did not finish"))
        return result
    created = dt.datetime.fromtimestamp((run_dir / "study.yaml").stat().st_mtime, dt.UTC)
    log = RunLog(run_id=run_dir.name, created_utc=created.isoformat(), interrupted=True,
                 rebuilt=True)
    for t_index, tspec in enumerate(study.targets):
        tl = TargetLog(name=tspec.name)
        tl.points = points_from_records(study, t_index, rows_of(tspec.name), logged=set())
        if not tl.points:
            tl.failure = "not reached before the run ended"
        log.targets.append(tl)
    result = with_problems(analyze(study, log, rows_of, read_samples(run_dir),
                                   base_dir=run_dir), problems)
    result.warnings.insert(0, "rebuilt from records.parquet: the run ended before writing "
                           "result.json (killed); only the fixed load points are shown")
    return result


def _journal(run_dir: Path) -> Journal | None:
    path = run_dir / JOURNAL_FILE
    if not path.exists():
        return None
    try:
        return Journal.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # torn or foreign: fall back to the records alone


__all__ = ["analysis_records", "analyze", "endpoint_log", "environment", "load_result",
           "plan_study", "slo_text", "software", "study_catalog"]
