"""Inside a load point the collector is held off and the interpreter switches threads every
0.2 ms; both are as they were once the point ends, however it ends."""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import POINT_SWITCH_INTERVAL_S, PointSpec, run_point
from acceval.results.records import Record


class _Noting:
    """A target that answers at once and notes the interpreter's state while it sends."""

    name = "noting"
    timeout_s = 5.0

    def __init__(self) -> None:
        self.seen: list[tuple[float, bool]] = []

    def ready_to_send(self) -> bool:
        return True

    async def start(self) -> None:
        return None

    async def send(self, prompt: Prompt, rec: Record, t0_ns: int) -> None:
        self.seen.append((sys.getswitchinterval(), gc.isenabled()))
        await asyncio.sleep(0)
        rec.output_text = "ok"

    async def close(self) -> None:
        return None


def _spec() -> PointSpec:
    return PointSpec(index=0, label="c1", kind="concurrency", level=1, seed=1,
                     min_duration_s=0.0, min_requests=5, max_duration_s=5.0)


def test_inside_a_point_and_after_it() -> None:
    before = (sys.getswitchinterval(), gc.isenabled())
    target = _Noting()
    res = asyncio.run(run_point(target, [Prompt("a", prompt="p")], _spec(), lambda r: None,
                                t0_ns=0))
    assert res.completed >= 5
    assert {(round(si, 6), on) for si, on in target.seen} == {(POINT_SWITCH_INTERVAL_S, False)}
    assert (sys.getswitchinterval(), gc.isenabled()) == before


def test_a_point_that_fails_gives_both_back() -> None:
    def full_disk(rec: Record) -> None:
        raise OSError(28, "No space left on device")

    before = (sys.getswitchinterval(), gc.isenabled())
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(run_point(_Noting(), [Prompt("a", prompt="p")], _spec(), full_disk,
                              t0_ns=0))
    assert (sys.getswitchinterval(), gc.isenabled()) == before


def test_points_gathered_on_one_loop_share_the_settings_and_the_last_gives_them_back() -> None:
    before = (sys.getswitchinterval(), gc.isenabled())
    short, long_ = _Noting(), _Noting()

    async def both() -> None:
        spec = PointSpec(index=1, label="c1 long", kind="concurrency", level=1, seed=2,
                         min_duration_s=0.0, min_requests=40, max_duration_s=5.0)
        await asyncio.gather(
            run_point(short, [Prompt("a", prompt="p")], _spec(), lambda r: None, t0_ns=0),
            run_point(long_, [Prompt("b", prompt="q")], spec, lambda r: None, t0_ns=0))

    asyncio.run(both())
    # The longer point kept the settings after the shorter one ended.
    assert {(round(si, 6), on) for si, on in long_.seen} == {(POINT_SWITCH_INTERVAL_S, False)}
    assert (sys.getswitchinterval(), gc.isenabled()) == before
