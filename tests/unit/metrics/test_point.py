import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_fixtures import hand_table, req, table

from acceval.metrics import (
    DEGRADED_LAG_P99_MS,
    DEGRADED_LOOP_LAG_P99_MS,
    DEGRADED_LOOP_STALL_MS,
    Distribution,
    PointSummary,
    correct_goodput,
    derive,
    good_mask,
    summarize_point,
)
from acceval.study import SLO

W = 0.049  # hand example window: first measured send 1 ms, last done 50 ms


def test_hand_example_counts_and_throughput():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=100.0)
    assert (s.requests, s.ok, s.errors) == (3, 2, 1)
    assert s.errors_by_kind == {"timeout": 1}
    assert s.error_rate == pytest.approx(1 / 3)
    assert s.duration_s == pytest.approx(W) and s.duration_from == "measured"
    assert s.request_throughput_rps == pytest.approx(2 / W)
    assert s.output_tokens_total == 8 and s.prompt_tokens_total == 20
    assert s.output_token_throughput_tps == pytest.approx(8 / W)
    assert s.total_token_throughput_tps == pytest.approx(28 / W)
    assert s.output_tokens.mean == 4.0


def test_hand_example_latency_distributions_use_ok_measured_rows():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=None)
    assert (s.ttft_ms.count, s.ttft_ms.mean, s.ttft_ms.min, s.ttft_ms.max) == (2, 15.0, 10, 20)
    assert s.e2e_ms.mean == pytest.approx(23.0)
    assert s.tpot_ms.mean == pytest.approx((2.0 + 10 / 3) / 2)
    assert s.itl_ms.count == 4 and s.itl_ms.mean == pytest.approx(11 / 4)  # warmup gap excluded


def test_hand_example_loadgen_self_check():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=100.0)
    assert s.schedule_lag_ms.max == 1.0 and s.schedule_lag_ms.count == 3
    assert s.scheduled_rate_rps == pytest.approx(2 / 0.020)   # sends scheduled at 0, 10, 20 ms
    assert s.achieved_rate_rps == pytest.approx(2 / 0.019)    # sent at 1, 10, 20 ms
    assert s.degraded is False and s.degraded_reasons == ()
    assert s.max_in_flight == 2
    assert s.mean_in_flight == pytest.approx((16 + 30 + 30) / 49)


def test_hand_example_goodput_and_slo():
    slo = SLO(ttft_ms=15, percentile=50)
    s = summarize_point(hand_table(), slo=slo, requested_rate_rps=None)
    assert s.latency_basis == "response"                # the rows carry schedule stamps
    assert s.good == 1                                  # only A: B's TTFT is 20, C errored
    assert s.goodput_rps == pytest.approx(1 / W)
    assert s.good_fraction == pytest.approx(1 / 3)      # the error stays in the denominator
    # Judged from the intended send: A was sent 1 ms late, so its response TTFT is 11 ms.
    assert s.slo_values_ms == {"ttft_ms": 15.5}
    assert s.meets_slo is False                         # error rate 1/3 > 0.01
    relaxed = SLO(ttft_ms=15.5, percentile=50, max_error_rate=0.5)
    assert summarize_point(hand_table(), slo=relaxed, requested_rate_rps=None).meets_slo is True
    strict = SLO(ttft_ms=15.4, percentile=50, max_error_rate=0.5)
    assert summarize_point(hand_table(), slo=strict, requested_rate_rps=None).meets_slo is False


def test_hand_example_response_time_beside_service_time():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=100.0)
    assert (s.ttft_ms.min, s.ttft_ms.max) == (10.0, 20.0)                    # from sent_ns
    assert (s.response_ttft_ms.min, s.response_ttft_ms.max) == (11.0, 20.0)  # from scheduled
    assert (s.response_e2e_ms.min, s.response_e2e_ms.max) == (17.0, 30.0)
    assert s.response_ttft_ms.count == s.ttft_ms.count == 2


def test_closed_loop_judges_service_time_and_reports_no_response_time():
    t = table(*[req(i, sent_ms=10 * i, chunks_ms=[10 * i + 30], tokens=1) for i in range(4)])
    s = summarize_point(t, slo=SLO(ttft_ms=30, percentile=50), requested_rate_rps=None)
    assert s.latency_basis == "service"
    assert s.response_ttft_ms.count == 0 and s.response_e2e_ms.p50 is None
    assert s.slo_values_ms == {"ttft_ms": 30.0} and s.meets_slo is True


