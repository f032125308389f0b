"""Which Chromium the agent episodes start: the headless build when the host has it (it spends
less CPU per episode), the full browser otherwise, and ``ACCEVAL_CHROMIUM`` over both."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.agents.browser import chromium_path


def _exe(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ACCEVAL_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    return tmp_path


def test_the_headless_shell_is_preferred_when_present(bin_dir: Path) -> None:
    _exe(bin_dir, "chromium")
    shell = _exe(bin_dir, "chromium-headless-shell")
    assert chromium_path() == str(shell)


def test_the_full_browser_serves_when_the_shell_is_absent(bin_dir: Path) -> None:
    full = _exe(bin_dir, "chromium")
    assert chromium_path() == str(full)


def test_the_environment_names_the_browser_over_both(
        bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _exe(bin_dir, "chromium-headless-shell")
    mine = _exe(bin_dir, "my-chrome")
    monkeypatch.setenv("ACCEVAL_CHROMIUM", str(mine))
    assert chromium_path() == str(mine)
    monkeypatch.setenv("ACCEVAL_CHROMIUM", str(bin_dir / "nothing"))
    assert chromium_path() is None
