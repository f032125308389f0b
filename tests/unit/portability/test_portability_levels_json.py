"""Each portability level's details is its own model, and result.json files written when the
details were dictionaries read into them (and write back the same keys)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from acceval.portability import (
    ArtifactCheck,
    ArtifactLevel,
    ContractCheck,
    PerformanceDetails,
    PerformanceLevel,
    SourceDetails,
    SourceLevel,
)
from acceval.portability.assess import PortabilityLevels

# The keys ArtifactCheck.to_dict() wrote, in its order (acceval artifact-check printed these).
OLD_CHECK_KEYS = ["path", "runtime_a", "runtime_b", "manifest_status", "manifest_problems",
                  "files", "total_bytes", "load_errors", "prompts", "agreement_rate",
                  "disagreements", "accuracy_a", "accuracy_b", "max_abs_logit_diff",
                  "logits_compared", "verdict", "reasons", "wall_s"]


def _check(**kw: Any) -> ArtifactCheck:
    return ArtifactCheck(path="/m", runtime_a="ortgenai", runtime_b="numpy",
                         manifest_status="verified", **kw)


def test_the_check_writes_the_keys_it_always_wrote() -> None:
    check = _check(prompts=2, agreement_rate=0.5, disagreements=(("p", "a", "b"),),
                   max_abs_logit_diff=1e-5)
    d = check.model_dump(mode="json")
    assert list(d) == OLD_CHECK_KEYS
    assert d["disagreements"] == [["p", "a", "b"]]
    assert ArtifactCheck.model_validate_json(json.dumps(d)) == check


def test_non_finite_logits_add_the_flag_and_read_back() -> None:
    check = _check(max_abs_logit_diff=None, logits_non_finite=True, verdict="fail")
    d = check.model_dump(mode="json")
    assert list(d) == [*OLD_CHECK_KEYS, "logits_non_finite"]
    assert d["max_abs_logit_diff"] is None and d["logits_non_finite"] is True
    again = ArtifactCheck.model_validate(d)
    assert again.logits_non_finite and again.max_abs_logit_diff is None


def _old_levels(artifact_details: dict[str, Any]) -> dict[str, Any]:
    """The levels as result.json held them with ``details: dict[str, Any]``."""
    return {
        "source": {"level": "source", "verdict": "pass", "summary": "s", "evidence": [],
                   "details": {}},
        "artifact": {"level": "artifact", "verdict": "pass", "summary": "a", "evidence": [],
                     "details": artifact_details},
        "performance": {"level": "performance", "verdict": "pass", "summary": "p",
                        "evidence": [], "details": {
                            "operating_point": "concurrency 4",
                            "checks": [{"name": "p95 ttft_ms", "measured": 10.0,
                                        "bound": 50.0, "ok": True, "margin": 40.0,
                                        "margin_pct": 80.0}],
                            "goodput_ratio_to_reference": 0.5}},
    }


def test_stored_levels_read_into_their_models() -> None:
    old_check = {**_check(verdict="pass").model_dump(mode="json"),
                 "max_abs_logit_diff": None, "logits_non_finite": True}
    levels = PortabilityLevels.model_validate(_old_levels(old_check))
    assert isinstance(levels.source, SourceLevel)
    assert levels.source.details == SourceDetails()
    assert isinstance(levels.artifact, ArtifactLevel)
    assert levels.artifact.details is not None and levels.artifact.details.logits_non_finite
    perf = levels.performance
    assert isinstance(perf, PerformanceLevel) and perf.details.operating_point == "concurrency 4"
    assert perf.details.checks == [ContractCheck(name="p95 ttft_ms", measured=10.0, bound=50.0,
                                                 ok=True, margin=40.0, margin_pct=80.0)]
    assert perf.details.goodput_ratio_to_reference == 0.5
    back = json.loads(levels.model_dump_json())
    assert back["artifact"]["details"] == old_check
    assert back["performance"]["details"] == _old_levels({})["performance"]["details"]


def test_a_level_without_a_check_stored_as_empty_reads_as_none() -> None:
    levels = PortabilityLevels.model_validate(_old_levels({}))
    assert levels.artifact.details is None
    empty = {"level": "performance", "verdict": "not assessed", "summary": "x",
             "details": {}}
    perf = PerformanceLevel.model_validate(empty)
    assert perf.details == PerformanceDetails() and perf.details.checks == []


def test_a_level_is_named_by_its_literal() -> None:
    wrong = {"level": "source", "verdict": "pass", "summary": "x", "details": {}}
    with pytest.raises(ValidationError, match="performance"):
        PerformanceLevel.model_validate(wrong)
    assert SourceLevel.model_validate(wrong).details.lines_added is None
