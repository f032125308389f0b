"""Pure parts of the HTML report: the economics view, intervals, chart data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acceval.report._charts import _bucket_stats, _pareto, timeline
from acceval.report._econ import run_econ, target_econ
from acceval.results.store import read_records
from helpers import run_fixture


def test_cost_interval_divides_attempt_cost_by_the_accuracy_bounds(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "run")
    t = result.target("fast")
    assert t.economics is not None
    for pc in t.economics.points:
        acc = t.point(pc.label).summary.accuracy  # type: ignore[union-attr]
        assert acc is not None and acc.ci_low and acc.ci_high
        attempt = pc.bill.cost_per_attempt_usd
        assert attempt is not None and pc.cost_per_correct_ci_usd is not None
        assert pc.cost_per_correct_ci_usd == (attempt / acc.ci_high, attempt / acc.ci_low)


def test_pareto_keeps_points_not_beaten_on_both_axes() -> None:
    pts = [(1.0, 10.0), (2.0, 8.0), (1.5, 7.0), (3.0, 2.0), (0.5, 9.0)]
    assert _pareto(pts) == [(1.0, 10.0), (2.0, 8.0), (3.0, 2.0)]


def test_bucket_stats_counts_and_percentiles() -> None:
    sec = np.array([0.0, 0.0, 2.0])
    assert _bucket_stats(sec, None, 3) == [2.0, 0.0, 1.0]
    assert _bucket_stats(sec, np.array([1.0, 3.0, np.nan]), 3) == [
        pytest.approx(2.9), None, None]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    d = tmp_path_factory.mktemp("r") / "run"
    return d, run_fixture.build(d)


def test_target_econ_picks_the_cheapest_point_within_the_slo(built: tuple) -> None:
    _, result = built
    fast, cheap = (target_econ(t, result) for t in result.targets)
    assert fast.at_slo is not None and cheap.at_slo is None  # cheap does not qualify
    assert cheap.cheapest is not None and cheap.cheapest.label == "concurrency=4"
    costs = [p.cost_per_correct_usd for p in fast.points.values()]
    assert fast.cost_per_correct_usd == min(c for c in costs if c is not None)
    lo, hi = fast.cost_per_correct_ci_usd
    assert lo < fast.cost_per_correct_usd < hi
    assert fast.energy_level == "wall" and fast.joules_per_correct is not None


def test_run_econ_ranks_gate_passing_targets_at_the_slo(built: tuple) -> None:
    _, result = built
    run = run_econ(result)
    assert run.winner == "fast" and run.ranking == ("fast",)
    assert run.excluded["cheap"].startswith("fails the quality level")
    assert run.flips == ()  # one qualified target: nothing to flip
    assert run.verdict_lines[0] == result.verdict.headline


def test_timeline_counts_every_measured_send(built: tuple) -> None:
    d, result = built
    records = read_records(d)
    fig = timeline(result, records).figure
    assert fig is not None
    sent = [tr for tr in fig["data"] if tr.get("yaxis") == "y"]
    assert sum(sum(tr["y"]) for tr in sent) == records.num_rows
    errors = [tr for tr in fig["data"] if tr.get("yaxis") == "y3"]
    n_err = sum(1 for e in records.column("error_kind").to_pylist() if e is not None)
    assert sum(sum(tr["y"]) for tr in errors) == n_err