def test_a_late_client_cannot_make_an_open_loop_point_meet_the_slo():
    # Each request was due every 10 ms but the client sent it 200 ms late; the server answered
    # 20 ms after the actual send. Service time passes a 100 ms bound, response time does not.
    t = table(*[req(i, sched_ms=10 * i, sent_ms=10 * i + 200, chunks_ms=[10 * i + 220],
                    tokens=1) for i in range(10)])
    slo = SLO(ttft_ms=100, e2e_ms=100)
    s = summarize_point(t, slo=slo, requested_rate_rps=100.0)
    assert s.ttft_ms.p95 == pytest.approx(20.0) and s.response_ttft_ms.p95 == pytest.approx(220)
    assert s.slo_values_ms == {"ttft_ms": pytest.approx(220), "e2e_ms": pytest.approx(220)}
    assert s.meets_slo is False and s.good == 0
    # ... and the point is not trusted, so nothing downstream uses it either.
    assert s.degraded is True and s.trusted is False
    assert s.untrusted_reason is not None and "schedule lag" in s.untrusted_reason


def test_hand_example_accuracy_and_correct_goodput():
    slo = SLO(ttft_ms=15)
    s = summarize_point(hand_table(), slo=slo, requested_rate_rps=None)
    assert s.accuracy is not None and s.accuracy.correct == 1 and s.accuracy.n == 3
    assert s.pass_at_1 is not None and s.pass_at_1.pass_at_1 == pytest.approx(0.25)
    assert s.correct_good == 1
    assert s.correct_goodput_rps == pytest.approx(1 / W)
    assert correct_goodput(hand_table(), slo=slo) == pytest.approx(1 / W)


def test_no_slo_bound_means_meets_slo_is_none_and_every_ok_request_is_good():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=None)
    assert s.meets_slo is None and s.slo_values_ms == {}
    assert s.good == s.ok


def test_given_duration_overrides_the_window():
    s = summarize_point(hand_table(), slo=SLO(), requested_rate_rps=None, duration_s=2.0)
    assert s.duration_from == "given" and s.duration_s == 2.0
    assert s.request_throughput_rps == pytest.approx(1.0)
    # In-flight area is clipped to [first send, first send + 2 s): all of it fits.
    assert s.mean_in_flight == pytest.approx(0.076 / 2.0)


def test_no_ok_requests_gives_none_latencies_and_zero_throughput():
    t = table(
        req(0, sched_ms=0, sent_ms=0, done_ms=5, error="connect", correct=None),
        req(1, sched_ms=1, sent_ms=1, done_ms=9, error="http"),
    )
    s = summarize_point(t, slo=SLO(ttft_ms=100), requested_rate_rps=None)
    assert s.ok == 0 and s.error_rate == 1.0
    assert s.ttft_ms.count == 0 and s.ttft_ms.p99 is None and s.ttft_ms.mean is None
    assert s.tpot_ms.p50 is None and s.e2e_ms.p50 is None and s.itl_ms.p50 is None
    assert s.request_throughput_rps == 0.0 and s.goodput_rps == 0.0
    assert s.output_tokens_total == 0
    assert s.slo_values_ms == {"ttft_ms": None} and s.meets_slo is False
    assert s.tokens_from_usage_fraction is None
    assert s.accuracy is None and s.correct_goodput_rps is None   # nothing was checked


def test_empty_table_is_all_missing():
    s = summarize_point(table(), slo=SLO(ttft_ms=1), requested_rate_rps=5.0)
    assert s.requests == 0 and s.error_rate is None and s.duration_s is None
    assert s.request_throughput_rps is None and s.goodput_rps is None
    assert s.good_fraction is None and s.degraded is None and s.meets_slo is False
    assert s.mean_in_flight is None and s.max_in_flight is None


def test_one_token_answers_have_no_tpot_and_pass_a_tpot_bound():
    t = table(*[req(i, sent_ms=i, chunks_ms=[i + 5], tokens=1) for i in range(3)])
    s = summarize_point(t, slo=SLO(tpot_ms=1, max_error_rate=0), requested_rate_rps=None)
    assert s.tpot_ms.count == 0 and s.tpot_ms.p95 is None
    assert s.good == 3 and s.meets_slo is True
    assert s.slo_values_ms == {"tpot_ms": None}


def test_missing_ttft_fails_a_ttft_bound():
    # A non-streamed answer: tokens and done, no chunk stamps.
    t = table(req(0, sent_ms=0, done_ms=30, tokens=5))
    d = derive(t)
    assert not good_mask(d, SLO(ttft_ms=1000))[0]
    assert good_mask(d, SLO(e2e_ms=1000))[0]


