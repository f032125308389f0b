"""Fail before the load: everything a run would otherwise find late, found first.

``acceval validate`` and ``acceval run`` both call :func:`check_runnable` before any load is
sent: task files and how each target receives them, catalog ids and prices, demand files,
the interrupted load point, local engines (name, options, extras, model files), the report
extra, a writable output folder, every training log (exists, readable, holds data), and
for an ``agents:`` section a headless Chromium that starts. Every problem is named with its
field path and a fix, all at once. :func:`preflight_study` then asks every remote endpoint
whether it answers and lists its model (local servers are asked once they have started).

This module composes the concepts' own checks; each check lives with what it checks
(``engines.check_engine``, ``economics.catalog``, ``capacity.profile``, ...).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from acceval.agents.spec import AgentTarget
from acceval.economics.catalog import Catalog, load_study_catalog
from acceval.engines.base import check_engine
from acceval.errors import Problem, StudyError, UsageError
from acceval.interruption.spec import point_problem
from acceval.study import LocalServer, Study, load_study
from acceval.targets.spec import Endpoint, header_value_problem
from acceval.tasks import Task, load_tasks, to_prompt


@dataclass(frozen=True, slots=True)
class Ready:
    """What the checks loaded (so a run does not load it twice) and what they noticed."""

    tasks: list[Task]
    notes: list[str]


def _problems_of(exc: StudyError, where: str, hint: str = "") -> list[Problem]:
    return list(exc.problems) or [(where, str(exc), hint)]


def _guarded(where: str, check: Callable[[], list[Problem]], hint: str) -> list[Problem]:
    try:
        return check()
    except StudyError as exc:
        return _problems_of(exc, where, hint)


def _tasks(study: Study, base_dir: Path) -> tuple[list[Task], list[Problem]]:
    try:
        return load_tasks(study.tasks, base_dir=base_dir), []
    except StudyError as exc:
        return [], _problems_of(exc, "tasks.source")


def _prompts(study: Study, tasks: list[Task]) -> list[Problem]:
    out = []
    for i, t in enumerate(study.targets):
        api = t.endpoint.api if t.endpoint is not None else "completions"
        try:
            for task in tasks:
                to_prompt(task, api=api, max_tokens=study.tasks.max_tokens)
        except StudyError as exc:
            where = f"targets[{i}].endpoint.api" if t.endpoint else f"targets[{i}]"
            out.append((where, str(exc), f"target '{t.name}' speaks the {api} API"))
    return out


def _timed(study: Study, tasks: list[Task]) -> list[Problem]:
    """A trace replay sends each task at its own time: every task must have one."""
    if not tasks or all(t.at_ms is not None for t in tasks):
        return []
    return [(f"load[{i}].{fam.levels_key}", "replays task timestamps, and these tasks have "
             "none", "set tasks.source to mooncake:PATH (a timestamped trace)")
            for i, fam in enumerate(study.load) if fam.timed_by_tasks]


def _prices(study: Study, catalog: Catalog) -> list[Problem]:
    out = []
    for i, t in enumerate(study.targets):
        if t.price is None:
            continue
        pid = t.price.catalog
        if pid is not None and pid not in catalog.prices:
            close = difflib.get_close_matches(pid, list(catalog.prices), n=1)
            guess = f"did you mean '{close[0]}'? " if close else ""
            out.append((f"targets[{i}].price.catalog", f"no price '{pid}' in the catalog",
                        f"{guess}known ids: {', '.join(sorted(catalog.prices))}; or add it to "
                        "a costs.catalog file"))
            continue
        from acceval.economics.inputs import resolve_rate

        try:
            resolve_rate(t.name, t.price, catalog, t.platform.hardware)
        except StudyError as exc:
            out.append((f"targets[{i}].price", str(exc), ""))
    return out


def _hardware(study: Study, catalog: Catalog) -> list[Problem]:
    out = []
    for i, t in enumerate(study.targets):
        hw = t.platform.hardware
        why = None if hw is None else catalog.hardware_problem(hw)
        if why is not None:
            out.append((f"targets[{i}].platform.hardware", why.split(";")[0],
                        why.partition("; ")[2]))
    return out


def _economics(study: Study, base_dir: Path) -> list[Problem]:
    try:
        catalog = load_study_catalog(study.costs.catalog, base_dir)
    except StudyError as exc:
        return _problems_of(exc, "costs.catalog", "fix the catalog file named here")
    return _hardware(study, catalog) + _prices(study, catalog)


def _claims(study: Study, base_dir: Path) -> list[Problem]:
    if study.claims is None:
        return []
    from acceval.claims import gather

    ids = {c.id for c, _ in gather(study.claims, base_dir)}
    return [(f"claims.check[{i}].claim", f"no claim '{c.claim}' in the ledger",
             f"known ids: {', '.join(sorted(ids))}")
            for i, c in enumerate(study.claims.check) if c.claim not in ids]


def _training_inputs(study: Study, base_dir: Path) -> list[Problem]:
    """Every training log and trace the analysis would read opens and parses, within the
    bounded reader's limits (a device, a FIFO, a bomb or a deep document is named here,
    before anything runs)."""
    from acceval.training.ingest import read_log
    from acceval.training.trace import read_trace

    if study.training is None:
        return []
    out: list[Problem] = []
    for i, p in enumerate(study.training.platforms):
        if p.logs is None:
            continue
        for j, r in enumerate(p.logs.runs):
            where = f"training.platforms[{i}].logs.runs[{j}]"
            try:
                read_log(base_dir / r.path, p.logs.format, p.logs.columns)
            except StudyError as exc:
                out.append((f"{where}.path", str(exc).splitlines()[0],
                            "name a regular, UTF-8 log file of the declared format"))
            if r.trace is not None:
                try:
                    read_trace(base_dir / r.trace, r.trace_format)
                except (OSError, ValueError) as exc:
                    out.append((f"{where}.trace", str(exc).splitlines()[0],
                                "name a Kineto JSON(.gz) or Neuron profiler JSON trace"))
    return out


def _once(contents: list[Problem], unreadable: list[Problem]) -> list[Problem]:
    """The logs' content problems without those of a log already named unreadable: the
    bounded read above names it with its own field; the content check would name it again
    (with the same field, or the section's when the bounded reader refused it)."""
    named = {field for field, _, _ in unreadable}
    return [pr for pr in contents if pr[0] not in named
            and not (unreadable and pr[0] == "training.platforms[].logs")]


def _plan(study: Study, catalog: Catalog) -> list[Problem]:
    """Every target's plan can be made: its model resolves and its precisions are known
    (the plan is computed here without a run, so the analysis cannot fail on it later)."""
    if study.plan is None:
        return []
    from acceval.claims import PlanTarget, plan_target

    for t in study.targets:
        plan_target(study.plan, PlanTarget(
            name=t.name, hardware=t.platform.hardware, chips=t.platform.chips,
            precision=t.platform.precision or (t.serve.precision if t.serve else None)),
            catalog.chip(t.platform.hardware))
    return []


def _demand(study: Study, base_dir: Path) -> list[Problem]:
    if study.demand is None:
        return []
    from acceval.capacity.replay import replay_profile

    profile = replay_profile(study.demand, base_dir)
    if study.demand.replay is not None and not profile.mean_rps > 0:
        return [("demand.replay", "the profile's rate is 0 in every hour; nothing to replay",
                 "give the profile a busy hour, or remove demand.replay")]
    return []


def _labels(study: Study) -> list[str]:
    return [family.label(level) for family in study.load for level in family.levels]


def _interruption(study: Study) -> list[Problem]:
    if study.interruption is None:
        return []
    from acceval.capacity.replay import REPLAY_LABEL

    has_replay = study.demand is not None and study.demand.replay is not None
    msg = point_problem(study.interruption, _labels(study), replay_label=REPLAY_LABEL,
                        has_replay=has_replay)
    return [] if msg is None else [("interruption.point", msg, "")]


def _engine_path(i: int, serve: LocalServer, option: str) -> str:
    if not option:
        return f"targets[{i}].serve.engine"
    if option in ("model", "precision") and getattr(serve, option) is not None:
        return f"targets[{i}].serve.{option}"
    return f"targets[{i}].serve.options.{option}"


def _engines(study: Study) -> list[Problem]:
    out = []
    for i, t in enumerate(study.targets):
        if t.serve is None:
            continue
        for option, msg, hint in check_engine(t.serve.engine, t.serve.engine_options()):
            out.append((_engine_path(i, t.serve, option), msg, hint))
    for i, a in enumerate(study.agents.targets if study.agents is not None else []):
        if a.serve is None:
            continue
        for option, msg, hint in check_engine(a.serve.engine, a.serve.options):
            where = f"agents.targets[{i}].serve." + (f"options.{option}" if option
                                                      else "engine")
            out.append((where, msg, hint))
    return out


def _agent_scenarios(study: Study, base_dir: Path) -> list[Problem]:
    """The agents' scenario set loads (a scenario file validates) and ``only`` names its
    scenarios."""
    if study.agents is None:
        return []
    from acceval.agents.sets import load_set, selected

    try:
        selected(load_set(study.agents.scenarios, base_dir), study.agents.only)
    except StudyError as exc:
        return list(exc.problems)
    except UsageError as exc:  # an unknown pack
        return [("agents.scenarios", str(exc), "")]
    return []


def _agent_programs(study: Study) -> list[Problem]:
    """Each agent program (``agents.targets[].command``) can be started: its program is
    found, and the MCP library the tools are served with is installed."""
    out: list[Problem] = []
    for i, a in enumerate(study.agents.targets if study.agents is not None else []):
        if a.command is None:
            continue
        where = f"agents.targets[{i}].command (target {a.name})"
        program = a.command.argv[0]
        found = shutil.which(program) if os.sep not in program else (
            program if os.access(program, os.X_OK) else None)
        if found is None:
            out.append((where, f"the program {program!r} is not found or not executable",
                        "give its full path, or install it on PATH"))
        from acceval.agents.toolserver import missing

        why = missing()
        if why is not None:
            out.append((where, why, ""))
    return out


def browser_check(study: Study, *, launch: bool = True) -> tuple[list[Problem], list[str]]:
    """For an ``agents:`` section: can the browser start? When it cannot, a run skips the
    agents part and measures the rest (a note, said up front); a study with nothing else to
    measure would run for nothing, so there it is a problem. ``launch``: start it headless
    and stop it (1-2 s), else only look Chromium and playwright up."""
    if study.agents is None:
        return [], []
    from acceval.agents.browser import start_problem, unavailable

    why = start_problem() if launch else unavailable()
    if why is None:
        return [], []
    if study.targets or study.training is not None:
        return [], [f"agents: the browser cannot start ({why}); `acceval run` will measure "
                    "the rest of the study and skip the agents part"]
    return [("agents", f"the browser cannot start: {why}",
             "the study measures nothing but agents, so the run would stop here; install "
             "what is named and check again")], []


def _report() -> list[Problem]:
    if importlib.util.find_spec("plotly") is None:
        return [("output", "a run writes report.html, whose charts need the 'plotly' package",
                 "pip install 'acceval[report]'")]
    return []


#: Free space a run folder needs before the load: its records (compressed, about 50 bytes
#: a request against the mock and a few hundred with real answers), result.json and
#: report.html (about 5 MB, the charts' library included). A run that fills the disk later
#: stops cleanly and keeps what it wrote (docs/reliability.md).
MIN_FREE_BYTES = 64 * 2**20


#: Kernel and device file systems: folders there look writable and are not for run folders.
SYSTEM_DIRS = tuple(Path(p) for p in ("/proc", "/sys", "/dev"))


def _writable(root: Path, where: str) -> list[Problem]:
    real = root.resolve()
    system = next((d for d in SYSTEM_DIRS if real == d or d in real.parents), None)
    if system is not None:
        return [(where, f"{root} is under {system}, a system file system",
                 "choose a folder for run folders")]
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe == root and not root.is_dir():
        return [(where, f"{root} is a file, not a folder", "choose a folder for run folders")]
    if not probe.is_dir():
        return [(where, f"cannot create {root}: {probe} is a file",
                 "choose a folder for run folders")]
    try:  # a real write: permission bits do not tell a read-only mount or a full disk
        fd, name = tempfile.mkstemp(prefix=".acceval-write-check-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return [(where, f"cannot write into {probe} ({exc.strerror or exc})",
                 "choose a folder you can write to, on a disk with room")]
    free = shutil.disk_usage(probe).free
    if free < MIN_FREE_BYTES:
        return [(where, f"only {free / 2**20:.1f} MiB free on the disk of {probe}; a run "
                 f"needs at least {MIN_FREE_BYTES // 2**20} MiB (records, result, report)",
                 "free some space or choose a folder on another disk")]
    return []


