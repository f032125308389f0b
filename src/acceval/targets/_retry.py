"""When a failed request is sent again: the ``endpoint.retry`` policy and ``Retry-After``."""

from __future__ import annotations

import email.utils
import re
import time
from datetime import UTC

from acceval.results.records import Record
from acceval.targets.spec import RetryPolicy

_SECONDS = re.compile(r"[0-9]{1,10}(?:\.[0-9]{1,9})?")


def parse_retry_after(value: str, now_s: float | None = None) -> float | None:
    """The seconds a ``Retry-After`` value asks to wait, from ``now_s`` (wall clock, default
    now): delta-seconds or an HTTP date (RFC 9110 10.2.3), never negative; None when it is
    neither."""
    v = value.strip()
    if _SECONDS.fullmatch(v):
        return float(v)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC, its origin unknown
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now_s is None else now_s))


def _retryable(policy: RetryPolicy, rec: Record) -> bool:
    if rec.error_kind == "connect":
        return "connect" in policy.on
    return rec.error_kind == "http" and rec.http_status in policy.on


def wait_before_next(policy: RetryPolicy, rec: Record, sends: int, retry_after_s: float | None,
                     time_left_s: float) -> tuple[float | None, str | None]:
    """How long to wait before sending ``rec``'s request again after ``sends`` sends, or
    None (no retry) and, when a retry was due but is not taken, why."""
    if sends >= policy.max_attempts or not _retryable(policy, rec):
        return None, None
    wait = min(policy.backoff_s * 2 ** (sends - 1), policy.max_wait_s)
    if policy.honour_retry_after and retry_after_s is not None:
        if retry_after_s > policy.max_wait_s:
            return None, (f"not retried: Retry-After {retry_after_s:g} s is over "
                          f"retry.max_wait_s {policy.max_wait_s:g} s")
        wait = max(wait, retry_after_s)
    if wait >= time_left_s:
        return None, f"not retried: a wait of {wait:g} s would pass timeout_s"
    return wait, None


def clear_outcome(rec: Record) -> None:
    """Forget a failed attempt's answer before the next send; ``sent_ns`` (the first send)
    and ``retry_after_s`` stay."""
    rec.first_byte_ns = rec.first_token_ns = rec.done_ns = rec.finish_ns = None
    rec.chunk_ns.clear()
    rec.prompt_tokens = rec.output_tokens = rec.http_status = None
    rec.tokens_from = rec.output_text = rec.finish_reason = None
    rec.error_kind = rec.error_detail = None
