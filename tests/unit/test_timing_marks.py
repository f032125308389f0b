"""Every test whose outcome can depend on host load is marked `timing` (tests/conftest.py), so
that `make test` runs it alone, after the parallel phase, which must pass on a busy host.

Read with `ast` from each test's own source: a test not marked `timing` (by its file's
``pytestmark`` or its own decorator) must not

- read a clock and bound a number from above (an elapsed time that a busy host stretches),
- bound from above a value named as a time (``*_s``, ``*_ms``, ``seconds``, ``elapsed``,
  ``lag``, ...) or a ratio of two live measurements (``mfu``: the host's peak is measured at
  another moment than the work), or
- in a test that measures live (end to end, integration, or one that starts a server or a
  run), assert on the self-check's trust or on what only trusted points give (the verdict's
  winner or tie, a claim compared, an SLO met, a maximum rate).

A test the rules would flag but whose number cannot move with load is listed in
``NOT_LOAD_DEPENDENT`` with the reason.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
TIME_NAME = re.compile(r"(^|_)(ms|ns|us|seconds|secs|elapsed|duration|took|wall|lag|latency"
                       r"|ttft|tpot|itl|e2e|mfu)(_|$)|_s$", re.IGNORECASE)
TRUST = {"trusted", "untrusted_reason", "degraded", "degraded_reasons", "loop_fell_behind",
         "compared", "winner", "tie", "qualified", "meets_slo", "max_rate_rps"}
# Calls that measure live: a test module that makes one runs real load.
LIVE = {"run_cli", "SSEServer", "run_point", "execute", "run_sweep", "Popen", "measure_host"}

NOT_LOAD_DEPENDENT = {
    "integration/test_agents_own_program.py::"
    "test_a_program_on_the_http_api_is_judged_by_the_state_and_ended_with_its_group":
        "the bound (300 s) only tells an ended program group from one left to its 600 s "
        "sleep; an episode takes seconds",
    "unit/benchmarks/test_loadgen_bench.py::"
    "test_vllm_bench_detailed_result_joins_the_server_log_by_id":
        "times read from a recorded vllm bench result and its server log; no clock",
    "unit/metrics/test_point_stats_duckdb.py::test_every_points_ttft_and_e2e_equal_duckdbs":
        "statistics of a stored run's records against DuckDB's over the same file; no clock",
    "unit/capacity/test_cap_queueing.py::test_min_servers_respects_mean_wait_and_steps":
        "an M/M/c wait computed from fixed rates; no clock",
    "unit/targets/test_openai.py::test_retry_after_is_recorded_in_seconds_and_as_a_date":
        "a date 30 s ahead: elapsed time only shrinks it, and only a 20 s stall takes it "
        "under the lower bound",
    "unit/training/test_plausibility.py::test_a_plausible_mfu_has_no_flag":
        "an MFU computed from a written training log; no clock",
    "e2e/test_demo.py::test_demo_quick_runs_end_to_end":
        "each trust-dependent assertion accepts the untrusted outcome beside the trusted one; "
        "the trusted ones are the timing test beside it",
    "e2e/test_studies_without_targets.py::"
    "test_a_training_only_study_ranks_its_platforms_and_no_inference":
        "the training verdict ranks recorded training logs; no live point",
    "unit/report/test_training_section.py::test_analyze_scores_prices_and_ranks_training":
        "the training verdict ranks recorded training logs; no live point",
}


def _names(node: ast.AST) -> set[str]:
    """Names, attributes and string keys (``result["verdict"]``) read in ``node``."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)
    return out


def _is_number(node: ast.AST) -> bool:
    return all(isinstance(n, ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop)
               or (isinstance(n, ast.Constant) and isinstance(n.value, int | float))
               for n in ast.walk(node))


def _bounded_above(test: ast.AST) -> Iterator[ast.AST]:
    """Every expression that ``test`` compares below a number (``x < 2.0``, ``5 > x``)."""
    for cmp in ast.walk(test):
        if not isinstance(cmp, ast.Compare):
            continue
        sides = [cmp.left, *cmp.comparators]
        for op, a, b in zip(cmp.ops, sides[:-1], sides[1:], strict=True):
            if isinstance(op, ast.Lt | ast.LtE) and _is_number(b) and not _is_number(a):
                yield a
            if isinstance(op, ast.Gt | ast.GtE) and _is_number(a) and not _is_number(b):
                yield b


