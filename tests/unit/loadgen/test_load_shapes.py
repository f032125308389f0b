"""Load shapes: burst (rate = inf), ramp, step and trace replay, as schedules and as whole
points run against a real SSE server on 127.0.0.1 (schedule lag reported as for any open
loop)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from acceval.errors import StudyError
from acceval.loadgen.arrivals import varying
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, run, run_point
from acceval.loadgen.spec import Burst, Ramp, Step, TraceSpeed, load_point
from acceval.results.records import Record
from acceval.study import study_from_dict
from acceval.targets import OpenAITarget
from acceval.targets.spec import Endpoint
from helpers.sse_server import ServerConfig, SSEServer

NS = 1_000_000_000


def test_yaml_keys_pick_the_shapes_and_store_only_their_own_key() -> None:
    fams = [load_point(d) for d in ({"burst": [50]}, {"ramp_rps": [0, 10]},
                                    {"step_rps": [1, 2], "step_s": 3},
                                    {"trace_speed": [1, 2]})]
    assert [type(f) for f in fams] == [Burst, Ramp, Step, TraceSpeed]
    assert [f.label(f.levels[0]) for f in fams] == [
        "burst 50", "ramp 0 → 10 rps", "step 1, 2 rps (3 s each)", "trace ×1"]
    stored = fams[0].model_dump()
    assert stored["burst"] == [50] and "concurrency" not in stored
    # The families of 0.1 keep storing every legacy key (run folders read the same).
    assert load_point({"concurrency": [1]}).model_dump()["poisson_rps"] is None


def test_a_burst_sends_everything_at_zero() -> None:
    offsets = Burst(burst=[7]).offsets(7, 120.0, rng=None)
    assert offsets.tolist() == [0] * 7


def _counts(offsets: np.ndarray[Any, Any], edges_s: list[float]) -> list[int]:
    return np.histogram(offsets / NS, bins=edges_s)[0].tolist()  # type: ignore[no-any-return]


def test_steps_hold_each_rate_for_step_s() -> None:
    off = varying([(10.0, 100.0, 100.0), (10.0, 0.0, 0.0), (10.0, 400.0, 400.0)],
                  rng=np.random.default_rng(1))
    got = _counts(off, [0, 10, 20, 30])
    assert got[1] == 0
    for n, want in ((got[0], 1000), (got[2], 4000)):
        assert abs(n - want) < 5 * want ** 0.5         # Poisson: within 5 sigma
    assert np.all(np.diff(off) >= 0) and off.max() < 30 * NS


def test_a_ramp_rises_linearly() -> None:
    off = Ramp(ramp_rps=[0, 200], max_duration_s=20).offsets(
        100, 20.0, rng=np.random.default_rng(2))
    # Expected arrivals in [0, 10) s: ∫ 10 t dt = 500; in [10, 20): 1500.
    first, second = _counts(off, [0, 10, 20])
    assert abs(first - 500) < 5 * 500 ** 0.5 and abs(second - 1500) < 5 * 1500 ** 0.5
    assert Ramp(ramp_rps=[0, 200]).levels == [100.0]


def test_a_trace_is_sent_at_its_timestamps_divided_by_the_speed() -> None:
    at = [0, 1 * NS, 1 * NS, 4 * NS]
    fam = TraceSpeed(trace_speed=[2])
    assert fam.offsets(2, 120.0, rng=None, at_ns=at).tolist() == [0, NS // 2, NS // 2, 2 * NS]
    assert fam.offsets(1, 3.0, rng=None, at_ns=at).tolist() == [0, NS, NS]   # past the horizon
    with pytest.raises(ValueError, match="mooncake"):
        fam.offsets(1, 3.0, rng=None, at_ns=[None])


@pytest.mark.parametrize(("load", "words"), [
    ({"burst": [0]}, "positive"), ({"ramp_rps": [5]}, "two or more rates"),
    ({"ramp_rps": [0, 0]}, "one of them positive"), ({"step_rps": [-1, 2]}, "rates >= 0"),
    ({"burst": [10], "warmup_requests": 2}, "warm up with a load family"),
    ({"step_rps": [1, 1, 1], "step_s": 2e6}, "30 days")])
def test_bad_shapes_are_refused_naming_the_load_entry(load: dict[str, Any], words: str) -> None:
    with pytest.raises(StudyError) as err:
        study_from_dict({"name": "s", "load": [load], "targets": [
            {"name": "a", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}]})
    (path, msg, _), = err.value.problems
    assert path.startswith("load[0]") and words in msg


def test_a_shape_point_runs_its_whole_horizon_whatever_min_requests_says() -> None:
    spec = PointSpec.from_study(Step(step_rps=[5, 10], step_s=4), 7.5, 0, 1, n_prompts=2,
                                attempts=1)
    assert (spec.min_duration_s, spec.max_duration_s, spec.min_requests) == (8.0, 8.0, 1)
    with pytest.raises(ValidationError):
        Burst(burst=[5], warmup_s=1.0)


PROMPTS = [Prompt(f"task-{i}", prompt=f"q {i}", max_tokens=2, at_ns=i * 20_000_000)
           for i in range(10)]


async def _point(spec: PointSpec) -> tuple[PointRun, list[Record]]:
    recs: list[Record] = []
    async with SSEServer(ServerConfig(tokens=2)) as srv:
        target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m"))
        try:
            res = await run_point(target, PROMPTS, spec, recs.append,
                                  t0_ns=time.perf_counter_ns())
        finally:
            await target.close()
    return res, recs


def test_a_burst_point_sends_n_at_once_with_its_lag_and_no_requested_rate() -> None:
    spec = PointSpec.from_study(Burst(burst=[25]), 25, 0, 1, n_prompts=10, attempts=1)
    res, recs = run(_point(spec))
    assert res.sent == 25 == len(recs) and res.errors == 0
    assert {r.scheduled_ns - res.started_ns for r in recs} == {0}  # type: ignore[operator]
    assert res.requested_rate_rps is None and res.lag_max_ms is not None
    assert res.lag_max_ms >= res.lag_p50_ms >= 0  # type: ignore[operator]


def test_a_trace_point_replays_the_task_times() -> None:
    spec = PointSpec.from_study(TraceSpeed(trace_speed=[2]), 2, 0, 1, n_prompts=10, attempts=1)
    res, recs = run(_point(spec))
    by_id = sorted(recs, key=lambda r: r.request_id)
    assert [r.task_id for r in by_id] == [p.task_id for p in PROMPTS]
    assert [r.scheduled_ns - res.started_ns for r in by_id] == [  # type: ignore[operator]
        i * 10_000_000 for i in range(10)]
    assert res.seeds["arrivals"] == "task timestamps"
    assert res.requested_rate_rps == pytest.approx(100.0)   # 9 gaps over 90 ms
    assert res.lag_p99_ms is not None


def test_validate_refuses_a_trace_replay_of_untimed_tasks(tmp_path: Any) -> None:
    from acceval.checks import check_runnable

    study = study_from_dict({"name": "s", "load": [{"trace_speed": [1]}], "targets": [
        {"name": "a", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}]})
    with pytest.raises(StudyError) as err:
        check_runnable(study, base_dir=tmp_path)
    assert ("load[0].trace_speed" in [p for p, _, _ in err.value.problems])
