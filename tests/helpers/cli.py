"""Run the real ``acceval`` CLI in a subprocess, and write small study files for it."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

# Commands that send no load and start no server run through the command line's own entry
# in the test's process (:func:`run_cli_in_process`): the same exit code and output without
# an interpreter's start (about 1 s of CPU each, some 70 times a suite). `run`, `demo`,
# `serve` and `artifact-check` (which starts engines) always get a process of their own, as
# does every command when ACCEVAL_TEST_SUBPROCESS=1.
IN_PROCESS = frozenset({"report", "validate", "import", "plan", "catalog", "runs", "query",
                        "compare", "export"})


def run_cli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    if args and args[0] in IN_PROCESS and os.environ.get("ACCEVAL_TEST_SUBPROCESS") != "1":
        return run_cli_in_process(*args, cwd=cwd)
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "acceval", *args], cwd=cwd, env=env, text=True,
        capture_output=True, timeout=timeout, check=False,
    )


def run_cli_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line's own entry (what ``acceval`` calls) in this process, for commands
    that send no load (usage and validation errors, reports, imports, queries): the same exit
    code and output as a process of its own without starting an interpreter. The working
    folder and the environment the command changes for itself are restored after."""
    from acceval.cli import entry

    out, err = io.StringIO(), io.StringIO()
    env, here = dict(os.environ), Path.cwd()
    os.environ["COLUMNS"] = "200"
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = entry(list(args))
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(env)
    return subprocess.CompletedProcess(["acceval", *args], code, out.getvalue(),
                                       err.getvalue())


def write_study(path: Path, data: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def mock_target(name: str, **options: object) -> dict[str, object]:
    return {"name": name, "serve": {"engine": "mock", "options": options}}


def start_long_run(tmp_path: Path, name: str, *, min_parts: int = 1,
                   capture: bool = False, ignore_sigint: bool = False
                   ) -> tuple[subprocess.Popen[str], Path]:
    """Start ``acceval run`` on a long mock study (its own session, so the test can kill
    the whole group) and return once it has written ``min_parts`` record parts; the caller
    stops it. Returns the process and its runs folder."""
    from acceval.results.store import PARTS_DIR

    study = {
        "name": name,
        "tasks": {"source": "builtin:arithmetic", "count": 5000, "seed": 1, "max_tokens": 8},
        "targets": [mock_target("m", ttft_ms=5, itl_ms=1, output_tokens=4)],
        "load": [{"concurrency": [4], "max_duration_s": 60}],
    }
    path = write_study(tmp_path / "s.yaml", study)
    runs = tmp_path / "runs"
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    def _ignore_sigint() -> None:  # what `acceval run ... &` in a script starts with
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval", "run", str(path), "--out", str(runs), "--no-progress"],
        stdout=out, stderr=out, text=True, start_new_session=True,
        preexec_fn=_ignore_sigint if ignore_sigint else None,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(list(runs.glob(f"*/{PARTS_DIR}/part-*.parquet"))) >= min_parts:
            break
        time.sleep(0.2)
    return proc, runs
