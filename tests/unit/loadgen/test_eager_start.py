"""start_eagerly runs a coroutine's first step at once and then behaves like a task."""

from __future__ import annotations

import asyncio

import pytest

from acceval.loadgen.runner import start_eagerly


async def _body(fut: asyncio.Future[int], log: list[str]) -> None:
    log.append("start")
    log.append(f"got {await fut}")
    await asyncio.sleep(0.001)
    await asyncio.sleep(0)
    log.append("end")


@pytest.mark.parametrize("when", ["before", "after"])
def test_first_step_runs_now_and_the_rest_follows(when: str) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        log: list[str] = []
        task = start_eagerly(loop, _body(fut, log))
        assert log == ["start"]  # ran before this line, not on a later loop turn
        if when == "before":
            fut.set_result(7)
        await asyncio.sleep(0)
        if when == "after":
            fut.set_result(7)
        await task
        return log

    assert asyncio.run(main()) == ["start", "got 7", "end"]


def test_exceptions_and_cancellation_reach_the_coroutine() -> None:
    async def main() -> tuple[list[str], bool]:
        loop = asyncio.get_running_loop()
        log: list[str] = []

        async def guarded(fut: asyncio.Future[int]) -> None:
            try:
                await fut
            except ValueError as exc:
                log.append(f"caught {exc}")
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                log.append("cancelled")
                raise

        fut: asyncio.Future[int] = loop.create_future()
        task = start_eagerly(loop, guarded(fut))
        fut.set_exception(ValueError("boom"))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return log, task.cancelled()

    log, cancelled = asyncio.run(main())
    assert log == ["caught boom", "cancelled"] and cancelled


def test_a_coroutine_that_finishes_in_its_first_step() -> None:
    async def quick() -> None:
        return None

    async def main() -> bool:
        task = start_eagerly(asyncio.get_running_loop(), quick())
        await task
        return task.done() and task.exception() is None

    assert asyncio.run(main())