def test_degraded_by_schedule_lag():
    t = table(*[req(i, sched_ms=10 * i, sent_ms=10 * i + (30 if i == 5 else 0),
                    chunks_ms=[10 * i + 40], tokens=1) for i in range(10)])
    s = summarize_point(t, slo=SLO(), requested_rate_rps=None)
    assert s.schedule_lag_ms.p99 > DEGRADED_LAG_P99_MS
    assert s.degraded is True and "schedule lag" in s.degraded_reasons[0]


def _loop(*lags_ms: float) -> Distribution:
    return Distribution.of(np.asarray(lags_ms))


def test_closed_loop_is_degraded_by_an_event_loop_stall():
    t = table(*[req(i, sent_ms=10 * i, chunks_ms=[10 * i + 5], tokens=1) for i in range(10)])
    quiet = summarize_point(t, slo=SLO(ttft_ms=50), requested_rate_rps=None,
                            loop_lag_ms=_loop(*[0.2] * 500))
    assert quiet.degraded is False and quiet.trusted and quiet.untrusted_reason is None
    assert quiet.loop_lag_ms.count == 500
    stalled = summarize_point(t, slo=SLO(ttft_ms=50), requested_rate_rps=None,
                              loop_lag_ms=_loop(*[0.2] * 499, DEGRADED_LOOP_STALL_MS + 1))
    assert stalled.degraded is True and stalled.trusted is False
    assert stalled.degraded_reasons == ("client event loop stalled 101 ms > 100 ms",)
    assert stalled.meets_slo is True   # kept as measured: the trust flag is what excludes it
    assert stalled.untrusted_reason == stalled.degraded_reasons[0]


def test_a_laggy_event_loop_degrades_the_point():
    t = table(*[req(i, sent_ms=10 * i, chunks_ms=[10 * i + 5], tokens=1) for i in range(10)])
    lags = [0.5] * 90 + [DEGRADED_LOOP_LAG_P99_MS + 5] * 10   # p99 above the bound, max not
    s = summarize_point(t, slo=SLO(), requested_rate_rps=None, loop_lag_ms=_loop(*lags))
    assert s.degraded is True and "event-loop lag p99" in s.degraded_reasons[0]


def test_results_written_before_the_trust_fields_read_back_consistently():
    t = table(*[req(i, sched_ms=10 * i, sent_ms=10 * i + (30 if i == 5 else 0),
                    chunks_ms=[10 * i + 40], tokens=1) for i in range(10)])
    s = summarize_point(t, slo=SLO(ttft_ms=100), requested_rate_rps=None)
    old = s.model_dump(mode="json")
    for key in ("trusted", "untrusted_reason", "response_ttft_ms", "response_e2e_ms",
                "latency_basis", "loop_lag_ms"):
        del old[key]
    back = PointSummary.model_validate(old)
    assert back.trusted is False and back.untrusted_reason == s.untrusted_reason
    assert back.latency_basis == "service"   # what a 0.1.0 summary judged
    with pytest.raises(ValueError, match="trusted"):
        PointSummary.model_validate({**s.model_dump(), "trusted": True})


def test_degraded_by_slow_sending():
    # Scheduled every 10 ms but sent every 12 ms with no recorded lag (no scheduled stamps).
    t = table(*[req(i, sent_ms=12 * i, chunks_ms=[12 * i + 5], tokens=1) for i in range(10)])
    s = summarize_point(t, slo=SLO(), requested_rate_rps=100.0)
    assert s.schedule_lag_ms.count == 0
    assert s.achieved_rate_rps == pytest.approx(1000 / 12)
    assert s.degraded is True and "achieved send rate" in s.degraded_reasons[0]
    closed = summarize_point(t, slo=SLO(), requested_rate_rps=None)
    assert closed.degraded is None   # closed loop, no lag stamps: nothing to judge by


def test_token_provenance():
    t = table(
        req(0, sent_ms=0, chunks_ms=[1, 2], tokens=2, tokens_from="usage"),
        req(1, sent_ms=0, chunks_ms=[1, 2], tokens=2, tokens_from="chunks"),
        req(2, sent_ms=0, chunks_ms=[1, 2], tokens=2, tokens_from="chunks"),
        req(3, sent_ms=0, done_ms=4, error="timeout"),
    )
    s = summarize_point(t, slo=SLO(), requested_rate_rps=None)
    assert s.tokens_from_usage_fraction == pytest.approx(1 / 3)
    assert s.tokens_from_chunks_fraction == pytest.approx(2 / 3)


def test_no_correctness_info_means_accuracy_none():
    t = table(req(0, sent_ms=0, chunks_ms=[1, 2], tokens=2))
    s = summarize_point(t, slo=SLO(), requested_rate_rps=None)
    assert s.accuracy is None and s.pass_at_1 is None and s.correct_good is None


