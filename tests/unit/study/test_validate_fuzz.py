"""`acceval validate` on any document: it either names the problems (exit 2) or accepts the
study, and an accepted study run against an endpoint that answers nothing stops at the
preflight (exit 2) before anything is written. Neither ever raises past the command line.

The cases are random edits of a valid study (values replaced, deleted or inserted at random
paths: extreme numbers, strings with control characters, wrong types, deep nesting), random
bytes, and spliced YAML text; both commands run in process through the CLI entry, as a user
would call them. Deterministic (derandomized, no example database) so CI is repeatable.

`make test` runs each property at a fixed, small budget (the same examples every run);
`make fuzz` (ACCEVAL_TEST_FUZZ=large) runs the large corpus, a nightly-style job.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import os
import socket
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from acceval.cli import entry
from acceval.study import Study

# Written into documents as is and replaced by the dead endpoint's port when one is saved.
PORT = "{port}"
DEAD_URL = f"http://127.0.0.1:{PORT}/v1"

BASE: dict[str, Any] = {
    "name": "fuzz",
    "description": "random edits of this study",
    "seed": 7,
    "tasks": {"source": "builtin:arithmetic", "count": 3, "seed": 1, "max_tokens": 8},
    "targets": [
        {"name": "a", "endpoint": {"base_url": DEAD_URL, "model": "m", "timeout_s": 5,
                                   "headers": {"X-Team": "perf"}},
         "platform": {"hardware": "h200", "chips": 1},
         "price": {"usd_per_hour": 3.5},
         "costs": {"utilization": 0.5, "compile_s": 10}},
        {"name": "b", "endpoint": {"base_url": DEAD_URL, "model": "m", "api": "chat"},
         "price": {"catalog": "aws-p5e-48xlarge-cb"}},
    ],
    "load": [{"concurrency": [1, 2], "max_duration_s": 5},
             {"poisson_rps": [2.0], "max_duration_s": 5, "warmup_s": 1}],
    "slo": {"ttft_ms": 500, "e2e_ms": 2000, "percentile": 90},
    "quality": {"min_accuracy": 0.5},
    "costs": {"horizon_months": 12, "expected_requests_per_month": 1e6},
    "demand": {"profile": "builtin:flat", "peak_rps": 10},
}


def _field_names() -> list[str]:
    """Every field name of the study's models (so that inserted keys are often real ones)."""
    names: set[str] = set()
    seen: set[type[BaseModel]] = set()
    stack: list[Any] = [Study]
    while stack:
        a = stack.pop()
        if isinstance(a, type) and issubclass(a, BaseModel):
            if a in seen:
                continue
            seen.add(a)
            names.update(a.model_fields)
            stack.extend(f.annotation for f in a.model_fields.values())
        else:
            stack.extend(typing.get_args(a))
    return sorted(names | {"concurrency", "constant_rps", "poisson_rps", "gamma_rps"})


NUMBERS = st.sampled_from([
    math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.0, -0.0, 0.5, 1, 0, -1,
    2**31, 2**32, 2**63, 2**64, -(2**63), 31 * 86_400, 10**12,
]) | st.integers() | st.floats()
STRINGS = st.sampled_from([
    DEAD_URL, f"http://[::1]:{PORT}/v1", "http://", "http://[::1", "http://127.0.0.1:99999/v1",
    "http://127.0.0.1:0/v1", "ftp://x/v1", f"http://u:p@127.0.0.1:{PORT}/v1", "a" * 300,
    "name\n", "a/b", "..", "", " ", "\x00", "\t", "é☃", "\u2028", "/dev/zero", "/proc/self",
    "/dev", "jsonl:/dev/zero", "jsonl:tasks.jsonl", "jsonl:fifo", "jsonl:.", "csv:/dev/zero",
    "csv:day.csv", "builtin:flat", "builtin:arithmetic", "builtin:nope", "text:hi", "runs",
    "catalog.yaml", "blocked", "blocked/runs", "HOME", "NO_SUCH_KEY_VAR", "1=2", "h200",
    "aws-p5e-48xlarge-cb", "chat", "owned", "kill_restart", "nvml",
]) | st.text(max_size=30)
SCALARS = NUMBERS | STRINGS | st.booleans() | st.none()
KEYS = st.sampled_from(_field_names()) | st.text(max_size=12)
VALUES = (
    st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8)
    | st.integers(1, 150).map(lambda n: _nested(n))
)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _edit(doc: Any, path: tuple[Any, ...], op: str, value: Any, key: str) -> Any:
    if not path:
        return value if op == "replace" else doc
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    target = parent[last]
    if op in ("replace", "perturb"):
        parent[last] = value
    elif op == "delete":
        del parent[last]
    elif isinstance(target, dict):
        target[key] = value
    elif isinstance(target, list):
        target.append(value)
    else:
        parent[last] = value
    return doc


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _like(value: Any) -> st.SearchStrategy[Any]:
    """A value of the same kind as ``value``: an edge of the field rather than a type error."""
    if isinstance(value, bool):
        return st.booleans() | st.none()
    if isinstance(value, int | float):
        return NUMBERS
    if isinstance(value, str):
        return STRINGS
    return VALUES


