"""The collector pause: off inside, back as it was after the last pause, whoever ends first
(threads), whatever ends it (an exception); what was alive is frozen out meanwhile."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from acceval import collector


@pytest.fixture(autouse=True)
def _collector_back() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_inside_no_collection_and_the_living_frozen_after_it_as_before() -> None:
    gc.enable()
    before = gc.get_freeze_count()
    with collector.collector_paused():
        assert not gc.isenabled()
        assert gc.get_freeze_count() > before
    assert gc.isenabled()
    assert gc.get_freeze_count() == before


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector.collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_exception_inside_gives_the_collector_back() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector.collector_paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_with_the_last() -> None:
    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector.collector_paused():
            first_in.set()
            second_in.wait(30)
        first_out.set()

    def second() -> None:
        first_in.wait(30)
        with collector.collector_paused():
            second_in.set()
            first_out.wait(30)
            # The first thread's pause has ended; this one's has not.
            seen["inside after the first ended"] = gc.isenabled()
        seen["after both"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert seen == {"inside after the first ended": False, "after both": True}


def test_a_resume_without_a_pause_is_a_bug_said_at_once() -> None:
    with pytest.raises(RuntimeError, match="ended more often than it began"):
        collector.resume()
