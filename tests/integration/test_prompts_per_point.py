"""A server's prefix cache and the load points (tasks.per_point), against the mock server
with its simulated prefix cache: re-sending the same prompts warms the cache from the second
point on; fresh tasks per point keep it cold, and the correctness join still holds."""

from __future__ import annotations

from pathlib import Path

from acceval.pipeline import execute
from acceval.run_result import RunResult
from acceval.study import study_from_dict


def _run(tmp: Path, per_point: str) -> RunResult:
    study = study_from_dict({
        "name": f"cache-{per_point}",
        "tasks": {"source": "builtin:arithmetic", "count": 60, "seed": 2, "max_tokens": 8,
                  "per_point": per_point},
        "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
            "answers": "@tasks", "prefix_cache_block": 1, "correct_fraction": 1.0}},
            "price": {"usd_per_hour": 1.0, "source": "test figure"}}],
        "load": [{"concurrency": [4, 8]}],
    })
    result, _ = execute(study, base_dir=tmp, out_dir=tmp / "runs", progress=False)
    return result


def test_the_same_prompts_hit_the_cache_from_the_second_point(tmp_path: Path) -> None:
    t = _run(tmp_path, "same").target("m")
    first, second = t.points
    assert first.summary.cached_prompt_fraction is not None
    assert first.summary.cached_prompt_fraction < 0.2     # only repeats within the draw
    assert second.summary.cached_prompt_fraction == 1.0   # every prompt seen at point 1
    assert [p.task_set for p in t.points] == [0, 0]


def test_fresh_tasks_per_point_keep_the_cache_cold_and_are_scored(tmp_path: Path) -> None:
    result = _run(tmp_path, "fresh")
    t = result.target("m")
    second = t.points[1]
    assert [p.task_set for p in t.points] == [0, 1]
    assert second.summary.cached_prompt_fraction is not None
    assert second.summary.cached_prompt_fraction < 0.2
    for p in t.points:  # the mock knew every fresh set's answers, and the scorer too
        acc = p.summary.accuracy
        assert acc is not None and acc.n == 60 and acc.correct == 60
    assert not any("per_point" in n for n in result.warnings)
