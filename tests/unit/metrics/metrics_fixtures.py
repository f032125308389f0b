"""Small record builders for the metrics tests: times are given in ms, stored in ns."""

from __future__ import annotations

import pyarrow as pa

from acceval.results.records import Record, records_to_table

MS = 1_000_000


def req(
    i: int,
    *,
    sent_ms: float | None,
    chunks_ms: list[float] | None = None,
    done_ms: float | None = None,
    tokens: int | None = None,
    sched_ms: float | None = None,
    error: str | None = None,
    correct: bool | None = None,
    task: str | None = None,
    attempt: int = 0,
    warmup: bool = False,
    tokens_from: str | None = "usage",
    prompt_tokens: int | None = 10,
    finish_ms: float | None = None,
    finish_reason: str | None = None,
) -> Record:
    """One request. The first chunk is the first token; ``done`` defaults to the last chunk."""
    chunks = chunks_ms or []
    ns = [round(c * MS) for c in chunks]
    if done_ms is None and chunks:
        done_ms = chunks[-1]
    return Record(
        target="t", load_index=0, load_label="p", request_id=i, task_id=task or f"task{i}",
        attempt=attempt, warmup=warmup,
        scheduled_ns=None if sched_ms is None else round(sched_ms * MS),
        sent_ns=None if sent_ms is None else round(sent_ms * MS),
        first_token_ns=ns[0] if ns else None,
        done_ns=None if done_ms is None else round(done_ms * MS),
        chunk_ns=ns, prompt_tokens=prompt_tokens, output_tokens=tokens,
        tokens_from=tokens_from if tokens is not None else None,
        error_kind=error, correct=correct, finish_reason=finish_reason,
        finish_ns=None if finish_ms is None else round(finish_ms * MS),
    )


def table(*records: Record) -> pa.Table:
    return records_to_table(list(records))


def hand_table() -> pa.Table:
    """The worked example of docs/metrics.md.

    A: scheduled 0, sent 1, chunks 11/13/15/17, 4 tokens  -> TTFT 10, E2E 16, TPOT 2, ITL 2,2,2
    B: scheduled 10, sent 10, chunks 30/40, 4 tokens      -> TTFT 20, E2E 30, TPOT 10/3, ITL 5
    C: scheduled 20, sent 20, timeout at 50
    W: a warmup request with absurd times, excluded everywhere
    """
    return table(
        req(0, sched_ms=0, sent_ms=1, chunks_ms=[11, 13, 15, 17], tokens=4,
            correct=True, task="t1"),
        req(1, sched_ms=10, sent_ms=10, chunks_ms=[30, 40], tokens=4,
            correct=False, task="t1", attempt=1),
        req(2, sched_ms=20, sent_ms=20, done_ms=50, error="timeout", task="t2"),
        req(3, sched_ms=-500, sent_ms=-400, chunks_ms=[900, 1000], tokens=2, warmup=True,
            correct=True, task="t3"),
    )