@st.composite
def edited_studies(draw: st.DrawFn) -> Any:
    doc: Any = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(0, 4))):
        path = draw(st.sampled_from(list(_paths(doc))))
        op = draw(st.sampled_from(["perturb", "perturb", "replace", "delete", "insert"]))
        value = draw(_like(_at(doc, path)) if op == "perturb" else VALUES)
        doc = _edit(doc, path, op, value, draw(KEYS))
    return doc


@pytest.fixture(scope="module")
def dead_port() -> Iterator[int]:
    # Bound and never listening: a connection is refused at once, and no one else can take
    # the port while the tests run.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, dead_port: int) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "port").write_text(str(dead_port), encoding="utf-8")
    (d / "tasks.jsonl").write_text('{"prompt": "2+2=", "reference": "4", '
                                   '"checker": {"type": "numeric"}}\n', encoding="utf-8")
    (d / "day.csv").write_text("hour,weight\n" + "".join(f"{h},1\n" for h in range(24)),
                               encoding="utf-8")
    (d / "catalog.yaml").write_text("prices: []\n", encoding="utf-8")
    (d / "blocked").write_text("a file where a folder is wanted", encoding="utf-8")
    if hasattr(os, "mkfifo"):
        os.mkfifo(d / "fifo")
    with pytest.MonkeyPatch.context() as mp:
        # What the command line's group sets for itself; kept out of the test process.
        mp.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
        mp.delenv("NO_SUCH_KEY_VAR", raising=False)
        yield d


def _cli(*argv: str) -> tuple[int, str]:
    """The command line in process: its exit code and everything it printed. Anything it
    raises fails the test (a traceback is a bug)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = entry(list(argv))
    return code, out.getvalue()


def _save(folder: Path, content: bytes) -> Path:
    path = folder / "study.yaml"
    path.write_bytes(content.replace(PORT.encode(), (folder / "port").read_bytes()))
    return path


def _check(folder: Path, content: bytes) -> None:
    path = _save(folder, content)
    before = sorted(p.name for p in folder.iterdir())
    code, out = _cli("validate", str(path))
    assert code in (0, 2), out
    assert "Traceback" not in out
    if code == 2:
        assert out.startswith("acceval: error: "), out
        return
    code, out = _cli("run", str(path), "--no-progress")
    assert code == 2, out
    assert "failed the preflight; nothing was measured" in out, out
    assert sorted(p.name for p in folder.iterdir()) == before  # no run folder, no records


def _dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode("utf-8")


# The suite's budget keeps this file to a few seconds of CPU; the large one is `make fuzz`.
LARGE = os.environ.get("ACCEVAL_TEST_FUZZ") == "large"


def _fuzz(suite: int, large: int) -> settings:
    return settings(max_examples=large if LARGE else suite, deadline=None, derandomize=True,
                    database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_the_base_study_is_accepted_and_stops_at_the_preflight(folder: Path) -> None:
    path = _save(folder, _dump(BASE))
    code, out = _cli("validate", str(path))
    assert code == 0, out
    code, out = _cli("run", str(path), "--no-progress")
    assert code == 2 and "target 'a'" in out and "target 'b'" in out, out


@_fuzz(suite=200, large=5000)
@given(doc=edited_studies())
def test_edited_studies_are_refused_or_stop_at_the_preflight(folder: Path, doc: Any) -> None:
    _check(folder, _dump(doc))


@_fuzz(suite=300, large=2000)
@given(content=st.binary(max_size=512))
def test_random_bytes_are_refused(folder: Path, content: bytes) -> None:
    _check(folder, content)


YAML_BITS = st.sampled_from(["\n", " ", "  ", ":", "- ", "[", "]", "{", "}", ",", "&a ", "*a",
                             "<<: ", "!!", "'", '"', "#", "|", ">", "? ", "---\n", "...\n",
                             ".nan", ".inf", "-.inf", "1e308", "~", "\t", "\x00", "\xff"])


@_fuzz(suite=100, large=2000)
@given(where=st.integers(0, len(_dump(BASE))), bits=st.lists(YAML_BITS | st.text(max_size=4),
                                                              max_size=6))
def test_spliced_yaml_is_refused_or_stops_at_the_preflight(folder: Path, where: int,
                                                           bits: list[str]) -> None:
    text = _dump(BASE).decode("utf-8")
    _check(folder, (text[:where] + "".join(bits) + text[where:]).encode("utf-8", "surrogatepass"))
