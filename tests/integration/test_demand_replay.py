"""A compressed diurnal profile replayed live against ``acceval serve --engine mock`` through
the pipeline: every scheduled arrival is sent, and each compressed hour's achieved rate
matches the profile within Poisson noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from acceval.capacity.replay import REPLAY_LABEL, plan_replay
from acceval.pipeline import execute, load_result
from acceval.results.store import read_records
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

STUDY = {
    "name": "replay", "seed": 5,
    "tasks": {"source": "builtin:arithmetic", "count": 30, "seed": 1, "max_tokens": 8},
    "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
        "ttft_ms": 2, "itl_ms": 1, "output_tokens": 4, "answers": "@tasks"}}}],
    "load": [{"poisson_rps": [20], "min_duration_s": 0.5, "max_duration_s": 0.5}],
    "slo": {"ttft_ms": 200, "e2e_ms": 400},
    "demand": {"profile": "builtin:business-hours", "peak_rps": 160,
               "replay": {"compress_to_s": 4, "seed": 9}},
}


def test_replay_follows_the_profile_hour_by_hour(tmp_path: Path) -> None:
    study = study_from_dict(STUDY)
    result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs",
                              progress=False)
    t = result.targets[0]
    assert t.failure is None and t.replay is not None
    rep = t.replay
    assert len(t.points) == 1  # the replay is kept out of the latency curve

    # The runner sent exactly the seeded NHPP schedule: same offsets, nothing dropped.
    plan = plan_replay(study.demand, study.seed, tmp_path)  # type: ignore[arg-type]
    assert plan is not None
    table = read_records(run_dir)
    sel = table.filter(pc.equal(table["load_label"], REPLAY_LABEL))
    offsets = np.sort(np.asarray(sel["scheduled_ns"].to_pylist()) - rep.point.started_ns)
    assert np.array_equal(offsets, plan.schedule_ns)
    assert sel.num_rows == rep.point.sent == rep.sent == plan.schedule_ns.size
    assert rep.errors == 0

    # Achieved per compressed hour against the profile: 4 sigma per bucket, chi-square overall.
    hours = rep.hours
    assert len(hours) == 24
    for h in hours:
        sigma = np.sqrt(h.expected)
        assert abs(h.sent - h.expected) <= 4 * sigma + 1, h
    assert rep.within_4_sigma is True
    assert rep.chi2_p > 1e-3
    busiest = max(hours, key=lambda h: h.intended_rps)
    quietest = min(hours, key=lambda h: h.intended_rps)
    assert (busiest.achieved_rps or 0) > 4 * (quietest.achieved_rps or 0)  # the day's shape shows

    # Re-analysis from the files gives the same replay summary.
    again = load_result(run_dir, recompute=True).targets[0].replay
    assert again is not None and again.hours == hours
