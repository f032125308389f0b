"""A counter's rate at a load point comes from the readings inside that point only. Points run
back to back, so the last reading before a point's start falls in the point before it: in the
demo, a 50 req/s point right after an 834 req/s one read 1.91x the client's tokens."""

from __future__ import annotations

import pyarrow as pa
import pytest

from acceval.metrics import Distribution
from acceval.metrics.point import PointSummary
from acceval.results.runlog import TelemetryLog
from acceval.results.section import PointResult
from acceval.telemetry.summary import PROBE, telemetry_section

_S = 1_000_000_000
_SCRAPE_NS = 250_000_000


def _point(index: int, label: str, start_s: float, end_s: float, client_tps: float
           ) -> PointResult:
    return PointResult.model_construct(
        index=index, label=label, started_ns=int(start_s * _S), ended_ns=int(end_s * _S),
        summary=PointSummary.model_construct(
            output_token_throughput_tps=client_tps, ttft_ms=Distribution(count=1, mean=20.0),
            e2e_ms=Distribution(count=1, mean=40.0), tpot_ms=Distribution(count=1, mean=2.0),
            itl_ms=Distribution(count=1, mean=2.0)))


def _samples(rates: list[tuple[float, float, float]], until_s: float,
             offset_s: float = 0.12) -> pa.Table:
    """The server's generation-token counter, scraped every 250 ms from ``offset_s``; it grows
    at ``rate`` tokens/s over each [start, end) in ``rates``."""
    t, v = [], []
    at = offset_s
    while at <= until_s:
        total = sum(r * max(0.0, min(at, e) - s) for s, e, r in rates)
        t.append(int(at * _S))
        v.append(total)
        at += _SCRAPE_NS / _S
    n = len(t)
    return pa.table({"t_ns": t, "probe": [PROBE] * n,
                     "metric": ["telemetry.generation_tokens"] * n, "value": v,
                     "unit": ["tokens"] * n, "device": [""] * n, "estimated": [False] * n})


def test_a_slow_point_after_a_fast_one_reads_only_its_own_tokens() -> None:
    # 4,000 tok/s for 1.1 s, then 250 tok/s for 4 s, back to back (as the demo's points).
    rates = [(0.0, 1.1, 4000.0), (1.1, 5.1, 250.0)]
    points = [_point(0, "concurrency 16", 0.0, 1.1, 4000.0),
              _point(1, "poisson 50 rps", 1.1, 5.1, 250.0)]
    log = TelemetryLog(url="http://127.0.0.1:1/metrics", source="acceval", scrapes=21,
                       first_ns=0, last_ns=int(5.2 * _S))
    out = telemetry_section(log, points, _samples(rates, 5.2))
    assert out is not None
    fast, slow = out.points
    assert fast.server_over_client_tokens == pytest.approx(1.0, rel=1e-9)
    # The reading at 0.87 s (inside the fast point) is not this point's start.
    assert slow.metrics["generation_tokens"].rate_per_s == pytest.approx(250.0, rel=1e-9)
    assert slow.server_over_client_tokens == pytest.approx(1.0, rel=1e-9)


def test_a_point_with_one_reading_inside_has_no_counter_rate() -> None:
    # 0.24 s long: one scrape falls inside it, so no increase can be read within it.
    rates = [(0.0, 1.0, 300.0), (1.0, 1.24, 4000.0), (1.24, 5.0, 250.0)]
    points = [_point(0, "a", 0.0, 1.0, 300.0), _point(1, "b", 1.0, 1.24, 4000.0),
              _point(2, "c", 1.24, 5.0, 250.0)]
    log = TelemetryLog(url="u", source="acceval", scrapes=20, first_ns=0,
                       last_ns=int(5.0 * _S))
    out = telemetry_section(log, points, _samples(rates, 5.0))
    assert out is not None
    short = out.points[1]
    assert short.metrics["generation_tokens"].scrapes == 1
    assert short.metrics["generation_tokens"].rate_per_s is None
    assert short.server_over_client_tokens is None
    assert out.points[2].server_over_client_tokens == pytest.approx(1.0, rel=1e-9)


def test_a_reading_before_a_point_counts_where_nothing_ran_since() -> None:
    # Before the first point and in a pause between points the server is quiet: the reading
    # there starts the window, its time from the point's start. Each point starts just
    # after a reading (0.12 s, 2.37 s) and the scraper then stalls, so from the point's start
    # the readings span 0.49 s of its 1.8 s, but only 0.25 s from its first reading inside:
    # less than the quarter a window needs.
    rates = [(0.13, 1.93, 1000.0), (2.38, 4.18, 400.0)]
    points = [_point(0, "first", 0.13, 1.93, 1000.0),
              _point(1, "after a pause", 2.38, 4.18, 400.0)]
    table = _samples(rates, 4.6)
    t = table["t_ns"].to_numpy()
    keep = ~(((t > 0.7 * _S) & (t < 1.93 * _S)) | ((t > 2.9 * _S) & (t < 4.18 * _S)))
    log = TelemetryLog(url="u", source="acceval", scrapes=int(keep.sum()), first_ns=0,
                       last_ns=int(4.6 * _S))
    out = telemetry_section(log, points, table.filter(keep))
    assert out is not None
    for p, rate in zip(out.points, (1000.0, 400.0), strict=True):
        assert p.metrics["generation_tokens"].rate_per_s == pytest.approx(rate, rel=1e-9)
        assert p.server_over_client_tokens == pytest.approx(1.0, rel=1e-9)


def test_a_short_point_after_another_reads_from_two_readings_inside() -> None:
    # make test-llamacpp's shape: a 0.72-s point right after a slower one, scraped every
    # 0.25 s: the reading before it falls in the point before; the two inside it span
    # 0.25 s, a third of the point, and give its own rate.
    rates = [(0.03, 1.29, 2500.0), (1.29, 2.01, 4400.0), (2.01, 3.0, 100.0)]
    points = [_point(0, "concurrency 1", 0.03, 1.29, 2500.0),
              _point(1, "concurrency 4", 1.29, 2.01, 4400.0)]
    log = TelemetryLog(url="u", source="acceval", scrapes=12, first_ns=0, last_ns=3 * _S)
    out = telemetry_section(log, points, _samples(rates, 3.0, offset_s=0.03))
    assert out is not None
    short = out.points[1]
    assert short.metrics["generation_tokens"].rate_per_s == pytest.approx(4400.0, rel=1e-9)
