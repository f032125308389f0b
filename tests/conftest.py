"""Suite-wide: which tests measure live timings.

`make test` runs the suite in two phases: the unit, end-to-end and untimed integration tests
on two worker processes (pytest-xdist), then the other integration tests and the timing
files below alone, one at a time. Their millisecond bounds (client against server log,
recovery windows, schedule lag, timer precision) and the load generator's self-check (a point
whose client loop lagged is not trusted) must be measured on a machine that is not also
running another test.
"""

from __future__ import annotations

import pytest

TIMING_FILES = frozenset({
    "test_ground_truth.py", "test_transport_conformance.py", "test_interruption.py",
    "test_trusted_capacity.py", "test_loadgen_runner.py", "test_loadgen_mock_server.py",
    "test_demand_replay.py", "test_scaleout_ray.py", "test_telemetry.py", "test_timer.py",
    "test_descriptors.py", "test_serve_wire.py", "test_serve_workers.py",
})


# Integration tests that assert no timing bound and no self-check verdict (files, counts,
# accuracy, classified errors): they run with the unit tests.
UNTIMED_INTEGRATION = frozenset({
    "test_agents.py", "test_training_workload.py", "test_disk_full.py",
    "test_artifact_check.py", "test_artifact_check_numpy.py", "test_shipped_model_served.py",
    "test_repeats_and_vllm_roundtrip.py", "test_workloads_served.py", "test_serve_api.py",
    "test_serve_process.py", "test_prompts_per_point.py", "test_local_transport.py",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        if name in TIMING_FILES or (item.path.parent.name == "integration"
                                    and name not in UNTIMED_INTEGRATION):
            item.add_marker(pytest.mark.timing)
