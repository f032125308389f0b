import acceval.metrics as metrics


def test_public_names_are_pinned():
    assert sorted(metrics.__all__) == sorted([
        "DEGRADED_LAG_P99_MS", "DEGRADED_LOOP_LAG_P99_MS", "DEGRADED_LOOP_STALL_MS",
        "DEGRADED_MIN_RATE_FRACTION", "Accuracy", "Derived", "Distribution", "LatencyBasis",
        "PassAt1", "PointSummary", "TurnSummary", "accuracy", "correct_goodput", "derive",
        "expected_attempts_per_correct", "good_mask", "has_correctness", "judged_latency",
        "latency_basis", "measurement_window", "pass_at_1", "per_turn", "percentile",
        "summarize_point", "wilson_interval",
    ])
    assert all(hasattr(metrics, name) for name in metrics.__all__)
