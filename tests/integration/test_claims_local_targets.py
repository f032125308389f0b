"""A ratio claim checked against two local `serve:` targets that serve the same model, with
no model declared: the model each server lists makes them comparable (before, every such
check was refused as "a ratio across two models"); and a claim whose conditions no point
meets says which condition failed and what to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.pipeline import execute
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase


def _target(name: str, itl_ms: float) -> dict[str, object]:
    return {"name": name, "serve": {"engine": "mock", "options": {
        "ttft_ms": 5, "itl_ms": itl_ms, "output_tokens": 8}},
        "platform": {"hardware": "cpu", "precision": "fp32"}, "price": {"usd_per_hour": 1.0}}


def _claim(cid: str, **axes: object) -> dict[str, object]:
    return {"id": cid, "subject": "the fast mock", "comparator": "the slow mock", "value": 2,
            "unit": "x", "kind": "up to", "metric": "output tokens per second",
            "axes": axes, "source": {"document": "test", "quote": "up to 2x"}}


@pytest.mark.timing
def test_claims_against_two_local_servers_of_the_same_model(tmp_path: Path) -> None:
    study = study_from_dict({
        "name": "claims-local",
        "tasks": {"source": "builtin:arithmetic", "count": 40, "seed": 1, "max_tokens": 8},
        "targets": [_target("fast", 2), _target("slow", 8)],
        "load": [{"concurrency": [2], "min_duration_s": 1.0, "max_duration_s": 2.0}],
        "claims": {"builtin": False,
                   "items": [_claim("speedup"), _claim("at-64", concurrency=64)],
                   "check": [{"claim": "speedup", "subject": "fast", "comparator": "slow",
                              "measure": "output_tokens_per_s"},
                             {"claim": "at-64", "subject": "fast", "comparator": "slow"}]},
    })
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    assert result.claims is not None
    compared, none = result.claims.checks
    assert compared.differs == [], compared.sentence   # the same model: not refused
    assert none.status == "no comparable points"
    assert any(f.startswith("concurrency: the claim's is 64") for f in none.failed)
    assert any("concurrency 64" in r for r in none.to_run)
    if compared.status != "compared":
        # A loaded host: the client fell behind, and the check says so and what to run.
        assert compared.failed and all(f.startswith("trusted:") for f in compared.failed)
        assert any("quiet machine" in r for r in compared.to_run)
        return
    assert len(compared.points) == 1
    p = compared.points[0]
    assert p.ratio == pytest.approx(p.subject_value / p.comparator_value)
    assert p.ratio > 1.0   # 2 ms against 8 ms between tokens
