"""The ``acceval`` command does not pay for pyarrow's pandas probe, and loses nothing by it.

pyarrow imports pandas (0.3-1.9 s of CPU) on its first conversion only to ask whether a value
is a pandas object; the command tells it pandas is absent (``arrow_without_pandas``). Each
check runs in a fresh interpreter, since the probe happens once per process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "demo-run"

_REPORT = """
import json, sys
from acceval.cli import entry
rc = entry(["report", sys.argv[1], "--recompute", "--format", sys.argv[2], "--out", sys.argv[3]],
           own_process=sys.argv[4] == "own")
print(json.dumps({"rc": rc, "pandas": "pandas" in sys.modules}))
"""


def _report(run: Path, fmt: str, out: Path, process: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _REPORT, str(run), fmt, str(out), process],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_command_reports_without_importing_pandas_and_says_the_same(tmp_path: Path) -> None:
    pytest.importorskip("pandas")  # the probe only costs where pandas is installed
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report*.html"))
    own = _report(run, "json", tmp_path / "own.json", "own")
    usual = _report(run, "json", tmp_path / "usual.json", "library")
    assert own == {"rc": 0, "pandas": False}
    assert usual == {"rc": 0, "pandas": True}  # what the command avoids
    a = json.loads((tmp_path / "own.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "usual.json").read_text(encoding="utf-8"))
    for volatile in ("created_utc", "finished_utc"):
        a.pop(volatile, None)
        b.pop(volatile, None)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert _report(run, "html", tmp_path / "report.html", "own") == {"rc": 0, "pandas": False}


def test_pandas_still_works_after_the_probe_is_skipped() -> None:
    pytest.importorskip("pandas")
    code = """
import sys
import pyarrow as pa
from acceval.results.records import arrow_without_pandas
arrow_without_pandas()
assert "pandas" not in sys.modules
assert pa.array([1.0, None, float("nan")]).null_count == 1
assert "pandas" not in sys.modules
frame = pa.table({"a": [1, 2]}).to_pandas()
print(type(frame).__name__, list(frame["a"]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["DataFrame", "[1,", "2]"]
