"""Metrics: pure functions from stored records (a ``RECORD_SCHEMA`` table) to numbers.

Formulas, and how each name maps to vLLM bench, GuideLLM, AIPerf and inference-perf, are in
``docs/metrics.md``.
"""

from acceval.metrics.accuracy import (
    Accuracy,
    PassAt1,
    accuracy,
    expected_attempts_per_correct,
    has_correctness,
    pass_at_1,
    wilson_interval,
)
from acceval.metrics.derive import Derived, derive
from acceval.metrics.distribution import Distribution, percentile
from acceval.metrics.point import (
    DEGRADED_LAG_P99_MS,
    DEGRADED_LOOP_LAG_P99_MS,
    DEGRADED_LOOP_STALL_MS,
    DEGRADED_MIN_RATE_FRACTION,
    LatencyBasis,
    PointSummary,
    correct_goodput,
    good_mask,
    judged_latency,
    latency_basis,
    measurement_window,
    summarize_point,
)
from acceval.metrics.turns import TurnSummary, per_turn

__all__ = [
    "DEGRADED_LAG_P99_MS",
    "DEGRADED_LOOP_LAG_P99_MS",
    "DEGRADED_LOOP_STALL_MS",
    "DEGRADED_MIN_RATE_FRACTION",
    "Accuracy",
    "Derived",
    "Distribution",
    "LatencyBasis",
    "PassAt1",
    "PointSummary",
    "TurnSummary",
    "accuracy",
    "correct_goodput",
    "derive",
    "expected_attempts_per_correct",
    "good_mask",
    "has_correctness",
    "judged_latency",
    "latency_basis",
    "measurement_window",
    "pass_at_1",
    "per_turn",
    "percentile",
    "summarize_point",
    "wilson_interval",
]
