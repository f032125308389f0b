"""A damaged result.json (empty, truncated, garbage) is said to be damaged and rebuilt
from the run's journal and records by `report`, `report --recompute` and `run --resume`
(issue 30); before, each gave a traceback until the file was deleted by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.run_result import RESULT_FILE
from helpers.cli import mock_target, run_cli, write_study

DAMAGE = {
    "empty": lambda text: "",
    "truncated": lambda text: text[: len(text) // 2],
    "garbage": lambda text: "\x00\x01 not json {{{",
    "not a result": lambda text: json.dumps({"schema_version": 2, "hello": 1}),
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("damaged")
    study = write_study(tmp / "s.yaml", {
        "name": "damaged",
        "tasks": {"source": "builtin:arithmetic", "count": 12, "seed": 1, "max_tokens": 4},
        "targets": [mock_target("m", ttft_ms=1, itl_ms=1, output_tokens=2)],
        "load": [{"concurrency": [1, 2]}],
    })
    done = run_cli("run", str(study), "--out", str(tmp / "runs"), "--no-progress", cwd=tmp)
    assert done.returncode == 0, done.stderr
    (run_dir,) = [p for p in (tmp / "runs").iterdir() if p.is_dir()]
    return run_dir


def _damaged(finished: Path, tmp_path: Path, kind: str) -> tuple[Path, dict[str, object]]:
    run_dir = tmp_path / finished.name
    shutil.copytree(finished, run_dir)
    text = (run_dir / RESULT_FILE).read_text(encoding="utf-8")
    (run_dir / RESULT_FILE).write_text(DAMAGE[kind](text), encoding="utf-8")
    return run_dir, json.loads(text)


def _counts(result: dict[str, object]) -> list[tuple[str, int]]:
    return [(p["label"], p["summary"]["requests"])  # type: ignore[index]
            for t in result["targets"] for p in t["points"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("command", "kind"), [
    *((["report", "--format", "json"], kind) for kind in DAMAGE),
    (["report", "--recompute", "--format", "json"], "truncated"),
    (["report", "--recompute", "--format", "json"], "garbage")])
def test_report_says_it_is_damaged_and_rebuilds_it(finished: Path, tmp_path: Path, kind: str,
                                                   command: list[str]) -> None:
    run_dir, before = _damaged(finished, tmp_path, kind)
    rep = run_cli(command[0], str(run_dir), *command[1:], cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "Traceback" not in rep.stderr
    out = json.loads(rep.stdout)
    assert f"{RESULT_FILE} was damaged" in out["warnings"][0]
    assert "rebuilt from the run's journal and records" in out["warnings"][0]
    assert _counts(out) == _counts(before)  # every point back, with its exact count
    assert not out["log"]["interrupted"]
    # The damaged file is kept aside, and result.json is whole again.
    assert list((run_dir / "quarantine").glob(f"{RESULT_FILE}.damaged-*"))
    assert _counts(json.loads((run_dir / RESULT_FILE).read_text())) == _counts(before)


@pytest.mark.parametrize("kind", ["empty", "garbage"])
def test_resume_says_it_is_damaged_and_rebuilds_it(finished: Path, tmp_path: Path,
                                                   kind: str) -> None:
    run_dir, before = _damaged(finished, tmp_path, kind)
    again = run_cli("run", "--resume", str(run_dir), "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert f"{RESULT_FILE} was damaged" in again.stderr
    assert _counts(json.loads((run_dir / RESULT_FILE).read_text())) == _counts(before)
    # Now whole: a second resume has nothing to do.
    third = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert third.returncode == 2 and "nothing to resume" in third.stderr


def test_a_damaged_result_without_a_study_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / RESULT_FILE).write_text("{", encoding="utf-8")
    rep = run_cli("report", str(tmp_path / "r"), cwd=tmp_path)
    assert rep.returncode == 1 and "Traceback" not in rep.stderr
    assert "is damaged" in rep.stderr and "hint: restore result.json from a copy" in rep.stderr
