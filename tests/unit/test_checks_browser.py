"""Fail before the load, for an ``agents:`` section: the checks start the browser the agents
part would use (the same lookup and launch) and, when it cannot start, say what to install
and whether the run would go on without the agents part."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from acceval.agents import browser
from acceval.checks import check_runnable
from acceval.errors import StudyError
from acceval.study import study_from_dict

AGENTS = {"only": ["buy-one"], "trials": 1, "targets": [{"name": "p", "policy": {}}]}
MOCK = {"name": "a", "serve": {"engine": "mock"}}


def _study(**over: Any) -> dict[str, Any]:
    return {"name": "browser-checks", "tasks": {"source": "builtin:arithmetic", "count": 3},
            "agents": AGENTS, **over}


def _no_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCEVAL_CHROMIUM", str(tmp_path / "no-such-chromium"))


def test_with_other_targets_a_missing_browser_is_said_up_front_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_chromium(tmp_path, monkeypatch)
    ready = check_runnable(study_from_dict(_study(targets=[MOCK])), base_dir=tmp_path)
    (note,) = [n for n in ready.notes if n.startswith("agents:")]
    assert "apt-get install chromium" in note and "ACCEVAL_CHROMIUM" in note
    assert "measure the rest of the study and skip the agents part" in note


def test_with_nothing_else_to_measure_a_missing_browser_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_chromium(tmp_path, monkeypatch)
    with pytest.raises(StudyError) as info:
        check_runnable(study_from_dict(_study()), base_dir=tmp_path)
    ((path, msg, hint),) = info.value.problems
    assert path == "agents" and "apt-get install chromium" in msg
    assert "the run would stop here" in hint


def test_a_missing_browser_library_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(browser, "find_spec",
                        lambda name: None if name == "playwright" else real(name))
    ready = check_runnable(study_from_dict(_study(targets=[MOCK])), base_dir=tmp_path)
    (note,) = [n for n in ready.notes if n.startswith("agents:")]
    assert "pip install 'acceval[agents]'" in note


@pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                    reason="needs playwright (pip install 'acceval[agents]')")
def test_a_chromium_that_does_not_launch_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCEVAL_CHROMIUM", "/bin/false")
    why = browser.start_problem()
    assert why is not None and "could not start Chromium at /bin/false" in why
    assert "apt-get install chromium" in why


@pytest.mark.skipif(browser.unavailable() is not None,
                    reason=f"needs Chromium and playwright: {browser.unavailable()}")
def test_a_browser_that_starts_passes_without_a_note(tmp_path: Path) -> None:
    ready = check_runnable(study_from_dict(_study()), base_dir=tmp_path)
    assert not [n for n in ready.notes if n.startswith("agents:")]


def test_a_run_beside_other_parts_looks_the_browser_up_without_starting_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `acceval run` asks when agents are not all it measures: the lookup, not the
    launch; a Chromium that is there but does not start is then the agents part's to say."""
    from acceval.pipeline.measure import _agents_only

    monkeypatch.setenv("ACCEVAL_CHROMIUM", "/bin/false")  # found, but never starts
    with_targets = study_from_dict(_study(targets=[MOCK]))
    assert not _agents_only(with_targets)
    ready = check_runnable(with_targets, base_dir=tmp_path, launch_browser=False)
    assert not [n for n in ready.notes if n.startswith("agents:")]
    if importlib.util.find_spec("playwright") is not None:  # the launch would have said so
        ready = check_runnable(with_targets, base_dir=tmp_path)
        assert [n for n in ready.notes if "/bin/false" in n]
    assert _agents_only(study_from_dict(_study()))
