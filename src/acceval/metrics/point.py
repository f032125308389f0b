"""One load point's summary: counts, throughput, latency distributions, the load generator's
self-check (and whether the point can be trusted), SLO goodput and accuracy. Formulas are in
``docs/metrics.md``.

Warmup rows are dropped first; every number below is over the measured rows only.

Two clocks for latency: *service time* runs from the actual send (``sent_ns``), *response
time* from the intended send (``scheduled_ns``, open loop only). The SLO judges response time
wherever a schedule exists, so a client that sent late cannot make a point look fast (the
coordinated-omission correction wrk2 makes); in closed loop the intended send is the actual
one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import model_validator

from acceval.metrics._model import MetricModel
from acceval.metrics.accuracy import Accuracy, PassAt1, accuracy, has_correctness, pass_at_1
from acceval.metrics.derive import BoolArray, Derived, FloatArray, derive
from acceval.metrics.distribution import Distribution, finite, percentile
from acceval.metrics.spec import SLO
from acceval.metrics.turns import TurnSummary, per_turn

# The load generator is *degraded* (its numbers describe the client as much as the server)
# when it sent late or slowly. 10 ms of p99 lag is already a visible share of a TTFT bound of a
# few hundred ms; 95 % of the schedule's own rate tolerates start-up jitter but not a client
# that cannot keep up.
DEGRADED_LAG_P99_MS = 10.0
DEGRADED_MIN_RATE_FRACTION = 0.95
# The client's event loop, sampled by the runner's monitor tick (how late each tick fired):
# a loop that is often late delays every send and every read, like schedule lag does, so the
# same 10 ms bound applies to its p99; one stall of 100 ms delays every response in flight by
# a visible share of a TTFT bound.
DEGRADED_LOOP_LAG_P99_MS = 10.0
DEGRADED_LOOP_STALL_MS = 100.0

LatencyBasis = Literal["response", "service"]

SLOMetric = Literal["ttft_ms", "tpot_ms", "e2e_ms"]
_SLO_METRICS: tuple[SLOMetric, ...] = ("ttft_ms", "tpot_ms", "e2e_ms")


class PointSummary(MetricModel):
    """Everything measured at one load point of one target."""

    requests: int  # measured rows (sent or attempted)
    ok: int
    errors: int
    errors_by_kind: dict[str, int]
    error_rate: float | None  # errors / requests

    duration_s: float | None  # measurement window
    duration_from: Literal["measured", "given"]
    request_throughput_rps: float | None  # ok / duration
    output_token_throughput_tps: float | None  # output tokens of ok / duration
    total_token_throughput_tps: float | None  # (prompt + output) of ok / duration
    output_tokens_total: int | None
    prompt_tokens_total: int | None
    output_tokens: Distribution  # per ok request

    ttft_ms: Distribution  # service time: from the actual send (sent_ns)
    tpot_ms: Distribution
    itl_ms: Distribution  # flat sample of normalised gaps
    e2e_ms: Distribution  # service time: from the actual send (sent_ns)

    schedule_lag_ms: Distribution
    requested_rate_rps: float | None
    scheduled_rate_rps: float | None  # (sends - 1) / span of scheduled_ns
    achieved_rate_rps: float | None  # (sends - 1) / span of sent_ns
    degraded: bool | None
    degraded_reasons: tuple[str, ...]

    # Response time: from the intended send (scheduled_ns); count 0 without a schedule
    # (closed loop, where it equals the service time).
    response_ttft_ms: Distribution = Distribution(count=0)
    response_e2e_ms: Distribution = Distribution(count=0)
    # What slo_values_ms, good and meets_slo judged: response time when the point has a
    # schedule (open loop), service time otherwise. Results written before this field
    # existed judged service time.
    latency_basis: LatencyBasis = "service"
    # How late the runner's monitor tick fired, per tick (count 0: not monitored).
    loop_lag_ms: Distribution = Distribution(count=0)
    # False when the self-check found the point degraded: it is shown, with the reason, and
    # left out of capacity, sweeps, batching and the verdict. meets_slo stays as measured.
    trusted: bool = True
    untrusted_reason: str | None = None

    mean_in_flight: float | None
    max_in_flight: int | None

    slo: SLO
    good: int
    goodput_rps: float | None  # good / duration
    good_fraction: float | None  # good / requests (errors in the denominator)
    slo_values_ms: dict[str, float | None]  # slo.percentile of each bounded metric
    meets_slo: bool | None
    # Bounded metrics this point did not measure (a non-streamed answer has no TTFT, an
    # answer in one piece no TPOT): the SLO is not assessed (meets_slo None, no goodput)
    # unless another bound already fails.
    slo_unmeasured: tuple[str, ...] = ()

    tokens_from_usage_fraction: float | None
    # Share of the prompt tokens the server said its prefix cache held, over the requests
    # whose server said (None: it never did). A warm cache lowers TTFT: compare points on it.
    cached_prompt_fraction: float | None = None
    tokens_from_chunks_fraction: float | None

    accuracy: Accuracy | None
    pass_at_1: PassAt1 | None
    correct_good: int | None
    correct_goodput_rps: float | None  # correct and good / duration
    # Multi-turn conversations: TTFT/E2E by turn index (None: no conversation at this point).
    turns: list[TurnSummary] | None = None

    @model_validator(mode="before")
    @classmethod
    def _trust_follows_degraded(cls, data: Any) -> Any:
        """Results written before ``trusted`` existed get it from ``degraded``."""
        if isinstance(data, dict) and "trusted" not in data:
            reasons = data.get("degraded_reasons") or ()
            bad = data.get("degraded") is True
            data = {**data, "trusted": not bad,
                    "untrusted_reason": ("; ".join(reasons) or "degraded") if bad else None}
        return data

    @model_validator(mode="after")
    def _trust_is_consistent(self) -> PointSummary:
        if self.trusted != (self.degraded is not True):
            raise ValueError("trusted must be False exactly when degraded is True")
        if (self.untrusted_reason is None) != self.trusted:
            raise ValueError("untrusted_reason is given exactly when the point is not trusted")
        return self


def _per_s(count: float | None, duration_s: float | None) -> float | None:
    if count is None or duration_s is None or duration_s <= 0:
        return None
    return float(count) / duration_s


def _rate(stamps_ns: FloatArray) -> float | None:
    """Sends per second over the sending span: (n - 1) / (last - first). Exact for evenly
    spaced sends, which a mean over n would bias by one interval."""
    s = finite(stamps_ns)
    if s.size < 2:
        return None
    span_s = (s.max() - s.min()) / 1e9
    return float((s.size - 1) / span_s) if span_s > 0 else None


def _sum(values: FloatArray) -> int | None:
    """Sum of the known counts. With no rows the sum is a measured 0; with rows whose counts
    are all unknown it is missing (None)."""
    v = finite(values)
    if values.size and not v.size:
        return None
    return int(v.sum())


def tpot_not_applicable(d: Derived) -> BoolArray:
    """Rows with at most one output token: no decode phase, so TPOT cannot fail them."""
    return np.asarray(d.output_tokens <= 1, dtype=np.bool_)


def judged_latency(d: Derived, metric: SLOMetric) -> FloatArray:
    """The per-row values the SLO judges for ``metric``: TTFT and E2E as response time (from
    ``scheduled_ns``) on rows that have a schedule, as service time (from ``sent_ns``) on rows
    that do not (closed loop: the intended send is the actual one). TPOT is the decode phase,
    the same on either clock."""
    if metric == "tpot_ms":
        return d.tpot_ms
    service, response = (d.ttft_ms, d.response_ttft_ms) if metric == "ttft_ms" else (
        d.e2e_ms, d.response_e2e_ms)
    return np.where(np.isnan(d.scheduled_ns), service, response)


def latency_basis(d: Derived) -> LatencyBasis:
    """``response`` when any measured row carries a schedule stamp, else ``service``."""
    return "response" if bool((~np.isnan(d.scheduled_ns[d.measured])).any()) else "service"


def good_mask(d: Derived, slo: SLO) -> BoolArray:
    """Rows that completed and meet every SLO bound given (DistServe goodput), on the judged
    latency (:func:`judged_latency`). A missing TTFT or E2E fails its bound; TPOT of a
    <=1-token answer passes (vLLM does the same)."""
    good = d.ok & d.measured
    if slo.ttft_ms is not None:
        good &= judged_latency(d, "ttft_ms") <= slo.ttft_ms
    if slo.tpot_ms is not None:
        good &= (d.tpot_ms <= slo.tpot_ms) | tpot_not_applicable(d)
    if slo.e2e_ms is not None:
        good &= judged_latency(d, "e2e_ms") <= slo.e2e_ms
    return good


def _meets_slo(
    d: Derived, sel: BoolArray, slo: SLO, error_rate: float | None
) -> tuple[dict[str, float | None], bool | None, tuple[str, ...]]:
    """The bounded metrics' percentiles, whether the point meets the SLO (None: no latency
    bound, or a bound on a metric the point did not measure and no other bound failing),
    and the bounded metrics it did not measure."""
    bounds = {m: getattr(slo, m) for m in _SLO_METRICS if getattr(slo, m) is not None}
    if not bounds:
        return {}, None, ()
    values: dict[str, float | None] = {}
    passed = error_rate is not None and error_rate <= slo.max_error_rate and bool(sel.any())
    unmeasured: list[str] = []
    for metric, bound in bounds.items():
        value = percentile(judged_latency(d, metric)[sel], slo.percentile)
        values[metric] = value
        if value is None:
            if not sel.any():
                passed = False
            elif metric == "tpot_ms" and bool(tpot_not_applicable(d)[sel].all()):
                pass  # every answer was one token long: no decode phase to bound
            else:
                unmeasured.append(metric)
        else:
            passed &= value <= bound
    if unmeasured and passed:
        return values, None, tuple(unmeasured)
    return values, passed, tuple(unmeasured)


def _in_flight(
    sent: FloatArray, done: FloatArray, start_ns: float, duration_s: float | None
) -> tuple[float | None, int | None]:
    """Time-averaged and peak requests in flight over the window (sweep line over send/done
    events; at equal stamps a completion is counted before a send)."""
    both = ~np.isnan(sent) & ~np.isnan(done)
    s, e = sent[both], done[both]
    if s.size == 0:
        return None, None
    # The count peaks just after a send: after the k-th send in time order, k sends less the
    # completions at or before it (a completion at the same stamp goes first).
    sends, dones = np.sort(s), np.sort(e)
    after = np.arange(1, sends.size + 1) - np.searchsorted(dones, sends, side="right")
    peak = int(after.max())
    if duration_s is None or duration_s <= 0:
        return None, peak
    end_ns = start_ns + duration_s * 1e9
    area_ns = np.clip(np.minimum(e, end_ns) - np.maximum(s, start_ns), 0, None).sum()
    return float(area_ns / (duration_s * 1e9)), peak


def loop_fell_behind(loop: Distribution) -> bool:
    """Whether the client's own event loop lagged past the self-check's bounds (p99 or one
    stall): then the client, not the target, set the point's numbers."""
    return loop.p99 is not None and loop.max is not None and (
        loop.p99 > DEGRADED_LOOP_LAG_P99_MS or loop.max > DEGRADED_LOOP_STALL_MS)


