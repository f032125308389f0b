"""Executing a study: tasks → load points per target → records → summaries → RunResult.

The load generator only stamps and stores; everything in the result is computed afterwards
from the stored records by pure functions (``build_result``), so ``acceval report --recompute``
gives the same numbers from the files alone.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
import time
from contextlib import ExitStack
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval import __version__
from acceval.checks import check_runnable, preflight_study
from acceval.economics import Catalog, load_catalog
from acceval.economics.apply import apply_economics
from acceval.errors import AccevalError, StudyError
from acceval.loadgen.progress import Progress
from acceval.loadgen.runner import PointRun, PointSpec
from acceval.metrics import accuracy, has_correctness, pass_at_1, summarize_point
from acceval.metrics.derive import derive
from acceval.portability import apply_portability
from acceval.probes import ProbeSampler, make_probe, read_samples
from acceval.quality import evaluate_gate
from acceval.results.records import Record
from acceval.results.result import (
    LocalServerInfo,
    PointResult,
    RunResult,
    TargetResult,
)
from acceval.results.store import RecordWriter, read_records
from acceval.scenarios import (
    TargetRun,
    apply_scenarios,
    meta_from_result,
    quality_records,
    run_all,
)
from acceval.study import (
    Endpoint,
    Study,
    apply_overrides,
    load_study,
    study_from_dict,
    study_to_yaml,
)
from acceval.study import Target as TargetSpec
from acceval.targets.openai import OpenAITarget
from acceval.targets.preflight import served_model
from acceval.tasks import Task, score, to_prompt, write_answers_jsonl

_SOFTWARE = ("aiohttp", "numpy", "pyarrow", "pydantic", "duckdb", "uvloop",
             "onnxruntime-genai", "torch", "transformers")


def check_study(path: Path, *, out_dir: Path | None = None) -> tuple[Study, list[str]]:
    """Validate a study and everything a run of it would find late (see acceval.checks)."""
    study = load_study(path)
    ready = check_runnable(study, base_dir=Path(path).parent, out_dir=out_dir, source=str(path))
    return study, ready.notes


def _software() -> dict[str, str]:
    out = {"acceval": __version__, "python": sys.version.split()[0]}
    for name in _SOFTWARE:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def _environment() -> dict[str, Any]:
    return {
        "host": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
    }


def _seed_for(base: int, *path: int) -> int:
    return int(np.random.SeedSequence([base, *path]).generate_state(1)[0])


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


class _Scorer:
    """Joins correctness to each record as it completes, then hands it to the writer."""

    def __init__(self, tasks: list[Task], writer: RecordWriter) -> None:
        self.by_id = {t.id: t for t in tasks}
        self.writer = writer
        self.seen = 0

    def __call__(self, rec: Record) -> None:
        self.seen += 1
        task = self.by_id.get(rec.task_id)
        if task is not None:
            res = score(task, rec.output_text, rec.finish_reason, rec.error_kind)
            if res is not None:
                rec.correct = res.correct
                rec.check_reason = res.reason
                rec.extracted = res.extracted
        self.writer.add(rec)


def _point_specs(study: Study, t_index: int, n_prompts: int) -> list[PointSpec]:
    specs = []
    index = 0
    for f_index, family in enumerate(study.load):
        for l_index, level in enumerate(family.levels):
            seed = _seed_for(study.seed, t_index, f_index, l_index)
            specs.append(PointSpec.from_study(family, level, index, seed, n_prompts,
                                              study.tasks.attempts))
            index += 1
    return specs


def _endpoint_dict(ep: Endpoint) -> dict[str, Any]:
    # The key's *variable name* is fine to record; the key never is.
    return {"base_url": ep.base_url, "model": ep.model, "api": ep.api, "stream": ep.stream,
            "api_key_env": ep.api_key_env}


async def _measure_target(target: OpenAITarget, run: TargetRun,
                          specs: list[PointSpec]) -> dict[str, Any]:
    await target.start()
    try:
        fingerprint = await target.probe()
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
    meta: dict[str, dict[str, Any]] = {}
    prog = Progress(enabled=progress)
    scorer = _Scorer(tasks, writer)
    interrupted = False
    try:
        for t_index, tspec in enumerate(study.targets):
            runs: list[PointRun] = []
            info: dict[str, Any] = {"runs": runs, "fingerprint": {}, "local": None,
                                    "failure": None, "endpoint": None}
            meta[tspec.name] = info
            handles: dict[str, Any] = {}
            with ExitStack() as stack:
                try:
                    if tspec.serve is not None:
                        endpoint, info["local"] = _start_local(tspec, stack, tasks, run_dir,
                                                               handles)
                    else:
                        assert tspec.endpoint is not None
                        endpoint = tspec.endpoint
                    info["endpoint"] = endpoint
                    prompts = [to_prompt(t, api=endpoint.api, max_tokens=study.tasks.max_tokens)
                               for t in tasks]
                    specs = _point_specs(study, t_index, len(prompts))
                    client = OpenAITarget(tspec.name, endpoint)
                    pids = [info["local"].pid] if info["local"] and info["local"].pid else []
                    probe = make_probe(tspec.energy, pids=pids)
                    if probe is not None:
                        sampler = ProbeSampler([probe], run_dir, t0_ns=t0_ns, interval_s=0.25)
                        stack.callback(_stop_sampler, sampler, info)
                        sampler.start()
                    run = TargetRun(
                        study=study, name=tspec.name, t_index=t_index, base_dir=base_dir,
                        target=client, prompts=prompts, sink=scorer, t0_ns=t0_ns,
                        progress=prog, runs=runs, info=info, server=handles.get("server"),
                        respawn=handles.get("respawn"),
                        on_new_server=partial(_stop_later, stack))
                    info["fingerprint"] = _run_async(_measure_target(client, run, specs))
                except StudyError:
                    raise
                except AccevalError as exc:
                    info["failure"] = str(exc)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        prog.close()
        writer.finalize()
    table = read_records(run_dir)
    result = build_result(study, table, meta, run_id=run_dir.name, created=started,
                          t0_ns=t0_ns, interrupted=interrupted, samples=read_samples(run_dir),
                          base_dir=base_dir, run_artifact_checks=True)
    result.save(run_dir)
    _write_outputs(result, run_dir)
    if interrupted:
        raise AccevalError(f"interrupted; what was measured is kept in {run_dir}")
    failed = [t for t in result.targets if t.failure]
    if failed and len(failed) == len(result.targets):
        reasons = "; ".join(f"{t.name}: {t.failure}" for t in failed)
        raise AccevalError(f"no target could be measured ({reasons}); see {run_dir}")
    return result, run_dir


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


def _point_result(spec_run: PointRun, table: pa.Table, study: Study) -> PointResult:
    sel = table.filter(pc.equal(table["load_index"], spec_run.spec.index))
    summary = summarize_point(sel, slo=study.slo, requested_rate_rps=spec_run.requested_rate_rps)
    s = spec_run.spec
    return PointResult(
        index=s.index, label=s.label, kind=s.kind, level=float(s.level),
        requested_rate_rps=spec_run.requested_rate_rps, stopped_by=spec_run.stopped_by,
        sent=spec_run.sent, completed=spec_run.completed, started_ns=spec_run.started_ns,
        ended_ns=spec_run.ended_ns, seeds=dict(spec_run.seeds), summary=summary,
    )


def _stop_sampler(sampler: ProbeSampler, info: dict[str, Any]) -> None:
    sampler.stop()
    info["probe_notes"] = {**sampler.unavailable, **sampler.errors}


def _catalog(study: Study, base_dir: Path | None) -> Catalog:
    user = study.costs.catalog
    if user is None:
        return load_catalog(None)
    path = Path(user) if Path(user).is_absolute() else (base_dir or Path.cwd()) / user
    if not path.exists():
        raise StudyError(f"costs.catalog: no such file {path}",
                         [("costs.catalog", f"{path} does not exist",
                           "give a path relative to the study file")])
    return load_catalog(path)


def build_result(study: Study, table: pa.Table, meta: dict[str, dict[str, Any]], *, run_id: str,
                 created: dt.datetime, t0_ns: int, interrupted: bool,
                 samples: pa.Table | None = None, base_dir: Path | None = None,
                 run_artifact_checks: bool = False) -> RunResult:
    """Every number from stored records (pure apart from reading the clock for finished_utc)."""
    targets: list[TargetResult] = []
    for tspec in study.targets:
        info = meta.get(tspec.name, {"runs": [], "fingerprint": {}, "local": None,
                                     "failure": "not run (interrupted)", "endpoint": None})
        sel = table.filter(pc.equal(table["target"], tspec.name))
        endpoint = info.get("endpoint") or tspec.endpoint
        tr = TargetResult(
            name=tspec.name,
            endpoint=_endpoint_dict(endpoint) if endpoint is not None else {},
            platform=tspec.platform.model_dump(mode="json"),
            fingerprint=info.get("fingerprint") or {},
            local_server=info.get("local"),
            points=[_point_result(r, sel, study) for r in info["runs"]],
            failure=info.get("failure"),
        )
        apply_scenarios(study, tr, sel, info, base_dir)
        if sel.num_rows:
            d = derive(quality_records(sel, info))
            if has_correctness(d):
                tr.accuracy = accuracy(d)
                tr.pass_at_1 = pass_at_1(d)
        targets.append(tr)
    by_name = {t.name: t for t in targets}
    ref = by_name.get(study.quality.relative_to or "")
    for t in targets:
        mean_tokens = _mean_output_tokens(table, t.name)
        t.gate = evaluate_gate(study.quality, t.accuracy,
                               reference=ref.accuracy if ref else None,
                               mean_output_tokens=mean_tokens)
    warnings = [f"{name}: energy probe {probe}: {why}"
                for name, info in meta.items()
                for probe, why in (info.get("probe_notes") or {}).items()]
    result = RunResult(
        run_id=run_id, study_name=study.name, created_utc=created.isoformat(),
        finished_utc=_utc_now().isoformat(), interrupted=interrupted,
        study=study.model_dump(mode="json"),
        environment={**_environment(),
                     "study_dir": str(base_dir.resolve()) if base_dir else None},
        software=_software(),
        seeds={"study": study.seed, "tasks": study.tasks.seed},
        tasks={"source": study.tasks.source, "count": study.tasks.count,
               "attempts": study.tasks.attempts},
        targets=targets,
        warnings=warnings,
    )
    apply_economics(study, result, samples, _catalog(study, base_dir), base_dir=base_dir)
    apply_portability(study, result, base_dir=base_dir or Path.cwd(), records=table,
                      run_artifact_checks=run_artifact_checks)
    return result


def _mean_output_tokens(table: pa.Table, target: str) -> float | None:
    sel = table.filter(pc.and_(pc.equal(table["target"], target), pc.invert(table["warmup"])))
    toks = sel["output_tokens"].drop_null()
    return float(pc.mean(toks).as_py()) if len(toks) else None


def load_result(run_dir: Path, *, recompute: bool = False,
                overrides: list[str] | None = None) -> RunResult:
    """Read result.json, or rebuild every summary from records.parquet with ``recompute``.

    ``overrides`` (``path=value``, e.g. ``targets.h200.price.usd_per_hour=40``) change the
    study before recomputing: a what-if on prices, SLOs or boundaries without re-running.
    """
    from acceval.results.result import RESULT_FILE

    path = Path(run_dir) / RESULT_FILE
    if not path.exists():
        if (Path(run_dir) / "study.yaml").exists():
            return _rebuild_killed(Path(run_dir))
        raise AccevalError(f"{run_dir}: no {RESULT_FILE} and no study.yaml; is this a run "
                           "folder?")
    stored = RunResult.load(run_dir)
    if not recompute and not overrides:
        return stored
    study = study_from_dict(apply_overrides(stored.study, overrides or []),
                            source=f"{run_dir} with overrides")
    table = read_records(run_dir)
    meta: dict[str, dict[str, Any]] = {}
    for t in stored.targets:
        runs = [PointRun.from_result(p) for p in t.points]
        meta[t.name] = {"runs": runs, "fingerprint": t.fingerprint, "local": t.local_server,
                        "failure": t.failure,
                        "endpoint": Endpoint(**{k: v for k, v in t.endpoint.items()})
                        if t.endpoint else None, **meta_from_result(t)}
    created = dt.datetime.fromisoformat(stored.created_utc)
    fresh = build_result(study, table, meta, run_id=stored.run_id, created=created, t0_ns=0,
                         interrupted=stored.interrupted, samples=read_samples(run_dir),
                         base_dir=Path(stored.environment.get("study_dir") or run_dir))
    _keep_artifact_checks(stored, fresh)
    if overrides:
        fresh.warnings.insert(0, "what-if: recomputed from the stored records with "
                              + ", ".join(overrides))
    return fresh


def _rebuild_killed(run_dir: Path) -> RunResult:
    """A run killed before it wrote result.json: rebuild what its records support.

    The fixed load points are recognised from the study; sweep, replay and fault points are
    left out (their plans are not in the records).
    """
    study = load_study(run_dir / "study.yaml")
    table = read_records(run_dir)
    meta: dict[str, dict[str, Any]] = {}
    for t_index, tspec in enumerate(study.targets):
        sel = table.filter(pc.equal(table["target"], tspec.name))
        runs = []
        for spec in _point_specs(study, t_index, max(1, study.tasks.count)):
            rows = sel.filter(pc.equal(sel["load_index"], spec.index))
            if rows.num_rows == 0:
                continue
            sent = pc.min(rows["sent_ns"]).as_py()
            done = pc.max(rows["done_ns"]).as_py()
            ok = rows.num_rows - len(rows["error_kind"].drop_null())
            runs.append(PointRun(
                spec=spec, requested_rate_rps=None if spec.kind == "concurrency" else spec.level,
                started_ns=int(sent or 0), ended_ns=int(done or 0), sent=rows.num_rows,
                completed=ok, errors=rows.num_rows - ok, stopped_by="interrupted", seeds={}))
        meta[tspec.name] = {"runs": runs, "fingerprint": {}, "local": None,
                            "failure": None if runs else "not reached before the run ended",
                            "endpoint": None}
    created = dt.datetime.fromtimestamp((run_dir / "study.yaml").stat().st_mtime, dt.UTC)
    result = build_result(study, table, meta, run_id=run_dir.name, created=created, t0_ns=0,
                          interrupted=True, samples=read_samples(run_dir), base_dir=run_dir)
    result.warnings.insert(0, "rebuilt from records.parquet: the run ended before writing "
                           "result.json (killed); only the fixed load points are shown")
    return result


def _keep_artifact_checks(stored: RunResult, fresh: RunResult) -> None:
    """Artifact checks load models, so a recompute keeps the verdicts the run measured."""
    for old, new in zip(stored.targets, fresh.targets, strict=True):
        old_level = ((old.portability or {}).get("levels") or {}).get("artifact")
        levels = (new.portability or {}).get("levels")
        if old_level and levels is not None and old_level.get("verdict") != "not assessed":
            levels["artifact"] = old_level
            if new.portability is not None and old.portability is not None:
                new.portability["level"] = old.portability.get("level")


__all__ = ["build_result", "check_study", "execute", "execute_file", "load_result"]