def _reads_clock(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in CLOCKS for n in ast.walk(node))


def _marked(node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if isinstance(node, ast.Module):
        return any(isinstance(n, ast.Assign) and "timing" in ast.unparse(n.value)
                   and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
                   for n in node.body)
    return any("mark.timing" in ast.unparse(d) for d in node.decorator_list)


def _tests(module: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in module.body:
        body = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in body:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) \
                    and fn.name.startswith("test"):
                yield fn


def problems(source: str, *, live: bool) -> dict[str, list[str]]:
    """Each unmarked test in ``source`` that the rules flag, with why. ``live``: the file
    measures live whatever it calls (end to end and integration tests)."""
    module = ast.parse(source)
    if _marked(module):
        return {}
    helpers = {n.name: n for n in module.body
               if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    live = live or bool(LIVE & _names(module))
    out: dict[str, list[str]] = {}
    for fn in _tests(module):
        if _marked(fn):
            continue
        called = [helpers[n] for n in _names(fn) if n in helpers and n != fn.name]
        clock = _reads_clock(fn) or any(_reads_clock(h) for h in called)
        why = []
        for a in (n for n in ast.walk(fn) if isinstance(n, ast.Assert)):
            text = f"line {a.lineno}: {ast.unparse(a.test)[:80]}"
            bounded = list(_bounded_above(a.test))
            if clock and bounded:
                why.append(f"reads a clock and bounds it, {text}")
            elif any(TIME_NAME.search(n) for b in bounded for n in _names(b)):
                why.append(f"bounds a time from above, {text}")
            elif live and TRUST & _names(a.test):
                why.append(f"asserts on trust in a live run, {text}")
        if why:
            out[fn.name] = why
    return out


def _files() -> Iterator[tuple[str, Path]]:
    for path in sorted(TESTS.rglob("test_*.py")):
        yield path.relative_to(TESTS).as_posix(), path


def _found() -> dict[str, list[str]]:
    found = {}
    for rel, path in _files():
        live = rel.startswith(("e2e/", "integration/"))
        for name, why in problems(path.read_text(encoding="utf-8"), live=live).items():
            found[f"{rel}::{name}"] = why
    return found


def test_every_load_dependent_test_is_marked_timing() -> None:
    found = _found()
    unmarked = {k: v for k, v in found.items() if k not in NOT_LOAD_DEPENDENT}
    assert unmarked == {}, "mark these @pytest.mark.timing (or make them load-independent)"
    # An exception that no longer matches anything is dropped, not kept as a blind spot.
    assert set(NOT_LOAD_DEPENDENT) <= set(found)


def test_the_marked_timing_tests_are_found() -> None:
    marked = {rel for rel, path in _files()
              if "pytest.mark.timing" in path.read_text(encoding="utf-8")}
    assert {"integration/test_trusted_capacity.py", "unit/loadgen/test_timer.py",
            "unit/claims/test_host.py", "unit/engines/test_mock.py",
            "e2e/test_demo.py"} <= marked


# What the rules catch, as the tests were before they were marked.
WALL_CLOCK = """
def test_queue() -> None:
    async def one(t0: int) -> float:
        return (time.perf_counter_ns() - t0) / 1e6
    first, second = asyncio.run(run())
    assert 29 <= first < 55
"""
HOST = """
def test_host() -> None:
    h = measure_host(budget_s=0.2)
    assert h.seconds < 2.0
"""
DEMO = """
def test_demo(tmp_path) -> None:
    result = json.loads(run_cli("demo", "--quick").stdout)
    assert result["verdict"]["status"] in ("winner", "tie")
    assert 0 < result["training"]["mfu"] < 1
"""


def test_the_rules_flag_a_clock_bound_a_time_bound_and_trust() -> None:
    assert "reads a clock" in problems(WALL_CLOCK, live=False)["test_queue"][0]
    assert "bounds a time" in problems(HOST, live=False)["test_host"][0]
    demo = problems(DEMO, live=False)["test_demo"]
    assert "trust" in demo[0] and "bounds a time" in demo[1]
    # ... and not once the test is marked, or when its bound is only from below.
    marked = textwrap.dedent(HOST).replace("def test_host", "@pytest.mark.timing\ndef test_host")
    assert problems(marked, live=False) == {}
    assert problems("pytestmark = pytest.mark.timing\n" + HOST, live=False) == {}
    assert problems(WALL_CLOCK.replace("29 <= first < 55", "29 <= first"), live=False) == {}
