"""Specs are leaves: each concept owns its section of the study file, `study` composes them,
and no concept imports `study` or `pipeline` (not even for type hints), so there is no
import loop to dodge. Imports are read with `ast`, including those inside functions and
`if TYPE_CHECKING:` blocks."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "acceval"

# The modules that compose a study out of the concepts' specs, or a run out of the stages.
COMPOSERS = {
    "acceval.study", "acceval.pipeline", "acceval.cli", "acceval.demo", "acceval.docs",
    "acceval.checks", "acceval.analysis", "acceval._api",
    # What one target runs (fixed points, sweep, replay, interruption) reads the whole study.
    "acceval.scenarios",
    # An imported run is composed like a measured one: a study, the records, the analysis.
    "acceval.interchange.folder", "acceval.interchange.agent_folder",
}
UPPER = {"acceval.study", "acceval.pipeline"}
# The pipeline's parts (the run, one target, the Ray wiring, signals, the disk guard, the
# journal, resume) compose a run as the pipeline does; they count as it.
PIPELINE = "acceval.pipeline"
ARRIVAL_KINDS = {"concurrency", "constant", "poisson", "gamma"}
# Files that still compare arrival kinds by name (none: the load families answer for them).
KIND_CHAINS_PENDING: set[str] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
PIPELINE_PARTS = {n for n in MODULES if n.startswith(f"{PIPELINE}.")}
COMPOSERS |= PIPELINE_PARTS
UPPER |= PIPELINE_PARTS


def _imports(name: str, path: Path) -> set[str]:
    """Every acceval module ``name`` imports, wherever the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from acceval import study` imports a module, not a name.
            subs = {f"{base}.{a.name}" for a in node.names} & set(MODULES)
            found.update(subs if len(subs) == len(node.names) else {base, *subs})
    return {m for m in found if m == "acceval" or m.startswith("acceval.")}


@functools.cache
def imports() -> dict[str, set[str]]:
    """Every module's acceval imports: read when a test asks (parsing every module costs about
    2 s, which every collecting worker paid when it was read at import)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_walk_finds_the_modules_and_their_imports() -> None:
    assert {"acceval.study", "acceval.metrics.spec", "acceval.loadgen.spec"} <= set(MODULES)
    assert "acceval.metrics.spec" in imports()["acceval.study"]


def test_no_concept_imports_the_study_or_the_pipeline() -> None:
    """The composed result holds the study as run (typed), so it alone may import the study;
    never the pipeline."""
    allowed = {name: {"acceval.study"} if name in COMPOSED else set() for name in MODULES}
    offenders = {name: sorted(imports()[name] & UPPER - allowed[name]) for name in MODULES
                 if name not in COMPOSERS and imports()[name] & UPPER - allowed[name]}
    assert offenders == {}
    assert "acceval.study" in imports()["acceval.run_result"]


def test_only_the_front_doors_import_the_pipeline() -> None:
    pipeline = {PIPELINE} | PIPELINE_PARTS
    users = {name for name, imported in imports().items()
             if imported & pipeline and name not in pipeline}
    assert users <= {"acceval.cli", "acceval._api"}


def test_the_pipeline_is_split_by_responsibility() -> None:
    """The run, one target, the Ray wiring, signals, the disk guard, the journal and resume
    are modules of their own, and the parts that need no study or result stay free of them."""
    assert {f"{PIPELINE}.{m}" for m in ("measure", "target_run", "scaleout", "signals",
                                         "disk_guard", "journal", "resume")} <= PIPELINE_PARTS
    assert not {m for m in imports()[f"{PIPELINE}.signals"] if m in MODULES}
    assert {m for m in imports()[f"{PIPELINE}.disk_guard"] if m in MODULES} \
        == {"acceval.results.store"}


def _is_leaf(name: str, seen: frozenset[str] = frozenset()) -> bool:
    """A spec, the errors, or a module that imports only leaves (the plugin loader)."""
    if name.endswith(".spec") or name == "acceval.errors":
        return True
    deps = [m for m in imports().get(name, ()) if m in MODULES and m != name]
    return name not in seen and all(_is_leaf(m, seen | {name}) for m in deps)


def test_specs_are_leaves() -> None:
    specs = [n for n in MODULES if n.endswith(".spec")]
    assert len(specs) >= 9
    offenders = {n: sorted(m for m in imports()[n] if m in MODULES and not _is_leaf(m))
                 for n in specs}
    assert {n: m for n, m in offenders.items() if m} == {}


def test_the_study_composes_only_specs() -> None:
    imported = {m for m in imports()["acceval.study"] if m in MODULES}
    assert all(_is_leaf(m) for m in imported), sorted(imported)


def test_importing_the_study_loads_no_composer() -> None:
    code = ("import sys, acceval.study; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('acceval'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC)}).stdout.split()
    assert "acceval.study" in out
    assert not (COMPOSERS - {"acceval.study"}) & set(out)


def test_the_command_line_imports_no_json_schema_library_until_a_schema_is_checked() -> None:
    """Every `acceval` command (and every server a test starts) imports the CLI and the study:
    jsonschema's import pulled in ``rfc3987_syntax``, 1.4 s of grammar building per process,
    for a check only a JSON-schema task uses, and that one validates no formats."""
    code = ("import sys, acceval.cli, acceval.study, acceval.checks; "
            "print('jsonschema' in sys.modules); "
            "from acceval.tasks._json_checker import JsonChecker; "
            "c = JsonChecker(reference=None, schema={'type': 'object'}, fields={'a': 1}); "
            "print('jsonschema' in sys.modules, 'rfc3987_syntax' in sys.modules "
            "and sys.modules['rfc3987_syntax'] is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC)}).stdout.split()
    assert out == ["False", "True", "False"]


def _kind_comparisons(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named_kind = any((isinstance(s, ast.Attribute) and s.attr == "kind")
                         or (isinstance(s, ast.Name) and s.id == "kind") for s in sides)
        arrival = any(isinstance(s, ast.Constant) and s.value in ARRIVAL_KINDS for s in sides)
        if named_kind and arrival:
            lines.append(node.lineno)
    return lines


def test_no_arrival_kind_chains_outside_the_load_families() -> None:
    found = {name: _kind_comparisons(path) for name, path in MODULES.items()
             if name != "acceval.loadgen.spec"}
    found = {name: lines for name, lines in found.items() if lines}
    assert set(found) <= KIND_CHAINS_PENDING, found


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def test_the_cycle_finder_finds_cycles_and_only_those() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": set(), "f": {"f"}}
    assert _cycles(g) == [{"a", "b", "c"}]


# Every import statement, wherever it sits (inside functions too, so more than runs at
# import time): a module in no cycle of this graph cannot find a module half-initialised.
@functools.cache
def import_graph() -> dict[str, set[str]]:
    return {n: {m for m in imports()[n] if m in MODULES and m != n} for n in MODULES}


def test_every_module_imports_on_its_own() -> None:
    """An import cycle shows only when a module is the first one imported. A module half-
    initialised is one on the current chain of imports, which can loop back to it only
    through a cycle of imports; so every module is imported once, all in one process, and
    each module that is part of a cycle is then imported first, with no acceval module
    loaded before it (the cycles' members are few; importing every module first took 25 s
    of CPU for the same check)."""
    in_cycles = sorted(m for comp in _cycles(import_graph()) for m in comp)
    everything = sorted(n for n in MODULES if n != "acceval.__main__")
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        "def load(name):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{name}: {exc!r}')\n"
        f"for name in {in_cycles!r}:\n"
        "    for m in [m for m in sys.modules if m == 'acceval' or m.startswith('acceval.')]:\n"
        "        del sys.modules[m]\n"
        "    load(name)\n"
        f"for name in {everything!r}:\n"
        "    load(name)\n"
        "print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == ""
    assert in_cycles and len(in_cycles) < len(everything) // 4


# The agents concept: its spec is a leaf, and no agents module reaches up into the composers
# or sideways into the report (the report reads the agents' result, never the reverse).
AGENTS_MODULES = {n for n in MODULES if n.startswith("acceval.agents")}


def test_the_agents_modules_stay_below_the_composers_and_the_report() -> None:
    assert {"acceval.agents.spec", "acceval.agents.app", "acceval.agents.loop",
            "acceval.agents.analyze", "acceval.agents.result"} <= AGENTS_MODULES
    assert _is_leaf("acceval.agents.spec")
    offenders = {n: sorted(m for m in imports()[n] if m in COMPOSERS
                           or m.startswith("acceval.report")) for n in AGENTS_MODULES}
    assert {n: m for n, m in offenders.items() if m} == {}
# The training concept: its spec is a leaf, its stages never reach up to the pipeline or the
# renderers, and the report reads its result only.
TRAINING_STAGES = {"acceval.training.ingest", "acceval.training.trace",
                   "acceval.training.metrics", "acceval.training.analyze",
                   "acceval.training.execute", "acceval.training.workload",
                   "acceval.training.result"}


def test_training_stays_below_the_composers_and_the_report() -> None:
    assert set(MODULES) >= TRAINING_STAGES
    forbidden = UPPER | {"acceval.analysis", "acceval.verdict", "acceval.report"}
    offenders = {n: sorted(m for m in imports()[n]
                           if m in forbidden or m.startswith("acceval.report"))
                 for n in TRAINING_STAGES}
    assert {n: m for n, m in offenders.items() if m} == {}
    assert _is_leaf("acceval.training.spec")
    assert not {m for m in imports()["acceval.training.metrics"]
                if m.startswith("acceval.") and not m.startswith("acceval.training")}


# --- no knot among the concepts --------------------------------------------------------------
# A concept is a top-level module or subpackage of acceval. The composers (above) and the
# composed result sit over them; `results` (records, the store, the run log, the section
# base) sits under every concept and imports none but leaves.
COMPOSED = {"acceval.run_result", "acceval.runs_catalog"}
TOP = COMPOSERS | COMPOSED | {"acceval", "acceval.__main__"}


def _concept(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _concept_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, imported in imports().items():
        if name in TOP or _concept(name) in {"acceval.report", "acceval.interchange"}:
            continue
        a = _concept(name)
        graph.setdefault(a, set()).update(
            _concept(m) for m in imported if m in MODULES and _concept(m) != a)
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_knot_among_the_concepts() -> None:
    knots = [sorted(c) for c in _strongly_connected(_concept_graph()) if len(c) > 1]
    assert knots == []


def test_results_imports_no_concept() -> None:
    """`results` keeps records, the store, the run log and the section base: it may import
    only itself and leaves (modules that import nothing above them, such as metrics)."""
    offenders = {n: sorted(m for m in imports()[n] if m in MODULES
                           and not m.startswith("acceval.results") and not _is_leaf(m))
                 for n in MODULES if n.startswith("acceval.results")}
    assert {n: m for n, m in offenders.items() if m} == {}


def test_no_concept_imports_the_composed_result_or_a_composer() -> None:
    above = COMPOSERS | COMPOSED
    offenders = {n: sorted(imports()[n] & above) for n in MODULES
                 if n not in TOP and not n.startswith(("acceval.report", "acceval.interchange"))
                 and imports()[n] & above}
    assert offenders == {}
