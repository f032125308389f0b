"""The per-point statistics agree with DuckDB's over the same Parquet records (an oracle the
project did not write): the count, mean, min, max and the p50/p90/p95/p99 of TTFT and E2E
of every measured point of a stored run, with DuckDB's ``quantile_cont`` (the linear
interpolation acceval's percentiles use). The query is benchmarks/analyze.py's floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.analysis import load_result

duckdb = pytest.importorskip("duckdb")

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "demo-run"
LEVELS = (0.5, 0.9, 0.95, 0.99)
QUERY = f"""
WITH r AS (
  SELECT target, load_index,
         (first_token_ns - sent_ns) / 1e6 AS ttft_ms, (done_ns - sent_ns) / 1e6 AS e2e_ms
  FROM read_parquet($path)
  WHERE NOT coalesce(warmup, false) AND error_kind IS NULL)
SELECT target, load_index, count(*),
       avg(ttft_ms), min(ttft_ms), max(ttft_ms), quantile_cont(ttft_ms, {list(LEVELS)}),
       avg(e2e_ms), min(e2e_ms), max(e2e_ms), quantile_cont(e2e_ms, {list(LEVELS)})
FROM r GROUP BY target, load_index
"""


def test_every_points_ttft_and_e2e_equal_duckdbs() -> None:
    rows = duckdb.connect().execute(QUERY, {"path": str(RUN / "records.parquet")}).fetchall()
    oracle = {(r[0], r[1]): r[2:] for r in rows}
    result = load_result(RUN, recompute=True)
    compared = 0
    for target in result.targets:
        for point in target.points:
            n, *stats = oracle[(target.name, point.index)]
            for metric, (mean, lo, hi, qs) in (("ttft_ms", stats[:4]), ("e2e_ms", stats[4:])):
                s = getattr(point.summary, metric)
                assert s.count == n, (target.name, point.label, metric)
                assert s.mean == pytest.approx(mean, rel=1e-9)
                assert (s.min, s.max) == pytest.approx((lo, hi), rel=1e-12)
                ours = (s.p50, s.p90, s.p95, s.p99)
                assert ours == pytest.approx(tuple(qs), rel=1e-9), (target.name, point.label)
            compared += 1
    assert compared >= 6
