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
