"""``acceval import``: peers' result files into a run folder, and ``acceval export``: a run
folder into vLLM bench result files.

An imported run folder is an ordinary one (study.yaml, records.parquet, result.json,
report.html, the runs catalog): the study's costs, quality level, SLO and verdict apply to it,
and ``acceval report --recompute`` and ``--set`` work on it. Its run log says it was
imported (``log.imported``: format, files, every field or line not mapped, counted), and each
point keeps the peer's own figures (``peer``), labelled peer-computed in the report.

This module composes a run (a study, the records, ``analyze``), as the pipeline does, so it
reads the study; the readers of each format do not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acceval.agents.store import TokenPrices
from acceval.analysis import analyze
from acceval.errors import UsageError
from acceval.interchange import aiperf, guidellm, vllm
from acceval.interchange._common import (
    ImportedPoint,
    Unmapped,
    loads,
    read_json,
    read_text,
    start_import,
    target_name,
    unmapped_said,
    write_report,
)
from acceval.interchange.agent_folder import AGENT_FORMATS, import_agent_files
from acceval.results.files import write_text_durable
from acceval.results.records import records_to_table
from acceval.results.runlog import EndpointLog, ImportLog, PointLog, RunLog, TargetLog
from acceval.results.store import RECORDS_FILE, read_records, write_grouped
from acceval.run_result import RunResult
from acceval.study import Study, load_study, study_from_dict, study_to_yaml

FORMATS = ("vllm", "guidellm", "aiperf", *AGENT_FORMATS)
_GAP_NS = 1_000_000_000  # between imported points on the run's timeline
_UNKNOWN_URL = "http://imported.invalid/v1"
# Formats whose files carry the tool's version; vLLM bench's result JSON has no such field,
# so its absence there says nothing.
_VERSIONED = frozenset({"guidellm", "aiperf"})


def _read(fmt: str, path: Path, unmapped: Unmapped) -> list[ImportedPoint]:
    readers: dict[str, Callable[[], list[ImportedPoint]]] = {
        "vllm": lambda: vllm.read(path, _vllm_data(path), unmapped),
        "guidellm": lambda: guidellm.read(path, read_json(path, guidellm.WHAT), unmapped),
        "aiperf": lambda: aiperf.read(path, _text(path), unmapped),
    }
    if fmt not in readers:
        raise UsageError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    try:
        return readers[fmt]()
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise UsageError(f"{path}: not a {fmt} file acceval can read ({exc}); check "
                         "--format") from exc


def _text(path: Path) -> str:
    return read_text(path, "peer tool's result file")


def _vllm_data(path: Path) -> Any:
    """One JSON object, or the JSON lines ``--append-result`` writes."""
    import json

    text = _text(path)
    try:
        return loads(text)
    except json.JSONDecodeError:
        pass
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(loads(line))
            except ValueError as exc:
                raise UsageError(f"{path}: line {n}: not JSON ({exc}); a vLLM bench "
                                 "result is one JSON object or JSON lines") from exc
    return out


def _study(fmt: str, points: list[ImportedPoint], study_path: Path | None) -> Study:
    if study_path is not None:
        study = load_study(study_path)
        names = {t.name for t in study.targets}
        missing = sorted({p.target for p in points} - names)
        if missing:
            raise UsageError(
                f"{study_path}: the imported files name target(s) {', '.join(missing)}, which "
                f"the study does not have (its targets: {', '.join(sorted(names))}); add them "
                "to the study or pass --target NAME")
        return study
    targets: dict[str, dict[str, Any]] = {}
    levels: dict[str, set[float]] = {}
    for p in points:
        targets.setdefault(p.target, {"name": p.target, "endpoint": {
            "base_url": p.base_url or _UNKNOWN_URL, "model": p.model or p.target,
            "api": p.api}})
        levels.setdefault(p.kind, set()).add(p.level)
    keys = {"concurrency": "concurrency", "constant": "constant_rps", "poisson": "poisson_rps",
            "gamma": "gamma_rps"}
    load = [{keys[k]: sorted(int(v) if k == "concurrency" else v for v in vs)}
            for k, vs in levels.items() if k in keys]
    data: dict[str, Any] = {
        "name": f"imported-{fmt}",
        "description": f"Measured by {fmt}, imported by acceval import (docs/metrics.md).",
        "targets": list(targets.values()), "load": load or [{"concurrency": [1]}]}
    slos = [p.slo for p in points]
    if slos and slos[0] is not None and all(s == slos[0] for s in slos):
        data["slo"] = slos[0]  # what the file's goodput was judged on: keep judging it so
    return study_from_dict(data, source=f"the study made for the imported {fmt} files")


def import_files(files: list[Path], fmt: str, *, study_path: Path | None = None,
                 out_dir: Path = Path("runs"), target: str | None = None,
                 token_prices: TokenPrices | None = None) -> tuple[RunResult, Path]:
    """Read ``files`` (all in ``fmt``) into a new run folder under ``out_dir``; analyse it
    with the study (one made from the files when ``study_path`` is None). Agent benchmarks'
    files (``AGENT_FORMATS``) go to the run's agents part, priced by ``token_prices``."""
    if not files:
        raise UsageError("give one or more files to import")
    if fmt in AGENT_FORMATS:
        return import_agent_files(files, fmt, study_path=study_path, out_dir=out_dir,
                                  target=target, prices=token_prices)
    if token_prices is not None:
        formats = ", ".join(AGENT_FORMATS)
        raise UsageError(f"token prices apply to agent benchmarks' files ({formats}), not to "
                         f"--format {fmt}")
    unmapped = Unmapped()
    points: list[ImportedPoint] = []
    for f in files:
        points += _read(fmt, Path(f), unmapped)
    if not points:
        raise UsageError(f"{', '.join(map(str, files))}: no load point found")
    for p in points:
        p.target = target_name(target or p.target)
        for r in p.records:
            r.target = p.target
    study = _study(fmt, points, study_path)
    run_dir, log = start_import(study.name, study_to_yaml(study), out_dir)
    versions = sorted({f"{p.peer.tool} {p.peer.version}" for p in points if p.peer.version})
    records = _place(points, log)
    log.imported = ImportLog(format=fmt, files=[str(f) for f in files], tool_versions=versions,
                             requests=len(records), unmapped=dict(sorted(unmapped.counts.items())))
    log.notes.append(_note(log.imported, points))
    write_grouped(records_to_table(records), run_dir / RECORDS_FILE, "target")
    base = study_path.parent if study_path is not None else run_dir
    result = analyze(study, log, read_records(run_dir), base_dir=base)
    result.save(run_dir)
    write_report(result, run_dir)
    return result, run_dir


