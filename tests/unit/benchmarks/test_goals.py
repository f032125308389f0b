"""The client benchmark's verdicts: which runs are tabled, and which goals a sitting met."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from goals import (
    RATE_TOLERANCE,
    Cores,
    evaluate,
    floor_key,
    lag_crossing,
    lag_goal,
    rate_goal,
    reject_reasons,
)

CORES = Cores(host_cpus=2, server="1", server_workers=1, acceval="any", acceval_clients="1",
              peers="any")


def _run(**kw: Any) -> dict[str, Any]:
    base = {"exit": 0, "server_ok": 1000, "window_s": 21.0, "rate_rps": 1000 / 21.0,
            "joined": 1000, "lag_p50_ms": 0.2, "lag_p99_ms": 0.9}
    return {**base, **kw}


def test_a_clean_run_is_tabled() -> None:
    assert reject_reasons(_run(), requested_rps=1000 / 21.0) == []


def test_a_short_window_is_rejected_and_a_smoke_floor_accepts_it() -> None:
    run = _run(window_s=7.0)
    assert any("shorter than 20 s" in r for r in reject_reasons(run, requested_rps=None))
    assert reject_reasons(run, requested_rps=None, min_window_s=2.5) == []


@pytest.mark.parametrize("factor", [1 + RATE_TOLERANCE * 1.5, 1 - RATE_TOLERANCE * 1.5])
def test_an_open_loop_off_its_requested_rate_is_rejected(factor: float) -> None:
    reasons = reject_reasons(_run(rate_rps=50.0 * factor), requested_rps=50.0)
    assert len(reasons) == 1 and "requested 50" in reasons[0]


def test_the_rate_checked_is_the_arrival_rate_not_completions_over_the_window() -> None:
    # A 3 s paced run at exactly 50 req/s: completions over the window (which holds the last
    # request's 365 ms) read 44.8 req/s; the arrivals 50.
    assert reject_reasons(_run(rate_rps=44.8, offered_rps=50.0), requested_rps=50.0) == []
    assert reject_reasons(_run(rate_rps=50.0, offered_rps=44.0), requested_rps=50.0) != []


def test_a_rate_within_the_tolerance_is_tabled() -> None:
    assert reject_reasons(_run(rate_rps=50.0 * (1 + RATE_TOLERANCE / 2)), requested_rps=50.0) == []


def test_the_guidellm_run_that_went_into_the_table_is_rejected_twice() -> None:
    # "50 req/s" that ran at 297 req/s, its target times at epoch 0: a lag of 1.8e12 ms.
    run = _run(rate_rps=297.0, lag_p50_ms=1.8e12, lag_p99_ms=1.8e12)
    reasons = reject_reasons(run, requested_rps=50.0)
    assert any("requested 50" in r for r in reasons)
    assert sum("longer than the whole load window" in r for r in reasons) == 2


def test_sends_before_their_intended_time_are_an_absurd_schedule() -> None:
    reasons = reject_reasons(_run(lag_p50_ms=-5.0), requested_rps=None)
    assert any("before their intended time" in r for r in reasons)


def test_send_stamps_off_this_hosts_clock_are_rejected() -> None:
    reasons = reject_reasons(_run(joined=10), requested_rps=None)
    assert any("joined a client request" in r for r in reasons)


def test_a_failed_client_or_no_response_is_rejected() -> None:
    assert "exited with 2" in reject_reasons(_run(exit=2), requested_rps=None)[0]
    assert reject_reasons({"exit": 0, "server_ok": 0}, requested_rps=None) == [
        "the server completed no request"]


def _closed(tool: str, rate: float, setting: str = "fast", **kw: Any) -> dict[str, Any]:
    return {"tool": tool, "setting": setting, "mode": "closed", "rate_rps": rate, **kw}


def test_rate_goal_takes_the_fastest_peer_and_skips_rejected_rounds() -> None:
    rows = [_closed("acceval", 10_000, server_cpu_util=0.8), _closed("acceval", 12_000),
            _closed("vllm-bench", 1_000), _closed("vllm-bench", 5_000, rejected=["x"]),
            _closed("guidellm", 130)]
    g = rate_goal("fast", rows, ["acceval"], ["vllm-bench", "guidellm"], CORES)
    assert g is not None and g.met
    assert "11,000" in g.measured and "vllm-bench 1,000" in g.measured and "11.0x" in g.measured
    assert "0.80 cores" in g.measured and "mock: 1 worker(s) on CPUs 1" in g.measured


def test_rate_goal_missed_below_ten_times() -> None:
    rows = [_closed("acceval", 7_900), _closed("vllm-bench", 1_000)]
    g = rate_goal("fast", rows, ["acceval"], ["vllm-bench"], CORES)
    assert g is not None and not g.met and "7.9x" in g.measured


def test_a_peer_with_every_run_rejected_is_a_missed_goal_not_a_silent_one() -> None:
    rows = [_closed("acceval", 10_000), _closed("aiperf", 250, rejected=["short"])]
    g = rate_goal("fast", rows, ["acceval"], ["aiperf"], CORES)
    assert g is not None and not g.met and "no accepted closed-loop run of aiperf" in g.measured


def test_rate_goal_against_a_reference_says_where_it_came_from() -> None:
    rows = [_closed("acceval-c10", 8_000, "paced", clients=10)]
    g = rate_goal("paced", rows, ["acceval-c10"], [], CORES, reference_rps=736.0)
    assert g is not None and g.met and "another sitting" in g.measured
    assert "10 client process(es)" in g.measured
    assert rate_goal("paced", rows, ["acceval-c10"], [], CORES) is None


def _half(lag: float | None, **kw: Any) -> dict[str, Any]:
    return {"tool": "acceval", "setting": "fast", "mode": "half-max", "lag_p99_ms": lag,
            "rate_target_rps": 5000.0, **kw}


@pytest.mark.parametrize(("lag", "floor", "met"), [
    (0.9, None, True), (1.2, None, False), (1.2, 0.95, True), (1.3, 0.95, False)])
def test_lag_goal_is_one_ms_or_near_the_host_floor(lag: float, floor: float | None,
                                                    met: bool) -> None:
    g = lag_goal("fast", [_half(lag)], "acceval", floor)
    assert g is not None and g.met is met


def test_a_rejected_half_max_point_misses_the_lag_goal() -> None:
    g = lag_goal("fast", [_half(0.5, rejected=["achieved 30 req/s"])], "acceval", None)
    assert g is not None and not g.met and "achieved 30" in g.measured


def test_lag_goal_takes_the_median_of_the_runs_tabled_and_lists_each() -> None:
    rows = [_half(0.62), _half(1.16), _half(0.83), _half(0.1, rejected=["window 7 s"])]
    g = lag_goal("fast", rows, "acceval", None)
    assert g is not None and g.met
    assert g.measured.startswith("0.830 ms")
    assert "median of 3 runs: 0.620, 1.160, 0.830" in g.measured
    assert "1 run(s) rejected" in g.measured
    g = lag_goal("fast", [_half(1.3), _half(0.7), _half(1.1)], "acceval", None)
    assert g is not None and not g.met and g.measured.startswith("1.100 ms")


def test_the_lag_ramp_crosses_the_bar_at_the_first_rate_over_it() -> None:
    def ramp(rate: float, lag: float, **kw: Any) -> dict[str, Any]:
        return {**_half(lag, **kw), "mode": "ramp", "rate_target_rps": rate}

    rows = [ramp(9000, 1.4), ramp(5000, 0.4), ramp(7000, 0.8), ramp(8000, 1.0),
            ramp(10000, 0.9)]
    # 10,000 req/s came back under the bar, but a lower rate was already over it.
    assert lag_crossing(rows) == (7000.0, 8000.0)
    assert lag_crossing(rows[:3], bar_ms=2.0) == (9000.0, None)
    # A run whose arrivals fell behind what was asked did not hold its schedule.
    behind = ramp(6000, 0.5, rejected=["requests arrived at 5,100 req/s against 6,000"])
    assert lag_crossing([*rows, behind]) == (5000.0, 6000.0)
    assert lag_crossing([ramp(5000, 3.0)]) == (None, 5000.0)
    assert lag_crossing([]) == (None, None)


def test_evaluate_lists_only_what_the_sitting_measured() -> None:
    rows = [_closed("acceval", 10_000), _half(0.5)]
    goals = evaluate(rows, settings=["fast"], ours=["acceval"], peers=[], cores=CORES,
                     floors_p99_ms={})
    assert [g.name for g in goals] == ["fast: acceval schedule-lag p99 at half its max rate"]


def test_evaluate_reads_each_tools_own_floor() -> None:
    rows = [_half(1.2), {**_half(1.2), "tool": "acceval-c2"}]
    goals = evaluate(rows, settings=["fast"], ours=["acceval", "acceval-c2"], peers=[],
                     cores=CORES, floors_p99_ms={floor_key("fast", "acceval"): 0.95})
    assert [g.met for g in goals] == [True, False]
