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


def test_a_client_out_of_descriptors_is_a_client_error_not_the_targets() -> None:
    code = '''
import asyncio, resource
from acceval.loadgen.protocol import Prompt
from acceval.results.records import Record
from acceval.targets.openai import OpenAITarget
from acceval.targets.spec import Endpoint

async def main():
    t = OpenAITarget("x", Endpoint(base_url="http://127.0.0.1:9/v1", model="m"))
    await t.start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))
    held = []
    try:
        while True:
            held.append(open("/dev/null"))
    except OSError:
        pass
    rec = Record(target="x", load_index=0, load_label="p", request_id=0, task_id="t")
    await t.send(Prompt(task_id="t", prompt="hi"), rec, 0)
    for f in held:
        f.close()
    await t.close()
    print(rec.error_kind)

asyncio.run(main())
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["client"]
