"""``acceval import`` for agent benchmarks: τ-bench, tau2 and AgentLab results into a run
folder whose agents part holds the imported trials (``agents/imported.parquet``).

The run folder is an ordinary one: its study has an ``agents:`` section naming each imported
agent (or is the study given with ``--study``), its result's agents section counts the
trials (:mod:`acceval.agents.imported`), and ``acceval report --recompute`` recounts them.
Token prices declared at import are kept in the agents log, a user assumption.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acceval.agents.imported import TOOL_NAMES
from acceval.agents.store import AgentsLog, ImportedTrial, TokenPrices, write_imported
from acceval.agents.store import read as read_agent_records
from acceval.analysis import analyze
from acceval.errors import UsageError
from acceval.interchange import agentbench
from acceval.interchange._common import (
    Unmapped,
    read_json,
    start_import,
    target_name,
    unmapped_said,
    write_report,
)
from acceval.results.runlog import ImportLog
from acceval.results.store import read_records
from acceval.run_result import RunResult
from acceval.study import Study, load_study, study_from_dict, study_to_yaml

AGENT_FORMATS = ("tau-bench", "tau2", "agentlab")
_WHAT = {"tau-bench": "τ-bench results file", "tau2": "tau2 results JSON",
         "agentlab": "AgentLab summary_info.json"}
_UNKNOWN_URL = "http://imported.invalid/v1"


def _tau2_run(path: Path) -> tuple[Path, Any, list[str] | None]:
    """A tau2 run in either layout: the metadata file, the ``Results`` data with every
    simulation in it, and (``dir`` layout) each simulation's file, as the trials name it."""
    meta_path, sims_dir = agentbench.tau2_layout(path)
    if path.is_dir() and not meta_path.is_file():
        raise UsageError(f"{path}: a folder without {agentbench.TAU2_RESULTS_FILE}, so not a "
                         "tau2 run (tau2 saves data/simulations/<run>/results.json)")
    data = read_json(meta_path, _WHAT["tau2"])
    if sims_dir is None:
        return meta_path, data, None
    files = sorted(sims_dir.glob("*.json"))
    problem = agentbench.tau2_index_problem(data, [f.stem for f in files])
    if problem is not None:
        raise UsageError(f"{meta_path}: {problem} (in {sims_dir}); tau2 would not load it")
    if not isinstance(data, dict):
        raise UsageError(f"{meta_path}: not a tau2 results file (not a JSON object)")
    data = {**data, "simulations": [read_json(f, "tau2 simulation JSON") for f in files]}
    return meta_path, data, [f"{agentbench.TAU2_SIMULATIONS_DIR}/{f.name}" for f in files]


def _read(fmt: str, path: Path, unmapped: Unmapped, versions: set[str]) -> list[ImportedTrial]:
    files: list[str] | None = None
    if fmt == "tau2":
        path, data, files = _tau2_run(path)
    elif path.is_dir():
        raise UsageError(f"{path}: a folder; --format {fmt} reads files (give the "
                         f"{_WHAT[fmt]} itself)")
    else:
        data = read_json(path, _WHAT[fmt])

    def tau2() -> list[ImportedTrial]:
        trials, version = agentbench.read_tau2(path, data, unmapped, files)
        if version:
            versions.add(version)
        return trials

    readers: dict[str, Callable[[], list[ImportedTrial]]] = {
        "tau-bench": lambda: agentbench.read_tau_bench(path, data, unmapped),
        "tau2": tau2,
        "agentlab": lambda: [agentbench.read_agentlab(path, data, unmapped)],
    }
    try:
        return readers[fmt]()
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise UsageError(f"{path}: not a {_WHAT[fmt]} acceval can read: {exc}; check "
                         "--format") from exc


def import_agent_files(files: list[Path], fmt: str, *, study_path: Path | None,
                       out_dir: Path, target: str | None, prices: TokenPrices | None
                       ) -> tuple[RunResult, Path]:
    """Read ``files`` (all in ``fmt``) into a new run folder under ``out_dir``."""
    unmapped, versions = Unmapped(), set[str]()
    trials: list[ImportedTrial] = []
    for f in files:
        trials += _read(fmt, Path(f), unmapped, versions)
    if not trials:
        raise UsageError(f"{', '.join(map(str, files))}: no trial found")
    for t in trials:
        t.target = target_name(target or t.target)
    if fmt == "agentlab":
        agentbench.number_agentlab_trials(trials)
    study = _study(fmt, trials, study_path)
    run_dir, log = start_import(study.name, study_to_yaml(study), out_dir)
    log.imported = ImportLog(format=fmt, files=[str(f) for f in files],
                             tool_versions=sorted(versions),
                             unmapped=dict(sorted(unmapped.counts.items())))
    log.notes.append(_note(fmt, trials, log.imported))
    write_imported(run_dir, trials, AgentsLog(
        targets={t.target: f"imported from {TOOL_NAMES[fmt]}" for t in trials},
        token_prices=prices))
    base = study_path.parent if study_path is not None else run_dir
    result = analyze(study, log, read_records(run_dir), base_dir=base,
                     agent_records=read_agent_records(run_dir), run_dir=run_dir)
    result.save(run_dir)
    write_report(result, run_dir)
    return result, run_dir


def _study(fmt: str, trials: list[ImportedTrial], study_path: Path | None) -> Study:
    names = list(dict.fromkeys(t.target for t in trials))
    if study_path is not None:
        study = load_study(study_path)
        have = {t.name for t in study.agents.targets} if study.agents else set()
        missing = [n for n in names if n not in have]
        if missing:
            raise UsageError(
                f"{study_path}: the imported files name agent(s) {', '.join(missing)}, which "
                f"the study's agents.targets do not have (its agents: "
                f"{', '.join(sorted(have)) or 'none'}); add them or pass --target NAME")
        return study
    per_task: dict[tuple[str, str], int] = {}
    for t in trials:
        per_task[(t.target, t.task_id)] = per_task.get((t.target, t.task_id), 0) + 1
    data: dict[str, Any] = {
        "name": f"imported-{fmt}",
        "description": f"Agent trials measured by {TOOL_NAMES[fmt]}, imported by acceval "
                       "import (docs/agents.md).",
        "agents": {"trials": min(max(per_task.values()), 1000),
                   "targets": [{"name": n, "endpoint": {"base_url": _UNKNOWN_URL, "model": n}}
                               for n in names]}}
    return study_from_dict(data, source=f"the study made for the imported {fmt} files")


def _note(fmt: str, trials: list[ImportedTrial], imp: ImportLog) -> str:
    agents = len({t.target for t in trials})
    tasks = len({(t.target, t.task_id) for t in trials})
    versions = f" ({', '.join(imp.tool_versions)})" if imp.tool_versions else ""
    text = (f"imported from {TOOL_NAMES[fmt]}{versions}: {agents} agent(s), {len(trials)} "
            f"trial(s) of {tasks} task(s)")
    return text + unmapped_said(imp.unmapped)


__all__ = ["AGENT_FORMATS", "import_agent_files"]
