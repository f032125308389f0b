"""Agent targets fail before the load like inference targets: an agent endpoint that does
not answer stops `validate --preflight` and `run` with exit 2 naming the agent target, and
a local engine's bad option is named by `validate`, before any episode."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

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
