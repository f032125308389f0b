"""Suite-wide notes on the two phases of `make test` (tools/test-phases.sh, docs/testing.md).

A test that measures live timings is marked `timing`, by its own file (module-level
``pytestmark = pytest.mark.timing``) or by its own decorator (``@pytest.mark.timing``):
millisecond bounds (client against server log, recovery windows, schedule lag, timer
precision), any bound on elapsed wall-clock time, and any assertion that needs the load
generator's self-check to trust a point (a point whose client loop lagged is not trusted, so
claims, the verdict and the plan's measured efficiency change on a busy host). `make test`
runs those alone, after the rest; everything else runs on two worker processes and must pass
on a loaded host. tests/unit/test_timing_marks.py fails when a test reads a clock and bounds
it, or asserts on trust, without the mark.
"""

from hypothesis import HealthCheck, settings

# Property tests judge values, never time: Hypothesis's default 200 ms deadline per example
# and its "too slow" health check fail a correct test when the host stalls the worker (a
# clean-clone `make test` lost `test_percentiles_monotone` to one 3.2 s example on a loaded
# 2-core host). A test that bounds time is a `timing` test and says so.
settings.register_profile("acceval", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("acceval")
