"""The retry policy's decisions and Retry-After in both of its forms."""

from __future__ import annotations

import email.utils

import pytest
from pydantic import ValidationError

from acceval.results.records import Record
from acceval.targets._retry import clear_outcome, parse_retry_after, wait_before_next
from acceval.targets.spec import RetryPolicy

NOW = 1_750_000_000.0


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0),
    (" 3 ", 3.0),
    ("0", 0.0),
    ("1.5", 1.5),
    (email.utils.formatdate(NOW + 30, usegmt=True), 30.0),
    (email.utils.formatdate(NOW - 30, usegmt=True), 0.0),   # a date passed: no wait
    ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),
    ("-5", None),
    ("soon", None),
    ("", None),
])
def test_retry_after_is_seconds_or_an_http_date(value: str, seconds: float | None) -> None:
    assert parse_retry_after(value, NOW) == seconds


def _failed(kind: str, status: int | None = None) -> Record:
    rec = Record("t", 0, "p", 1, "task", sent_ns=5, first_byte_ns=9, done_ns=12,
                 chunk_ns=[10], output_text="x", http_status=status, error_kind=kind,
                 error_detail="boom", retry_after_s=2.0)
    return rec


def test_backoff_doubles_and_stops_at_max_attempts() -> None:
    p = RetryPolicy(max_attempts=3, backoff_s=0.5)
    rec = _failed("http", 503)
    assert wait_before_next(p, rec, 1, None, 60.0) == (0.5, None)
    assert wait_before_next(p, rec, 2, None, 60.0) == (1.0, None)
    assert wait_before_next(p, rec, 3, None, 60.0) == (None, None)


@pytest.mark.parametrize(("kind", "status", "retried"), [
    ("http", 503, True), ("http", 429, True), ("connect", None, True),
    ("http", 500, False), ("timeout", None, False), ("stream_cut", 200, False),
    ("client", None, False),
])
def test_only_what_the_policy_names_is_retried(kind: str, status: int | None,
                                               retried: bool) -> None:
    wait, _ = wait_before_next(RetryPolicy(), _failed(kind, status), 1, None, 60.0)
    assert (wait is not None) == retried


def test_retry_after_is_honoured_up_to_max_wait_and_within_the_timeout() -> None:
    rec = _failed("http", 503)
    assert wait_before_next(RetryPolicy(backoff_s=0.1), rec, 1, 4.0, 60.0) == (4.0, None)
    assert wait_before_next(RetryPolicy(backoff_s=0.1, honour_retry_after=False), rec, 1, 4.0,
                            60.0) == (0.1, None)
    wait, why = wait_before_next(RetryPolicy(max_wait_s=3.0), rec, 1, 4.0, 60.0)
    assert wait is None and why is not None and "max_wait_s" in why
    wait, why = wait_before_next(RetryPolicy(), rec, 1, 4.0, 3.0)
    assert wait is None and why is not None and "timeout_s" in why


def test_a_retry_forgets_the_failed_answer_but_not_the_first_send() -> None:
    rec = _failed("http", 503)
    clear_outcome(rec)
    assert rec == Record("t", 0, "p", 1, "task", sent_ns=5, retry_after_s=2.0)


def test_statuses_to_retry_are_http_errors() -> None:
    with pytest.raises(ValidationError, match="400-599"):
        RetryPolicy(on=[200])
    with pytest.raises(ValidationError):
        RetryPolicy(on=["timeout"])  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        RetryPolicy(max_attempts=1)