def _degraded(
    lag: Distribution, achieved: float | None, reference: float | None, loop: Distribution
) -> tuple[bool | None, tuple[str, ...]]:
    reasons: list[str] = []
    checked = False
    if lag.p99 is not None:
        checked = True
        if lag.p99 > DEGRADED_LAG_P99_MS:
            reasons.append(f"schedule lag p99 {lag.p99:.1f} ms > {DEGRADED_LAG_P99_MS:g} ms")
    if achieved is not None and reference is not None:
        checked = True
        if achieved < DEGRADED_MIN_RATE_FRACTION * reference:
            reasons.append(
                f"achieved send rate {achieved:.3g}/s < {DEGRADED_MIN_RATE_FRACTION:.0%} "
                f"of {reference:.3g}/s"
            )
    if loop.p99 is not None and loop.max is not None:
        checked = True
        if loop.p99 > DEGRADED_LOOP_LAG_P99_MS:
            reasons.append(f"client event-loop lag p99 {loop.p99:.1f} ms > "
                           f"{DEGRADED_LOOP_LAG_P99_MS:g} ms")
        if loop.max > DEGRADED_LOOP_STALL_MS:
            reasons.append(f"client event loop stalled {loop.max:.0f} ms > "
                           f"{DEGRADED_LOOP_STALL_MS:g} ms")
    return (bool(reasons) if checked else None), tuple(reasons)