def _place(points: list[ImportedPoint], log: RunLog) -> list[Any]:
    """Each point its own load index and stretch of the target's timeline, one after another."""
    out = []
    index: dict[str, int] = {}
    clock: dict[str, int] = {}
    request_id = 0
    for p in points:
        tlog = log.target(p.target)
        if tlog is None:
            tlog = TargetLog(name=p.target, endpoint=EndpointLog(
                base_url=p.base_url or _UNKNOWN_URL, model=p.model or p.target, api=p.api))
            log.targets.append(tlog)
        i = index.get(p.target, 0)
        index[p.target] = i + 1
        if any(q.label == p.label for q in tlog.points):
            p.label = f"{p.label} ({p.peer.file})"  # labels name points: keep them unique
        offset = clock.get(p.target, 0)
        stamps = [v for r in p.records for v in (r.sent_ns, r.done_ns) if v is not None]
        start, end = (min(stamps), max(stamps)) if stamps else (0, 0)
        for r in p.records:
            r.load_index, r.load_label = i, p.label
            r.request_id = request_id
            request_id += 1
            for f in ("scheduled_ns", "sent_ns", "first_byte_ns", "first_token_ns", "done_ns",
                      "finish_ns"):
                v = getattr(r, f)
                if v is not None:
                    setattr(r, f, v - start + offset)
            r.chunk_ns = [c - start + offset for c in r.chunk_ns]
            out.append(r)
        sent = sum(1 for r in p.records if r.sent_ns is not None)
        errors = sum(1 for r in p.records if r.error_kind is not None)
        tlog.points.append(PointLog(
            index=i, label=p.label, kind=p.kind, level=p.level,
            requested_rate_rps=p.requested_rate_rps, started_ns=offset,
            ended_ns=offset + (end - start), sent=sent, completed=sent - errors, errors=errors,
            stopped_by=p.stopped_by, peer=p.peer,
            warmup=sum(1 for r in p.records if r.warmup)))
        clock[p.target] = offset + (end - start) + _GAP_NS
    return out


def _note(imp: ImportLog, points: list[ImportedPoint]) -> str:
    only = [p.label for p in points if p.peer.summary_only]
    versions = ", ".join(imp.tool_versions)
    if not versions and imp.format in _VERSIONED:
        versions = "version not in the files"
    text = (f"imported from {imp.format}{f' ({versions})' if versions else ''}: "
            f"{len(points)} point(s), {imp.requests} request(s)")
    if only:
        text += (f"; {len(only)} point(s) had summaries only (peer-computed figures, no "
                 f"requests: {', '.join(only)})")
    return text + unmapped_said(imp.unmapped, "field value(s) or line(s)")


def export_vllm(run_dir: Path, out_dir: Path) -> list[Path]:
    """Every measured point of the run as a vLLM bench result JSON in ``out_dir``."""
    from acceval.analysis import load_result

    result = load_result(Path(run_dir))
    table = read_records(Path(run_dir))
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, obj in vllm.export_run(result, table):
        written.append(write_text_durable(out_dir / name, vllm.dumps(obj)))
    if not written:
        raise UsageError(f"{run_dir}: no measured load point to export")
    return written
