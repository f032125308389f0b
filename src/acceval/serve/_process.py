"""Run ``acceval serve`` as a child process: start it, wait until it answers, stop or kill it.

The child's stdout and stderr go to files, not pipes, so a chatty server can never block on a
full pipe; the ready line carries the bound port, so ``port=0`` has no pick-then-bind race.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from acceval.errors import TargetError

_READY_RE = re.compile(r"acceval serve: \S+ on (http://([^:/\s]+):(\d+)/v1)")
_POLL_S = 0.02


@dataclass(slots=True)
class LocalServer:
    """A child ``acceval serve`` process. ``started_ns``/``ready_ns`` are perf_counter_ns."""

    process: subprocess.Popen[bytes]
    base_url: str
    host: str
    port: int
    started_ns: int
    ready_ns: int
    log_path: str | None
    _workdir: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def ready_s(self) -> float:
        """Seconds from spawn to a healthy server (start-up, load and warm-up)."""
        return (self.ready_ns - self.started_ns) / 1e9

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after ``timeout_s``; returns the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._cleanup()
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL at once (fault injection: the server dies without flushing anything)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        return self.process.returncode

    def stderr_tail(self, max_chars: int = 4000) -> str:
        return _tail(self._workdir / "stderr.txt", max_chars)

    def _cleanup(self) -> None:
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _tail(path: Path, max_chars: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-max_chars:]


def _healthy(host: str, port: int) -> bool:
    conn = http.client.HTTPConnection(host, port, timeout=2.0)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


WORKDIR_PREFIX = "acceval-serve-"
OWNER_FILE = "owner.pid"
#: The spawning process's pid, for the server to die with it (see acceval.serve.__main__).
PARENT_ENV = "ACCEVAL_SERVE_PARENT"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to judge
    return True


def clean_stale_workdirs() -> list[Path]:
    """Remove the temp folders of servers whose spawning process is gone (a run killed with
    SIGKILL leaves its folder behind); returns what was removed."""
    removed = []
    for d in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        try:
            owner = int((d / OWNER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not one of ours, or still being created
        if not _pid_alive(owner):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def server_command(engine_name: str, *, options: dict[str, Any], host: str, port: int,
                   log_path: str | None, model_name: str | None,
                   timeouts_s: tuple[float, float] | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "acceval.serve", engine_name, "--host", host,
           "--port", str(port)]
    for key, value in options.items():
        # JSON on the wire so that every value round-trips through parse_options exactly.
        cmd += ["--option", f"{key}={json.dumps(value)}"]
    if log_path is not None:
        cmd += ["--log", str(log_path)]
    if model_name is not None:
        cmd += ["--model-name", model_name]
    if timeouts_s is not None:
        cmd += ["--idle-timeout", repr(timeouts_s[0]), "--head-timeout", repr(timeouts_s[1])]
    return cmd


def spawn_server(engine_name: str, *, options: dict[str, Any], port: int = 0,
                 log_path: str | None = None, model_name: str | None = None,
                 ready_timeout_s: float = 60, host: str = "127.0.0.1",
                 timeouts_s: tuple[float, float] | None = None) -> LocalServer:
    """Start ``python -m acceval.serve`` and wait until ``/health`` answers.

    ``timeouts_s`` is the server's ``(idle, head)`` timeouts (``--idle-timeout``,
    ``--head-timeout``); None keeps its defaults.

    Raises TargetError, with the end of the server's stderr, if it exits or is not ready
    within ``ready_timeout_s``.
    """
    clean_stale_workdirs()
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
    (workdir / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
    cmd = server_command(engine_name, options=options, host=host, port=port,
                         log_path=log_path, model_name=model_name, timeouts_s=timeouts_s)
    started_ns = time.perf_counter_ns()
    # The server dies with this process, even if this one is SIGKILLed (acceval.serve.__main__).
    # On Linux the kernel ties it to the spawning *thread*: a respawn from a worker thread
    # (the interruption's) lives as long as that thread, which outlives the run's points.
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    with (workdir / "stdout.txt").open("wb") as out, (workdir / "stderr.txt").open("wb") as err:
        process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   env=env)
    deadline = time.monotonic() + ready_timeout_s
    match: re.Match[str] | None = None
    while True:
        code = process.poll()
        if code is not None:
            tail = _tail(workdir / "stderr.txt", 4000)
            shutil.rmtree(workdir, ignore_errors=True)
            raise TargetError(f"acceval serve {engine_name} exited with code {code} before it "
                              f"was ready:\n{tail}")
        if match is None:
            match = _READY_RE.search(_tail(workdir / "stdout.txt", 4000))
        if match is not None and _healthy(match.group(2), int(match.group(3))):
            break
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            tail = _tail(workdir / "stderr.txt", 4000)
            shutil.rmtree(workdir, ignore_errors=True)
            raise TargetError(f"acceval serve {engine_name} was not ready within "
                              f"{ready_timeout_s:g} s:\n{tail}")
        time.sleep(_POLL_S)
    ready_ns = time.perf_counter_ns()
    return LocalServer(process, match.group(1), match.group(2), int(match.group(3)),
                       started_ns, ready_ns, log_path, workdir)
