"""What-if overrides of a stored study: dotted paths, targets by name or '*', clear errors."""

from __future__ import annotations

import pytest

from acceval.errors import StudyError
from acceval.study import apply_overrides, study_from_dict

BASE = {
    "name": "w",
    "targets": [
        {"name": "a", "endpoint": {"base_url": "http://127.0.0.1:1/v1", "model": "m"},
         "price": {"usd_per_hour": 1.0}},
        {"name": "b", "endpoint": {"base_url": "http://127.0.0.1:2/v1", "model": "m"}},
    ],
    "slo": {"ttft_ms": 500},
}


def test_paths_set_values_parsed_as_yaml() -> None:
    out = apply_overrides(BASE, ["slo.ttft_ms=250", "targets.a.price.usd_per_hour=2.5",
                                 "targets.*.energy.pue=1.4", "quality.fail_exit=true"])
    s = study_from_dict(out)
    assert s.slo.ttft_ms == 250
    assert s.targets[0].price is not None and s.targets[0].price.usd_per_hour == 2.5
    assert [t.energy.pue for t in s.targets] == [1.4, 1.4]
    assert s.quality.fail_exit is True
    assert BASE["slo"] == {"ttft_ms": 500}  # the stored study is not mutated


def test_unknown_target_names_the_choices() -> None:
    with pytest.raises(StudyError, match="no item named 'zz'") as info:
        apply_overrides(BASE, ["targets.zz.price.usd_per_hour=1"])
    assert "a, b" in info.value.problems[0][2]


def test_missing_equals_sign() -> None:
    with pytest.raises(StudyError, match="path=value"):
        apply_overrides(BASE, ["slo.ttft_ms"])


def test_invalid_value_is_caught_by_validation() -> None:
    with pytest.raises(StudyError, match=r"slo\.ttft_ms"):
        study_from_dict(apply_overrides(BASE, ["slo.ttft_ms=-3"]))


def test_a_value_that_is_not_yaml_is_a_study_error_naming_the_path() -> None:
    with pytest.raises(StudyError) as exc:
        apply_overrides({"slo": {}}, ["slo.ttft_ms=[1"])
    assert "slo.ttft_ms=[1" in str(exc.value) and exc.value.exit_code == 2
