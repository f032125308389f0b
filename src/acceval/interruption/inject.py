"""Fault injection at run time: the one impure part of an interruption.

An :class:`Injector` runs beside a load point (an asyncio task in the runner's loop) and, at
``at_s`` after the point starts, does one of:

- ``kill_restart``: SIGKILL the local server (no flush, no goodbye: in-flight streams are cut,
  new connections are refused), wait ``down_s``, start it again on the same port and wait
  until it answers ``/health``. The restart's own time (process start, model load, compile,
  warm-up) is measured and comes on top of ``down_s``, as it would for a real replica.
- ``freeze``: SIGSTOP the server for ``down_s``, then SIGCONT. Connections stay open and
  nothing is answered: a hung process, a stuck driver, a long pause, or a network partition
  that drops packets without a reset. Requests wait (up to the client timeout) instead of
  failing fast.
- ``command``: run a shell command (e.g. drain a remote node, block a port), and after
  ``down_s`` an optional restore command. Works for any target.

It only stamps what it did (``perf_counter_ns`` relative to the run anchor, like the
records); recovery is computed afterwards from the records (:mod:`.recovery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from typing import Protocol

from acceval.interruption.spec import Interruption
from acceval.results.runlog import FaultLog

_now = time.perf_counter_ns
_NS = 1_000_000_000
_TAIL = 2000


class Server(Protocol):
    """What the injector needs from a local server (``acceval.serve.LocalServer``)."""

    @property
    def pid(self) -> int: ...

    @property
    def ready_s(self) -> float: ...

    def kill(self) -> int: ...


class Injector:
    """Injects ``spec``'s fault at ``start_ns + at_s`` (``start_ns``: absolute perf ns)."""

    def __init__(self, spec: Interruption, *, t0_ns: int, server: Server | None = None,
                 respawn: Callable[[], Server] | None = None) -> None:
        self.spec = spec
        self.t0 = t0_ns
        self.server = server
        self.respawn = respawn
        self.new_server: Server | None = None
        self.events = FaultLog(action=spec.action, at_s=spec.at_s, down_s=spec.down_s)
        self._task: asyncio.Task[None] | None = None

    def start(self, start_ns: int | None = None) -> None:
        at = (start_ns if start_ns is not None else _now()) + int(self.spec.at_s * _NS)
        self._task = asyncio.get_running_loop().create_task(self._run(at))

    async def finish(self) -> FaultLog:
        """After the point: a fault that has not hit yet is called off; one under way is
        carried through (the server must be back for the next point)."""
        task = self._task
        if task is not None:
            if self.events.fault_ns is None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                self.events.error = self.events.error or (
                    f"the point ended before at_s={self.spec.at_s:g} s; no fault was injected")
            else:
                await task
        return self.events

    def _stamp(self) -> int:
        return _now() - self.t0

    async def _run(self, at_ns: int) -> None:
        delay = (at_ns - _now()) / _NS
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            if self.spec.action == "kill_restart":
                await self._kill_restart()
            elif self.spec.action == "freeze":
                await self._freeze()
            else:
                await self._command()
        except Exception as exc:  # the run goes on; the result says what went wrong
            self.events.error = f"{type(exc).__name__}: {exc}"[:500]

    async def _wait_down(self) -> None:
        assert self.events.fault_ns is not None
        until = self.t0 + self.events.fault_ns + int(self.spec.down_s * _NS)
        delay = (until - _now()) / _NS
        if delay > 0:
            await asyncio.sleep(delay)

    async def _kill_restart(self) -> None:
        assert self.server is not None and self.respawn is not None
        self.events.fault_ns = self._stamp()
        await asyncio.to_thread(self.server.kill)
        await self._wait_down()
        self.events.restore_ns = self._stamp()
        # spawn_server blocks while it polls /health: keep it off the loop sending requests.
        new = await asyncio.to_thread(self.respawn)
        self.events.ready_ns = self._stamp()
        self.events.restart_s = new.ready_s
        self.new_server = new

    async def _freeze(self) -> None:
        assert self.server is not None
        pid = self.server.pid
        self.events.fault_ns = self._stamp()
        os.kill(pid, signal.SIGSTOP)
        try:
            await self._wait_down()
        finally:
            self.events.restore_ns = self._stamp()
            os.kill(pid, signal.SIGCONT)
            self.events.ready_ns = self._stamp()

    async def _shell(self, command: str) -> tuple[int | None, str]:
        proc = await asyncio.create_subprocess_shell(
            command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), self.spec.command_timeout_s)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return None, f"timed out after {self.spec.command_timeout_s:g} s"
        return proc.returncode, out.decode(errors="replace")[-_TAIL:]

    async def _command(self) -> None:
        assert self.spec.command is not None
        self.events.fault_ns = self._stamp()
        self.events.command_rc, self.events.command_output = await self._shell(self.spec.command)
        await self._wait_down()
        self.events.restore_ns = self._stamp()
        if self.spec.restore_command:
            self.events.restore_rc, self.events.restore_output = await self._shell(
                self.spec.restore_command)
        self.events.ready_ns = self._stamp()
