"""Agent targets fail before the load like inference targets: an agent endpoint that does
not answer stops `validate --preflight` and `run` with exit 2 naming the agent target, so
does an agent program's proxied model (`command.model.base_url`), and a local engine's bad
option is named by `validate`, before any episode."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from helpers.cli import run_cli, write_study


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _study(*targets: dict[str, Any]) -> dict[str, Any]:
    return {"name": "agents-preflight",
            "agents": {"trials": 1, "only": ["switch-language"], "targets": list(targets)}}


def test_an_agent_endpoint_that_does_not_answer_exits_2_naming_it(cli_dir: Path) -> None:
    remote = {"name": "my-agent", "endpoint": {"base_url": _closed_url(), "model": "m",
                                               "connect_timeout_s": 1}}
    path = write_study(cli_dir / "s.yaml", _study({"name": "p", "policy": {}}, remote))
    res = run_cli("validate", "--preflight", str(path), cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "agents.targets[my-agent]" in res.stderr and "did not answer" in res.stderr
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                  cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "agents.targets[my-agent]" in res.stderr and "Traceback" not in res.stderr
    assert not (cli_dir / "runs").exists()


def test_a_local_engines_bad_tool_policy_is_named_by_validate(cli_dir: Path) -> None:
    bad = {"name": "m", "serve": {"engine": "mock", "options": {"tool_policy": "sloppy"}}}
    path = write_study(cli_dir / "s.yaml", _study(bad))
    res = run_cli("validate", str(path), cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "agents.targets[0].serve.options.tool_policy" in res.stderr
    assert "Traceback" not in res.stderr


def test_an_agent_program_that_is_not_there_exits_2_naming_the_target(cli_dir: Path) -> None:
    mine = {"name": "my-program", "command": ["no-such-agent-program", "--fast"]}
    path = write_study(cli_dir / "s.yaml", _study(mine))
    for cmd in (["validate"], ["run", "--no-progress", "--out", str(cli_dir / "runs")]):
        res = run_cli(*cmd, str(path), cwd=cli_dir)
        assert res.returncode == 2, res.stdout + res.stderr
        assert "agents.targets[0].command (target my-program)" in res.stderr
        assert "no-such-agent-program" in res.stderr and "Traceback" not in res.stderr
    assert not (cli_dir / "runs").exists()


class _Models(BaseHTTPRequestHandler):
    """An upstream that lists one model, noting each request's path and Authorization."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        body = json.dumps({"object": "list", "data": [{"id": "any-model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    _Models.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _program(base_url: str, **model: Any) -> dict[str, Any]:
    return {"name": "my-program", "command": {
        "argv": [sys.executable, "-c", "pass"], "model": {"base_url": base_url, **model}}}


def test_an_agent_programs_model_that_does_not_answer_exits_2_naming_its_field(
        cli_dir: Path, upstream: str) -> None:
    ok = {**_program(upstream), "name": "fine"}
    path = write_study(cli_dir / "s.yaml", _study(ok, _program(_closed_url())))
    where = "agents.targets[1].command.model.base_url (target my-program)"
    res = run_cli("validate", "--preflight", str(path), cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert where in res.stderr and "did not answer" in res.stderr, res.stderr
    assert "agents.targets[0]" not in res.stderr  # the one that answers is not named
    assert _Models.seen == [("/v1/models", "")]
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                  cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert where in res.stderr and "Traceback" not in res.stderr
    assert not (cli_dir / "runs").exists()


def test_an_agent_programs_model_that_answers_passes_asked_with_its_key(
        cli_dir: Path, upstream: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any model list will do (the program picks its model); the key goes with the
    question, as the recording proxy would send it."""
    monkeypatch.setenv("UPSTREAM_KEY", "sk-test-123")
    path = write_study(cli_dir / "s.yaml",
                       _study(_program(upstream, api_key_env="UPSTREAM_KEY")))
    res = run_cli("validate", "--preflight", str(path), cwd=cli_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    assert _Models.seen == [("/v1/models", "Bearer sk-test-123")]
    monkeypatch.delenv("UPSTREAM_KEY")
    res = run_cli("validate", "--preflight", str(path), cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "UPSTREAM_KEY" in res.stderr and "Traceback" not in res.stderr
