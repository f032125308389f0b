"""Run the real ``acceval`` CLI in a subprocess, and write small study files for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml


def run_cli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "acceval", *args], cwd=cwd, env=env, text=True,
        capture_output=True, timeout=timeout, check=False,
    )


def write_study(path: Path, data: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def mock_target(name: str, **options: object) -> dict[str, object]:
    return {"name": name, "serve": {"engine": "mock", "options": options}}
