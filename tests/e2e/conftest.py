"""Fixtures for end-to-end tests (helpers live in tests/helpers/cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cli_dir(tmp_path: Path) -> Path:
    return tmp_path
