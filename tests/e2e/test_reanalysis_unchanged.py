"""Behaviour does not change when the code's shape does: a stored demo run's records,
re-analysed, give every number its stored analysis holds (tests/fixtures/demo-quick-run),
within float rounding. New fields may appear; a field that goes away or a number that moves
must be listed here with the reason."""

from __future__ import annotations

import fnmatch
import json
import math
import shutil
from pathlib import Path
from typing import Any

from acceval.analysis import load_result

FIXTURE = Path(__file__).parents[1] / "fixtures" / "demo-quick-run"

# Parts that are not numbers of the analysis: when and where it ran, and what with.
VOLATILE = {"created_utc", "finished_utc", "software", "environment", "warnings"}
# Fields removed on purpose, and values changed on purpose (fnmatch patterns), each with the
# reason: empty while the stored analysis is today's. When a change is meant to move a number,
# list it here with why, or re-analyse the fixture (tests/fixtures/demo-quick-run/README.md).
REMOVED: set[str] = set()
# Where the fixture run lay when it was analysed (paths in it are relative to that).
OLD_RUN_DIR = "/work/baseline-runs/builtin-demo-quick-20261202T061252Z"
_run_dir: list[Path] = []
CHANGED: set[str] = set()


def _diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if path in REMOVED or path.split(".")[-1] in VOLATILE \
            or any(fnmatch.fnmatchcase(path, p) for p in CHANGED):
        return
    if isinstance(old, dict):
        if not isinstance(new, dict):
            out.append(f"{path}: was an object, now {new!r:.80}")
            return
        for k, v in old.items():
            if f"{path}.{k}" in REMOVED or k in VOLATILE:
                continue
            if k not in new:
                out.append(f"{path}.{k}: gone")
            else:
                _diff(v, new[k], f"{path}.{k}" if path else k, out)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            out.append(f"{path}: list of {len(old)} became {new!r:.80}")
            return
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}[{i}]", out)
    elif isinstance(old, float) and isinstance(new, int | float):
        if not (math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12)
                or (math.isnan(old) and math.isnan(new))):
            out.append(f"{path}: {old!r} became {new!r}")
    elif isinstance(old, str) and isinstance(new, str):
        if old.replace(OLD_RUN_DIR, "<run>") != new.replace(str(_run_dir[0]), "<run>"):
            out.append(f"{path}: {old!r:.80} became {new!r:.80}")
    elif old != new:
        out.append(f"{path}: {old!r:.80} became {new!r:.80}")


def test_a_stored_run_reanalysed_gives_the_same_numbers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    _run_dir[:] = [run]
    old = json.loads((run / "result.json").read_text(encoding="utf-8"))
    new = json.loads(load_result(run, recompute=True).model_dump_json())
    problems: list[str] = []
    _diff(old, new, "", problems)
    assert problems == [], "\n".join(problems[:40])
