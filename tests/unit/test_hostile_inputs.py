"""Every reader of an input refuses hostile files with a clear error, never a traceback or
a hang (issue 30): training logs (JSONL, CSV, MLLOG, TensorBoard), profiler traces, the
peers' files (vLLM bench, GuideLLM, AIPerf), claims files, catalogs, ``--set`` values and
result.json, each through :mod:`acceval.input_files`.

The corpus is fixed (devices, FIFOs, folders, sparse huge files, gzip bombs, deep nesting,
alias bombs, NaN and infinities, bad UTF-8, over-long CSV fields, markup), plus a small
derandomized hypothesis budget of random bytes per reader. A case passes when the reader
returns or raises the error type its callers turn into a message (an ``AccevalError``, or
``ValueError`` for the trace reader, whose callers say "not read: ..."). Each case runs
under a 20 s alarm: a hang fails it instead of blocking CI.
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acceval.analysis import load_result
from acceval.claims.ledger import claims_file
from acceval.economics.catalog import load_catalog
from acceval.errors import AccevalError
from acceval.input_files import read_gzip
from acceval.interchange import import_files
from acceval.study import apply_overrides
from acceval.training import trace as trace_mod
from acceval.training.ingest import read_log
from acceval.training.spec import Columns
from acceval.training.trace import read_trace

Reader = Callable[[Path], Any]


def _training(fmt: str) -> Reader:
    return lambda p: read_log(p, fmt, Columns())  # type: ignore[arg-type]


def _import(fmt: str) -> Reader:
    return lambda p: import_files([p], fmt, out_dir=p.parent / f"runs-{fmt}")


def _result(p: Path) -> Any:
    run = p.parent / f"run-{p.name}"
    run.mkdir(exist_ok=True)
    (run / "result.json").unlink(missing_ok=True)
    if p.is_symlink() or not p.is_file() or p.stat().st_size > 2**20:
        (run / "result.json").symlink_to(p)
    else:
        (run / "result.json").write_bytes(p.read_bytes())
    return load_result(run)


READERS: dict[str, tuple[Reader, tuple[type[BaseException], ...]]] = {
    "training jsonl": (_training("jsonl"), (AccevalError,)),
    "training csv": (_training("csv"), (AccevalError,)),
    "training mllog": (_training("mllog"), (AccevalError,)),
    "trace": (read_trace, (ValueError,)),
    "import vllm": (_import("vllm"), (AccevalError,)),
    "import guidellm": (_import("guidellm"), (AccevalError,)),
    "import aiperf": (_import("aiperf"), (AccevalError,)),
    "claims file": (claims_file, (AccevalError,)),
    "catalog": (load_catalog, (AccevalError,)),
    "result.json": (_result, (AccevalError,)),
}


@pytest.fixture(autouse=True)
def _alarm() -> Iterator[None]:
    def hung(signum: int, frame: Any) -> None:
        raise TimeoutError("the reader hung")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _gzip_bomb(path: Path, expanded_mib: int) -> Path:
    member = gzip.compress(b"\0" * 2**20, compresslevel=9)  # about 1 KiB
    path.write_bytes(member * expanded_mib)
    return path


def _hostile(tmp: Path) -> dict[str, Path]:
    out: dict[str, Path] = {"/dev/zero": Path("/dev/zero"), "/dev/null": Path("/dev/null"),
                            "folder": tmp}
    fifo = tmp / "pipe.jsonl"
    os.mkfifo(fifo)
    out["fifo"] = fifo
    huge = tmp / "huge.json"
    with huge.open("wb") as f:  # sparse: refused by its size before a byte is read
        f.truncate(600 * 2**20)
    out["600 MiB sparse"] = huge
    out["missing"] = tmp / "nope.json"
    texts = {
        "empty": b"",
        "bad utf-8": b'{"a": "\xff\xfe"}\n',
        "deep json": b"[" * 100_000 + b"]" * 100_000,
        "deep objects": b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
        "nan": b'{"step": 1, "loss": NaN, "eval_loss": Infinity, "ts": NaN, "dur": 1e999}\n',
        "nan lines": b'{"step": 1, "loss": NaN}\n{"step": 2, "loss": -Infinity}\n'
                     b':::MLLOG {"key": "train_loss", "value": NaN, "time_ms": 1e999, '
                     b'"metadata": {"step": 1}}\n',
        "nan csv": b"step,loss\n1,nan\n2,inf\n3,-inf\n",
        "huge csv field": b"step,loss\n1," + b"9" * 200_000 + b"\n",
        "csv nul": b"step,loss\n1,\x002\n",
        "long int": b'{"step": ' + b"9" * 10_000 + b"}\n",
        "markup": b'{"benchmarks": [{"config": "<script>alert(1)</script>"}], '
                  b'"claims": [{"id": "<img src=x onerror=alert(1)>"}]}',
        "yaml alias bomb": b"a: &a [x, x, x, x, x, x, x, x, x]\n"
                           + b"".join(b"%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n"
                                      % ((98 + i,) * 2 + (97 + i,) * 8) for i in range(9)),
        "yaml deep": b"a: " + b"[" * 5_000 + b"]" * 5_000 + b"\n",
        "binary": bytes(range(256)) * 8,
    }
    for name, data in texts.items():
        p = tmp / f"{name.replace(' ', '-')}.json"
        p.write_bytes(data)
        out[name] = p
    out["gzip bomb"] = _gzip_bomb(tmp / "bomb.json.gz", 20)
    out["not gzip"] = tmp / "fake.json.gz"
    out["not gzip"].write_bytes(b"plain text")
    return out


CASES = ["/dev/zero", "/dev/null", "folder", "fifo", "600 MiB sparse", "missing", "empty",
         "bad utf-8", "deep json", "deep objects", "nan", "nan lines", "nan csv",
         "huge csv field", "csv nul", "long int", "markup", "yaml alias bomb", "yaml deep",
         "binary", "gzip bomb", "not gzip"]


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("case", CASES)
def test_a_hostile_file_is_refused_or_read_never_a_traceback(
        tmp_path: Path, reader: str, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A bomb that expands past a small cap proves the cap; the real one is 512 MiB.
    monkeypatch.setattr(trace_mod, "DATA_MAX_BYTES", 8 * 2**20)
    fn, allowed = READERS[reader]
    path = _hostile(tmp_path)[case]
    try:
        fn(path)
    except allowed as exc:
        assert str(exc).strip(), "an error with no message"
        assert "Traceback" not in str(exc)


def test_a_gzip_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    bomb = _gzip_bomb(tmp_path / "b.json.gz", 64)
    assert bomb.stat().st_size < 200_000
    with pytest.raises(AccevalError, match="expands to more than 16 MiB"):
        read_gzip(bomb, max_bytes=16 * 2**20, what="trace")
    with pytest.raises(ValueError, match="expands to more than 8 MiB"):
        trace_mod.DATA_MAX_BYTES, saved = 8 * 2**20, trace_mod.DATA_MAX_BYTES
        try:
            read_trace(bomb)
        finally:
            trace_mod.DATA_MAX_BYTES = saved


def test_non_finite_times_and_counts_make_the_line_unread(tmp_path: Path) -> None:
    """A NaN loss is data (the stability metrics count it); a NaN time, token count or step
    time is not, and used to reach the HTML report's charts as a crash."""
    log = tmp_path / "steps.jsonl"
    log.write_text('{"step": 1, "loss": NaN}\n{"step": 2, "loss": 2.5}\n'
                   '{"step": 3, "loss": 1.0, "t_s": NaN}\n'
                   '{"step": 4, "loss": 1.0, "tokens": Infinity}\n'
                   '{"step": 5, "loss": 1.0, "step_s": 1e999}\n')
    got = read_log(log, "jsonl", Columns())
    assert [s.step for s in got.steps] == [1, 2]
    assert got.steps[0].loss is not None and math.isnan(got.steps[0].loss)
    assert got.unread.count == 3
    assert all("not a finite number" in e for e in got.unread.examples)
    csv = tmp_path / "steps.csv"
    csv.write_text("step,loss,t_s\n1,nan,0.5\n2,3.0,inf\n3,2.0,1.0\n")
    got = read_log(csv, "csv", Columns())
    assert [s.step for s in got.steps] == [1, 3]