def test_summary_round_trips_through_json():
    s = summarize_point(hand_table(), slo=SLO(ttft_ms=15, tpot_ms=5), requested_rate_rps=100.0)
    assert PointSummary.model_validate_json(s.model_dump_json()) == s
    zero = table(req(0, sent_ms=0, chunks_ms=[1], tokens=1, correct=False))
    z = summarize_point(zero, slo=SLO(), requested_rate_rps=None)
    assert z.pass_at_1 is not None and math.isinf(z.pass_at_1.expected_attempts_per_correct)
    assert PointSummary.model_validate_json(z.model_dump_json()) == z


# --- properties ------------------------------------------------------------------------------

@st.composite
def runs(draw):
    n = draw(st.integers(1, 25))
    recs = []
    for i in range(n):
        sent = draw(st.floats(0, 1000, allow_nan=False))
        ttft = draw(st.floats(0.1, 500, allow_nan=False))
        k = draw(st.integers(1, 6))
        gaps = draw(st.lists(st.floats(0.01, 50, allow_nan=False), min_size=k - 1,
                             max_size=k - 1))
        chunks = [sent + ttft + sum(gaps[:j]) for j in range(k)]
        tokens = draw(st.integers(k, 3 * k))
        error = draw(st.sampled_from([None, None, None, "timeout", "http"]))
        correct = draw(st.sampled_from([None, True, False]))
        recs.append(req(i, sched_ms=sent, sent_ms=sent, chunks_ms=chunks, tokens=tokens,
                        error=error, correct=correct, task=f"t{i % 4}"))
    return recs


slos = st.builds(SLO, ttft_ms=st.none() | st.floats(1, 600), tpot_ms=st.none() | st.floats(1, 60),
                 e2e_ms=st.none() | st.floats(1, 900))

_fast = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_fast
@given(runs(), slos)
def test_goodput_never_exceeds_throughput(recs, slo):
    s = summarize_point(table(*recs), slo=slo, requested_rate_rps=None)
    assert s.good <= s.ok <= s.requests
    if s.goodput_rps is not None:
        assert s.goodput_rps <= s.request_throughput_rps
    if s.correct_good is not None:
        assert s.correct_good <= s.good
        assert s.accuracy is not None and s.accuracy.correct <= s.ok


@_fast
@given(runs(), slos, st.data())
def test_errors_only_lower_goodput(recs, slo, data):
    before = summarize_point(table(*recs), slo=slo, requested_rate_rps=None)
    flip = data.draw(st.lists(st.integers(0, len(recs) - 1), max_size=len(recs)))
    for i in flip:
        recs[i].error_kind = "stream_cut"
    after = summarize_point(table(*recs), slo=slo, requested_rate_rps=None)
    assert after.duration_s == before.duration_s   # same stamps, same window
    assert after.good <= before.good
    for s in (before, after):   # goodput is only a number when every bounded metric was measured
        assert (s.good_fraction is None) == bool(s.slo_unmeasured)
    if before.good_fraction is not None and after.good_fraction is not None:
        assert after.good_fraction <= before.good_fraction
    if before.correct_good is not None and after.correct_good is not None:
        assert after.correct_good <= before.correct_good


@_fast
@given(runs())
def test_good_mask_matches_summary_count(recs):
    t = table(*recs)
    slo = SLO(ttft_ms=200, tpot_ms=10)
    assert int(np.sum(good_mask(derive(t), slo))) == summarize_point(
        t, slo=slo, requested_rate_rps=None).good


@_fast
@given(runs(), st.lists(st.floats(0, 300, allow_nan=False), min_size=10, max_size=10))
def test_response_time_is_never_below_service_time_and_only_lowers_goodput(recs, late_ms):
    """Sending late (scheduled before sent) never makes a point look better."""
    slo = SLO(ttft_ms=200, e2e_ms=400, tpot_ms=10)
    on_time = summarize_point(table(*recs), slo=slo, requested_rate_rps=None)
    for r, late in zip(recs, late_ms, strict=False):
        assert r.scheduled_ns is not None
        r.scheduled_ns -= round(late * 1e6)
    late = summarize_point(table(*recs), slo=slo, requested_rate_rps=None)
    d = derive(table(*recs))
    ok = d.ok & ~np.isnan(d.ttft_ms)
    assert np.all(d.response_ttft_ms[ok] >= d.ttft_ms[ok])
    assert late.good <= on_time.good
    assert late.ttft_ms == on_time.ttft_ms            # service time does not move
    if on_time.meets_slo is False:
        assert late.meets_slo is False
