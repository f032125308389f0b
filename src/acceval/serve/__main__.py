"""``python -m acceval.serve ENGINE [--option key=value ...]``: what ``spawn_server`` runs."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from acceval.errors import AccevalError
from acceval.serve import parse_options, serve_forever
from acceval.serve._process import PARENT_ENV


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m acceval.serve",
        description="Serve a local engine behind an OpenAI-compatible HTTP API.")
    parser.add_argument("engine", help="engine name (entry point group acceval.engines)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="engine option; VALUE is parsed as JSON when it can be")
    parser.add_argument("--log", default=None, metavar="PATH",
                        help="write one JSON line of ground truth per request")
    parser.add_argument("--model-name", default=None,
                        help="model name to serve (default: the engine's model id)")
    parser.add_argument("--idle-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="close a connection that sends no request for this long")
    parser.add_argument("--head-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="answer 408 to a request whose head takes longer than this")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="serve from N processes sharing the port (SO_REUSEPORT), so that "
                             "the server is not the bottleneck of a client benchmark; each has "
                             "its own engine, and --log PATH gets PATH.workerK for the others")
    parser.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    return parser


def start_workers(args: argparse.Namespace, argv: list[str]) -> tuple[int, list[Any]]:
    """The other ``--workers`` processes, listening on the same port (picked now when
    ``--port 0``); returns the port and the processes, once each said it is ready."""
    port = args.port
    holder = None
    if port == 0:  # pick the port for every worker, held until they all listen on it
        holder = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        holder.bind((args.host, 0))
        port = holder.getsockname()[1]
    base = [a for a in argv if a not in ("--reuse-port",)]
    base = _without(base, "--workers", "--port", "--log")
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    procs = []
    try:
        for k in range(1, args.workers):
            cmd = [sys.executable, "-m", "acceval.serve", *base, "--port", str(port),
                   "--reuse-port"]
            if args.log:
                cmd += ["--log", f"{args.log}.worker{k}"]
            procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, env=env))
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode(errors="replace")
            if not line.startswith("acceval serve:"):
                raise AccevalError(f"a worker of --workers {args.workers} did not start "
                                   f"(exit {proc.wait()})")
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    finally:
        if holder is not None:
            holder.close()
    return port, procs


def _without(argv: list[str], *flags: str) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in flags:
            skip = True
            continue
        if any(a.startswith(f + "=") for f in flags):
            continue
        out.append(a)
    return out


def die_with_parent() -> None:
    """When spawned by ``spawn_server``, exit as soon as the spawning process is gone, even
    if it was SIGKILLed: a local engine must not keep its port (or an accelerator) after
    the run. Linux: the kernel's parent-death signal; elsewhere a watchdog thread."""
    expected = os.environ.get(PARENT_ENV)
    if not expected:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(1, signal.SIGTERM, 0, 0, 0) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != int(expected):  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == int(expected):
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="acceval-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    die_with_parent()
    if not 1 <= args.workers <= 64:
        print("acceval serve: error: --workers must be between 1 and 64", file=sys.stderr)
        return 2
    procs: list[Any] = []
    try:
        port = args.port
        if args.workers > 1:
            port, procs = start_workers(args, argv)
        serve_forever(args.engine, host=args.host, port=port,
                      options=parse_options(args.option), log_path=args.log,
                      model_name=args.model_name, idle_timeout_s=args.idle_timeout,
                      head_timeout_s=args.head_timeout,
                      reuse_port=args.reuse_port or args.workers > 1)
    except AccevalError as exc:
        print(f"acceval serve: error: {exc}", file=sys.stderr)
        return exc.exit_code
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
