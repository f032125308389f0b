"""``python -m acceval.serve ENGINE [--option key=value ...]``: what ``spawn_server`` runs."""

from __future__ import annotations

import argparse
import sys

from acceval.errors import AccevalError
from acceval.serve import parse_options, serve_forever


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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        serve_forever(args.engine, host=args.host, port=args.port,
                      options=parse_options(args.option), log_path=args.log,
                      model_name=args.model_name)
    except AccevalError as exc:
        print(f"acceval serve: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
