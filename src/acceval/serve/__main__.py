"""``python -m acceval.serve ENGINE [--option key=value ...]``: what ``spawn_server`` runs."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

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
    return parser


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
    args = build_parser().parse_args(argv)
    die_with_parent()
    try:
        serve_forever(args.engine, host=args.host, port=args.port,
                      options=parse_options(args.option), log_path=args.log,
                      model_name=args.model_name, idle_timeout_s=args.idle_timeout,
                      head_timeout_s=args.head_timeout)
    except AccevalError as exc:
        print(f"acceval serve: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
