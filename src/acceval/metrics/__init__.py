"""Metrics: pure functions from stored records (a ``RECORD_SCHEMA`` table) to numbers.

Formulas, and how each name maps to vLLM bench, GuideLLM, AIPerf and inference-perf, are in
``docs/metrics.md``.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
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

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "Accuracy": "acceval.metrics.accuracy", "PassAt1": "acceval.metrics.accuracy",
    "accuracy": "acceval.metrics.accuracy",
    "expected_attempts_per_correct": "acceval.metrics.accuracy",
    "has_correctness": "acceval.metrics.accuracy", "pass_at_1": "acceval.metrics.accuracy",
    "wilson_interval": "acceval.metrics.accuracy", "Derived": "acceval.metrics.derive",
    "derive": "acceval.metrics.derive", "Distribution": "acceval.metrics.distribution",
    "percentile": "acceval.metrics.distribution",
    "DEGRADED_LAG_P99_MS": "acceval.metrics.point",
    "DEGRADED_LOOP_LAG_P99_MS": "acceval.metrics.point",
    "DEGRADED_LOOP_STALL_MS": "acceval.metrics.point",
    "DEGRADED_MIN_RATE_FRACTION": "acceval.metrics.point",
    "LatencyBasis": "acceval.metrics.point", "PointSummary": "acceval.metrics.point",
    "correct_goodput": "acceval.metrics.point", "good_mask": "acceval.metrics.point",
    "judged_latency": "acceval.metrics.point", "latency_basis": "acceval.metrics.point",
    "measurement_window": "acceval.metrics.point", "summarize_point": "acceval.metrics.point",
    "TurnSummary": "acceval.metrics.turns", "per_turn": "acceval.metrics.turns"})

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
