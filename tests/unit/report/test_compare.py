"""Comparing runs: the noise rules (bootstrap for latency, Wilson overlap for accuracy)."""

from __future__ import annotations

import numpy as np
import pytest

from acceval.report.compare import bootstrap_p95_diff, compare_runs, render_compare
from acceval.results.store import read_records
from helpers import run_fixture


def test_bootstrap_interval_contains_zero_for_the_same_sample() -> None:
    x = np.random.default_rng(1).gamma(4, 25, 300)
    lo, hi = bootstrap_p95_diff(x, x.copy(), n_boot=400)
    assert lo <= 0 <= hi


def test_bootstrap_interval_excludes_zero_for_a_clear_shift() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.gamma(4, 25, 300), rng.gamma(4, 25, 300) + 80
    lo, hi = bootstrap_p95_diff(a, b, n_boot=400)
    assert lo > 0 and hi > lo


def test_bootstrap_is_seeded_and_ignores_nan() -> None:
    a = np.array([1.0, 2.0, np.nan, 3.0])
    b = np.array([2.0, 3.0, 4.0])
    assert bootstrap_p95_diff(a, b, seed=5) == bootstrap_p95_diff(a, b, seed=5)
    assert bootstrap_p95_diff(np.array([np.nan]), b) is None


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    root = tmp_path_factory.mktemp("runs")
    a = run_fixture.build(root / "a", seed=0)
    b = run_fixture.build(root / "b", seed=1, slow=2.0)
    return [(a, read_records(root / "a")), (b, read_records(root / "b"))]


def test_compare_runs_flags_a_twice_slower_run(two_runs: list) -> None:
    (a, ra), (b, rb) = two_runs
    rows = compare_runs([a, b], [ra, rb], n_boot=300)
    tpot = [r for r in rows if r.metric == "tpot_p95_ms"]
    assert len(tpot) == 4  # 2 targets x 2 load points
    assert all(r.beyond_noise and r.delta is not None and r.delta > 0 for r in tpot)
    thr = [r for r in rows if r.metric == "throughput_rps"]
    assert all(r.beyond_noise is None for r in thr)
    acc = [r for r in rows if r.metric == "accuracy"]
    assert all(r.beyond_noise is not None for r in acc)
    assert any(r.metric == "cost_per_correct_usd" for r in rows)


def test_compare_without_records_says_unknown(two_runs: list) -> None:
    (a, _), (b, _) = two_runs
    rows = compare_runs([a, b], [None, None])
    ttft = [r for r in rows if r.metric == "ttft_p95_ms"]
    assert ttft and all(r.beyond_noise is None and "unknown" in r.rule for r in ttft)
    text = render_compare(rows)
    assert "ttft_p95_ms" in text and "—" in text


def test_a_metric_one_run_did_not_measure_says_so(two_runs: list) -> None:
    # One-token answers have no TPOT: the records are there, the metric is not.
    import pyarrow as pa

    from acceval.metrics import Distribution

    (a, ra), (b, rb) = two_runs
    b2 = b.model_copy(deep=True)
    for t in b2.targets:
        for p in t.points:
            p.summary = p.summary.model_copy(update={"tpot_ms": Distribution(count=0)})
    i = rb.schema.get_field_index("output_tokens")
    rb2 = rb.set_column(i, rb.schema.field(i), pa.array([1] * rb.num_rows,
                                                         rb.schema.field(i).type))
    rows = compare_runs([a, b2], [ra, rb2], n_boot=200)
    tpot = [r for r in rows if r.metric == "tpot_p95_ms"]
    assert tpot and all(r.rule == "not measured in one run: not compared"
                        and r.beyond_noise is None for r in tpot)
