"""An unknown key is named in full in the error path, brackets included, and the hint lists
the fields of the section that holds it (issue 30: ``bad[0]`` was dropped from the path and
the hint listed the parent section's fields)."""

from __future__ import annotations

import pytest

from acceval.errors import StudyError
from acceval.study import study_from_dict


def _problems(extra_target: dict[str, object]) -> list[tuple[str, str, str]]:
    data = {"name": "k", "tasks": {"source": "builtin:arithmetic", "count": 5},
            "targets": [{"name": "m", "serve": {"engine": "mock"}, **extra_target}],
            "load": [{"concurrency": [1]}]}
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    return info.value.problems


def test_a_key_with_brackets_is_kept_in_the_path() -> None:
    ((path, _, hint),) = _problems({"bad[0]": 1})
    assert path == "targets[0].bad[0]"
    assert "allowed: name, endpoint, serve" in hint


def test_a_nested_key_with_brackets_names_its_own_section() -> None:
    ((path, _, hint),) = _problems({"platform": {"chips[2]": 3}})
    assert path == "targets[0].platform.chips[2]"
    assert "did you mean 'chips'?" in hint and "allowed: hardware, chips" in hint


def test_validator_wrappers_are_still_left_out() -> None:
    data = {"name": "k", "tasks": {"source": "builtin:arithmetic", "count": 5},
            "targets": [{"name": "m", "serve": {"engine": "mock"}}],
            "load": [{"concurrency": [1], "bogus": 1}]}
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    assert [p[0] for p in info.value.problems] == ["load[0].bogus"]
