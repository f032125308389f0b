"""Fail before the load: what `run` would find late, `validate` finds first, and `run` stops
with exit 2 before it writes a run folder; every remote endpoint is preflighted."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import mock_target, run_cli, run_cli_in_process, write_study


def _study(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "fbl",
        "tasks": {"source": "builtin:arithmetic", "count": 4, "seed": 1, "max_tokens": 8},
        "targets": [mock_target("local", ttft_ms=1)],
        "load": [{"concurrency": [1], "max_duration_s": 5}],
    }
    data.update(over)
    return data


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _bad_csv(d: Path) -> dict[str, Any]:
    (d / "day.csv").write_text("hour,rps\n0,1\n1,lots\n", encoding="utf-8")
    return _study(demand={"profile": "csv:day.csv"})


BAD: dict[str, tuple[Callable[[Path], dict[str, Any]], list[str]]] = {
    "catalog id": (lambda d: _study(targets=[{**mock_target("local"),
                                             "price": {"catalog": "no-such-price"}}]),
                   ["targets[0].price.catalog", "no price 'no-such-price'"]),
    "demand csv": (_bad_csv, ["demand.profile", "line 3, column 2"]),
    "task file": (lambda d: _study(tasks={"source": "jsonl:missing.jsonl"}),
                  ["tasks.source", "does not exist"]),
    "engine name": (lambda d: _study(targets=[{"name": "local", "serve": {"engine": "mokc"}}]),
                    ["targets[0].serve.engine", "did you mean 'mock'",
                     "installed engines: mock"]),
    "engine option": (lambda d: _study(targets=[mock_target("local", ttft=5)]),
                      ["targets[0].serve.options.ttft", "did you mean 'ttft_ms'"]),
    "interruption point": (lambda d: _study(interruption={"target": "local", "at_s": 1,
                                                          "down_s": 1, "point": 7}),
                           ["interruption.point", "names no load point"]),
    "output folder": (lambda d: (d / "blocked").write_text("x") and _study(
                          output={"dir": "blocked/runs"}),
                      ["output.dir", "is a file"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_and_run_stop_on_what_run_would_find_late(cli_dir: Path, case: str) -> None:
    make, words = BAD[case]
    path = write_study(cli_dir / "s.yaml", make(cli_dir))
    # In process: both stop before any load (the closed-port test below runs the command).
    checked = run_cli_in_process("validate", str(path), cwd=cli_dir)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    ran = run_cli_in_process("run", str(path), "--no-progress", cwd=cli_dir)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    for out in (checked.stderr, ran.stderr):
        for word in words:
            assert word in out, out
        assert "Traceback" not in out
    assert not (cli_dir / "runs").exists()  # nothing was measured, no half run folder


def test_run_against_a_closed_port_exits_2_before_any_record(cli_dir: Path) -> None:
    remote = {"name": "remote", "endpoint": {"base_url": _closed_url(), "model": "m"}}
    path = write_study(cli_dir / "s.yaml", _study(targets=[mock_target("local"), remote]))
    assert run_cli("validate", str(path), cwd=cli_dir).returncode == 0
    res = run_cli("validate", "--preflight", str(path), cwd=cli_dir)
    assert res.returncode == 2 and "target 'remote'" in res.stderr
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                  cwd=cli_dir)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "target 'remote'" in res.stderr and "did not answer" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (cli_dir / "runs").exists()


def test_skip_preflight_runs_anyway(cli_dir: Path) -> None:
    remote = {"name": "remote", "endpoint": {"base_url": _closed_url(), "model": "m",
                                             "connect_timeout_s": 1}}
    path = write_study(cli_dir / "s.yaml", _study(targets=[remote]))
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                  "--skip-preflight", cwd=cli_dir)
    assert res.returncode != 2, res.stdout + res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    assert (run_dir / "records.parquet").exists()