@pytest.mark.parametrize("value", [
    "&a [*a]",
    "[" * 10_000 + "]" * 10_000,
    "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: [*g,*g,*g,*g,*g,*g,*g,*g,*g]",
    "\x00", "{a: 1", ".nan",
])
def test_set_values_are_read_within_the_study_limits(value: str) -> None:
    try:
        apply_overrides({"slo": {}}, [f"slo.ttft_ms={value}"])
    except AccevalError as exc:
        assert "override" in str(exc) and "hint:" in str(exc)


def test_a_set_path_too_deep_is_refused() -> None:
    with pytest.raises(AccevalError, match="more than 64 fields deep"):
        apply_overrides({}, [".".join(["a"] * 10_000) + "=1"])


@pytest.mark.parametrize("reader", list(READERS))
@settings(max_examples=15, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=3000),
                      st.text(alphabet="{}[]\":,0123456789.eE-+NaInfity \n<>/&*!",
                              max_size=3000).map(str.encode)))
def test_random_bytes_never_give_a_traceback(tmp_path: Path, reader: str,
                                             data: bytes) -> None:
    fn, allowed = READERS[reader]
    path = tmp_path / ("r.json.gz" if data[:2] == b"\x1f\x8b" else "r.json")
    path.write_bytes(data)
    with contextlib.suppress(*allowed):
        fn(path)
