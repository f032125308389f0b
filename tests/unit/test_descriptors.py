"""Descriptors: a closed loop that needs more open files than the process may have is said
before any load, and the command line raises the soft limit to the hard one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acceval.checks import FD_MARGIN, _descriptors, check_runnable
from acceval.errors import StudyError
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

resource = pytest.importorskip("resource")  # POSIX only; this project's machines are Linux


def _study(concurrency: int) -> dict[str, object]:
    return {"name": "fd", "targets": [{"name": "a", "endpoint": {
        "base_url": "http://127.0.0.1:9/v1", "model": "m"}}],
        "load": [{"concurrency": [1, concurrency]}, {"poisson_rps": [10]}]}


def test_a_concurrency_above_the_limit_is_named_before_the_load() -> None:
    s = study_from_dict(_study(2000))
    problems = _descriptors(s, limit=1024)
    assert [p[0] for p in problems] == ["load[0].concurrency"]
    assert "ulimit -n" in problems[0][2]
    assert _descriptors(s, limit=2000 + FD_MARGIN) == []
    assert _descriptors(s, limit=None) == []


def test_check_runnable_uses_this_process_limit(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        with pytest.raises(StudyError) as exc:
            check_runnable(study_from_dict(_study(500)), base_dir=tmp_path)
        assert "load[0].concurrency" in str(exc.value.problems)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_command_line_raises_the_soft_limit_to_the_hard_one() -> None:
    code = ("import resource, sys; s, h = resource.getrlimit(resource.RLIMIT_NOFILE); "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, h)); "
            "from acceval.cli import main; "
            "from click.testing import CliRunner; "
            "CliRunner().invoke(main, ['validate', '--help']); "
            "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], h)")
    soft, hard = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split()
    assert soft == hard or int(soft) >= 65536


def test_an_open_loop_cap_set_above_the_limit_is_named_and_a_default_one_is_lowered() -> None:
    from acceval.checks import _notes

    s = study_from_dict({**_study(10), "load": [{"poisson_rps": [10], "max_in_flight": 5000}]})
    (problem,) = _descriptors(s, limit=1024)
    assert problem[0] == "load[0].max_in_flight" and str(1024 - FD_MARGIN) in problem[2]
    default = study_from_dict(_study(10))  # poisson with the default cap of 4096
    assert _descriptors(default, limit=1024) == []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        (note,) = _notes(default)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert note.startswith("load[1]: at most 960 requests in flight")


def test_an_open_loop_run_under_a_low_limit_waits_at_the_cap_instead_of_failing(
        tmp_path: Path) -> None:
    import json

    import yaml

    study = {"name": "fdcap",
             "tasks": {"source": "builtin:arithmetic", "count": 50, "seed": 1, "max_tokens": 4},
             "targets": [{"name": "slow", "serve": {"engine": "mock", "options": {
                 "ttft_ms": 400, "itl_ms": 0, "output_tokens": 2}}}],
             "load": [{"poisson_rps": [800], "min_duration_s": 1.5, "max_duration_s": 1.5}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(study))

    def low_limit() -> None:  # soft and hard: the command line cannot raise it
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = subprocess.run(
        [sys.executable, "-m", "acceval", "run", str(path), "--out", str(tmp_path / "runs"),
         "--no-progress"], capture_output=True, text=True, preexec_fn=low_limit, timeout=240,
        check=False)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    assert any(w.startswith(f"load[0]: at most {256 - FD_MARGIN} requests in flight")
               for w in result["warnings"])
    (point,) = result["log"]["targets"][0]["points"]
    assert point["held_by_cap"] > 0  # about 320 would be in flight; the cap held them back
    assert point["errors"] == 0      # and none failed for want of descriptors