def _output(study: Study, base_dir: Path, out_dir: Path | None) -> list[Problem]:
    if out_dir is not None:
        return _writable(Path(out_dir), "--out")
    return _writable(base_dir / study.output.dir, "output.dir")


#: Descriptors a run needs besides its connections: records and sample parts, server logs,
#: probes, the catalog, the interpreter's own files.
FD_MARGIN = 64


def descriptor_limit() -> int | None:
    """How many files this process may open (the soft RLIMIT_NOFILE); None where unknown."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _descriptors(study: Study, limit: int | None) -> list[Problem]:
    """A closed loop holds one connection per request in flight: more than the process may
    open would fail as client errors mid-run, so it is said before any load."""
    if limit is None:
        return []
    out = []
    for i, fam in enumerate(study.load):
        if fam.loop == "open":
            # Its need is the rate times the latency, unknown before the run; what bounds it
            # is max_in_flight. Set by hand above the limit, it is a problem; the default is
            # lowered to what fits at run time (in_flight_cap, said in the notes).
            if "max_in_flight" in fam.model_fields_set and fam.max_in_flight + FD_MARGIN > limit:
                out.append((f"load[{i}].max_in_flight",
                            f"{fam.max_in_flight} requests in flight need about "
                            f"{fam.max_in_flight + FD_MARGIN} open files; this process may "
                            f"open {limit}",
                            f"raise the limit (ulimit -n {fam.max_in_flight + FD_MARGIN}) or "
                            f"set max_in_flight to {limit - FD_MARGIN} or less"))
            continue
        top = int(max(fam.levels))
        if top + FD_MARGIN > limit:
            out.append((f"load[{i}].{fam.levels_key}",
                        f"{top} requests in flight need about {top + FD_MARGIN} open files; "
                        f"this process may open {limit}",
                        f"raise the limit (ulimit -n {top + FD_MARGIN}, or more) or lower "
                        "the concurrency"))
    return out


def in_flight_cap() -> int | None:
    """The most requests an open-loop point may hold in flight with this process's
    open-files limit (None: no limit known)."""
    limit = descriptor_limit()
    return None if limit is None else max(1, limit - FD_MARGIN)


def _keys(study: Study) -> list[Problem]:
    """An API key that cannot go into a header would fail every request; the key itself is
    never shown."""
    out = []
    for i, t in enumerate(study.targets):
        env = t.endpoint.api_key_env if t.endpoint else None
        problem = header_value_problem(os.environ.get(env) or "") if env else None
        if problem is not None:
            out.append((f"targets[{i}].endpoint.api_key_env", f"the value of {env} {problem}",
                        f"export {env} with the key as it was issued"))
    return out


def _notes(study: Study) -> list[str]:
    notes = []
    cap = in_flight_cap()
    for i, fam in enumerate(study.load):
        if cap is not None and fam.loop == "open" and fam.max_in_flight > cap:
            notes.append(f"load[{i}]: at most {cap} requests in flight (this process's "
                         f"open-files limit, not the default max_in_flight "
                         f"{fam.max_in_flight}); sends past it wait, and show as schedule lag")
    for t in study.targets:
        env = t.endpoint.api_key_env if t.endpoint else None
        if env and env not in os.environ:
            notes.append(f"targets[{t.name}]: environment variable {env} is not set "
                         "(needed to run)")
    return notes


def check_runnable(study: Study, *, base_dir: Path, out_dir: Path | None = None,
                   source: str = "study", launch_browser: bool = True) -> Ready:
    """Check everything a run of ``study`` would otherwise find after sending load; raise
    one :class:`StudyError` naming every problem. ``base_dir`` is the study file's folder,
    ``out_dir`` the run's ``--out`` (default: ``output.dir`` under ``base_dir``).
    ``launch_browser`` False: the agents' browser is looked up, not started (a run whose
    browser then fails to start skips the agents part with a note and measures the rest)."""
    tasks, problems = _tasks(study, base_dir)
    problems += _prompts(study, tasks)
    problems += _timed(study, tasks)
    problems += _economics(study, base_dir)
    problems += _guarded("claims", lambda: _claims(study, base_dir), "")
    problems += _guarded("plan", lambda: _plan(study, load_study_catalog(
        study.costs.catalog, base_dir)), "")
    problems += _guarded("demand.profile", lambda: _demand(study, base_dir),
                         "a CSV has the header hour,rps or hour,weight (docs/capacity.md)")
    problems += _interruption(study)
    unreadable_logs = _training_inputs(study, base_dir)
    problems += unreadable_logs
    problems += _engines(study)
    problems += _agent_programs(study)
    problems += _agent_scenarios(study, base_dir)
    problems += _report()
    problems += _keys(study)
    problems += _output(study, base_dir, out_dir)
    problems += _descriptors(study, descriptor_limit())
    problems += _scale_out(study)
    if study.training is not None:
        from acceval.training.checks import log_problems

        problems += _once(log_problems(study.training, base_dir), unreadable_logs)
    browser_problems, browser_notes = browser_check(study, launch=launch_browser)
    problems += browser_problems
    if problems:
        raise StudyError(f"{source}: {len(problems)} problem(s) that the run would hit",
                         problems)
    return Ready(tasks, _notes(study) + browser_notes)


def check_study(path: Path, *, out_dir: Path | None = None) -> tuple[Study, list[str]]:
    """Validate a study file and everything a run of it would find late: the study and the
    notes to show (``acceval validate``)."""
    study = load_study(path)
    ready = check_runnable(study, base_dir=Path(path).parent, out_dir=out_dir, source=str(path))
    return study, ready.notes


def preflight_study(study: Study) -> None:
    """Ask every remote endpoint whether it answers and lists its model, every agent
    program's proxied model (``command.model``) whether it answers, and the Ray cluster
    (``execution.address``) whether it listens; raise naming what does not."""
    from acceval.targets.preflight import preflight  # the HTTP client: only when asked

    agents = study.agents.targets if study.agents is not None else []
    preflight([(t.name, t.endpoint) for t in study.targets
               if t.serve is None and t.endpoint is not None]
              + [(f"agents.targets[{a.name}]", a.endpoint) for a in agents
                 if a.endpoint is not None], _proxied_models(agents))
    ex = study.execution
    if ex.backend == "ray" and ex.address is not None:
        from acceval.scaleout.ray_backend import reachable

        reachable(ex.address)


def _proxied_models(agents: list[AgentTarget]) -> list[tuple[str, str, Endpoint]]:
    """The model upstream of each agent program that has one, as the preflight asks it (with
    its key, like the recording proxy): where to name it, its field, the endpoint."""
    out = []
    for i, a in enumerate(agents):
        m = a.command.model if a.command is not None else None
        if m is not None:
            field = f"agents.targets[{i}].command.model.base_url"
            out.append((f"{field} (target {a.name})", field, Endpoint(
                base_url=m.base_url, model="", api_key_env=m.api_key_env,
                timeout_s=m.timeout_s)))
    return out


def _scale_out(study: Study) -> list[Problem]:
    if study.execution.backend != "ray" or importlib.util.find_spec("ray") is not None:
        return []
    return [("execution.backend", "ray, but Ray is not installed",
             "pip install 'acceval[ray]', or set execution.backend: local")]
