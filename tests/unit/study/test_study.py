"""The study file: valid files load, every bad field is named with a path and a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.study import load_study, study_from_dict, study_to_yaml

GOOD = {
    "name": "demo",
    "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}}],
    "load": [{"concurrency": [1, 4]}, {"poisson_rps": [5.0]}],
    "slo": {"ttft_ms": 800, "tpot_ms": 60},
}


def _problems(data: object) -> dict[str, tuple[str, str]]:
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    return {path: (msg, hint) for path, msg, hint in info.value.problems}


def test_good_study_loads_with_defaults() -> None:
    s = study_from_dict(GOOD)
    assert s.targets[0].endpoint is not None
    assert s.targets[0].endpoint.api == "completions"
    assert [p.kind for p in s.load] == ["concurrency", "poisson"]
    assert s.load[0].levels == [1.0, 4.0]
    assert s.slo.percentile == 95.0


def test_typo_is_named_with_suggestion() -> None:
    ep = {"base_url": "http://x/v1", "modle": "m"}
    bad = {**GOOD, "targets": [{"name": "a", "endpoint": ep}]}
    probs = _problems(bad)
    assert "targets[0].endpoint.modle" in probs
    assert "did you mean 'model'" in probs["targets[0].endpoint.modle"][1]
    assert "targets[0].endpoint.model" in probs  # and the missing one is reported too


def test_every_bad_field_is_reported_not_just_the_first() -> None:
    bad = {"name": "bad name!", "targets": [], "slo": {"ttft_ms": -5}, "bogus": 1}
    probs = _problems(bad)
    assert {"name", "targets", "slo.ttft_ms", "bogus"} <= set(probs)


def test_load_point_needs_exactly_one_kind() -> None:
    bad = {**GOOD, "load": [{"concurrency": [1], "poisson_rps": [2.0]}]}
    probs = _problems(bad)
    assert any("exactly one of" in msg for msg, _ in probs.values())


def test_duplicate_targets_and_unknown_reference() -> None:
    t = GOOD["targets"][0]  # type: ignore[index]
    bad = {**GOOD, "targets": [t, t], "quality": {"relative_to": "zzz"}}
    msg = str(_problems(bad))
    assert "unique" in msg


def test_relative_to_must_name_a_target() -> None:
    bad = {**GOOD, "quality": {"relative_to": "nope"}}
    msg = str(_problems(bad))
    assert "nope" in msg and "not a target" in msg


def test_target_needs_endpoint_or_serve() -> None:
    bad = {**GOOD, "targets": [{"name": "a"}]}
    assert "endpoint" in str(_problems(bad))


def test_yaml_errors_name_line(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("name: x\ntargets: [\n", encoding="utf-8")
    with pytest.raises(StudyError, match="line"):
        load_study(p)


def test_missing_file_is_a_study_error(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="no such study file"):
        load_study(tmp_path / "nope.yaml")


def test_top_level_must_be_mapping() -> None:
    with pytest.raises(StudyError, match="mapping"):
        study_from_dict([1, 2])


def test_round_trip_through_yaml(tmp_path: Path) -> None:
    s = study_from_dict(GOOD)
    p = tmp_path / "s.yaml"
    p.write_text(study_to_yaml(s), encoding="utf-8")
    assert load_study(p) == s


def test_error_message_is_readable() -> None:
    with pytest.raises(StudyError) as info:
        study_from_dict({"name": "x", "targets": [{"name": "a", "endpoint": {"base_url": "ftp://"}}]})
    text = str(info.value)
    assert "targets[0].endpoint.base_url" in text and "hint:" in text