def measurement_window(d: Derived, duration_s: float | None = None) -> tuple[float, float | None]:
    """(start_ns, duration_s) of the measured rows: first send to last done, unless
    ``duration_s`` is given. Duration is None when it cannot be measured or is not positive."""
    sent, done = finite(d.sent_ns[d.measured]), finite(d.done_ns[d.measured])
    start_ns = float(sent.min()) if sent.size else 0.0
    if duration_s is None and sent.size and done.size:
        duration_s = (float(done.max()) - start_ns) / 1e9
    if duration_s is not None and duration_s <= 0:
        duration_s = None
    return start_ns, duration_s


def _fraction(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _cached_fraction(d: Derived, rows: BoolArray) -> float | None:
    said = rows & ~np.isnan(d.cached_prompt_tokens) & (d.prompt_tokens > 0)
    if not said.any():
        return None
    return float(d.cached_prompt_tokens[said].sum() / d.prompt_tokens[said].sum())


def summarize_point(
    table: pa.Table | Derived,
    *,
    slo: SLO,
    requested_rate_rps: float | None,
    duration_s: float | None = None,
    loop_lag_ms: Distribution | None = None,
) -> PointSummary:
    """Summarise one load point. ``table`` has ``RECORD_SCHEMA`` (or is its :func:`derive`).
    ``duration_s`` overrides the measured window (first measured send to last done).
    ``loop_lag_ms`` is the runner's event-loop monitor of this point (``PointRun.loop_lag_ms``;
    None: not monitored), part of the self-check."""
    d = table if isinstance(table, Derived) else derive(table)
    m = d.measured
    okm = m & d.ok
    n, n_ok = int(m.sum()), int(okm.sum())
    kinds = Counter(k for k in d.error_kind[m & ~d.ok].tolist() if k is not None)

    sent_m, done_m = d.sent_ns[m], d.done_ns[m]
    window_from: Literal["measured", "given"] = "given" if duration_s is not None else "measured"
    start_ns, duration_s = measurement_window(d, duration_s)

    out_total, prompt_total = _sum(d.output_tokens[okm]), _sum(d.prompt_tokens[okm])
    both_total = None if out_total is None or prompt_total is None else out_total + prompt_total
    error_rate = _fraction(n - n_ok, n)
    lag = Distribution.of(d.schedule_lag_ms[m])
    achieved = _rate(sent_m)
    scheduled = _rate(d.scheduled_ns[m])
    # Judge the client against the schedule it was given, not the nominal rate: a short
    # Poisson schedule is itself several % off its nominal rate.
    reference = scheduled if scheduled is not None else requested_rate_rps
    if requested_rate_rps is None:
        reference = None  # closed loop: the server sets the pace, there is no rate to keep
    loop = loop_lag_ms if loop_lag_ms is not None else Distribution(count=0)
    degraded, reasons = _degraded(lag, achieved, reference, loop)
    mean_if, max_if = _in_flight(sent_m, done_m, start_ns, duration_s)
    good = good_mask(d, slo)
    n_good = int(good.sum())
    slo_values, meets, unmeasured = _meets_slo(d, okm, slo, error_rate)
    assessed = not unmeasured  # goodput needs every bounded metric measured

    acc: Accuracy | None = None
    p1: PassAt1 | None = None
    n_correct_good: int | None = None
    if has_correctness(d):
        acc, p1 = accuracy(d), pass_at_1(d)
        n_correct_good = int((good & d.correct).sum()) if assessed else None

    return PointSummary(
        requests=n, ok=n_ok, errors=n - n_ok, errors_by_kind=dict(sorted(kinds.items())),
        error_rate=error_rate,
        duration_s=duration_s, duration_from=window_from,
        request_throughput_rps=_per_s(n_ok, duration_s),
        output_token_throughput_tps=_per_s(out_total, duration_s),
        total_token_throughput_tps=_per_s(both_total, duration_s),
        output_tokens_total=out_total, prompt_tokens_total=prompt_total,
        output_tokens=Distribution.of(d.output_tokens[okm]),
        ttft_ms=Distribution.of(d.ttft_ms[okm]),
        tpot_ms=Distribution.of(d.tpot_ms[okm]),
        itl_ms=Distribution.of(d.itl_ms[okm[d.itl_row]]),
        e2e_ms=Distribution.of(d.e2e_ms[okm]),
        schedule_lag_ms=lag,
        requested_rate_rps=requested_rate_rps, scheduled_rate_rps=scheduled,
        achieved_rate_rps=achieved, degraded=degraded, degraded_reasons=reasons,
        response_ttft_ms=Distribution.of(d.response_ttft_ms[okm]),
        response_e2e_ms=Distribution.of(d.response_e2e_ms[okm]),
        latency_basis=latency_basis(d), loop_lag_ms=loop,
        trusted=degraded is not True,
        untrusted_reason="; ".join(reasons) if degraded is True else None,
        mean_in_flight=mean_if, max_in_flight=max_if,
        slo=slo, good=n_good, goodput_rps=_per_s(n_good, duration_s) if assessed else None,
        good_fraction=_fraction(n_good, n) if assessed else None, slo_values_ms=slo_values,
        meets_slo=meets, slo_unmeasured=unmeasured,
        tokens_from_usage_fraction=_fraction(int((d.tokens_from_usage & okm).sum()), n_ok),
        cached_prompt_fraction=_cached_fraction(d, okm),
        tokens_from_chunks_fraction=_fraction(int((d.tokens_from_chunks & okm).sum()), n_ok),
        accuracy=acc, pass_at_1=p1, correct_good=n_correct_good,
        correct_goodput_rps=_per_s(n_correct_good, duration_s),
        turns=per_turn(d),
    )


def correct_goodput(
    table: pa.Table | Derived, *, slo: SLO, duration_s: float | None = None
) -> float | None:
    """Requests that are correct AND meet the SLOs, per second of the measurement window."""
    d = table if isinstance(table, Derived) else derive(table)
    if not has_correctness(d):
        return None
    _, window_s = measurement_window(d, duration_s)
    return _per_s(int((good_mask(d, slo) & d.correct).sum()), window_s)
