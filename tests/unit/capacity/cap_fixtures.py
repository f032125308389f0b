"""Measured-looking load points for the capacity tests, built through the real path:
``Record`` -> ``records_to_table`` -> ``summarize_point`` -> ``PointResult``."""

from __future__ import annotations

from acceval.metrics import summarize_point
from acceval.results.records import Record, records_to_table
from acceval.results.section import PointResult
from acceval.study import SLO

MS = 1_000_000


def open_point(index: int, rate_rps: float, ttft_ms: float, *, n: int = 40,
               itl_ms: float = 5.0, slo: SLO | None = None, errors: int = 0,
               kind: str = "poisson", late_ms: float = 0.0) -> PointResult:
    """An open-loop point at ``rate_rps`` where every request has the same TTFT (so every
    percentile equals ``ttft_ms``) and 4 tokens ``itl_ms`` apart; the last ``errors`` fail.
    ``late_ms``: every other request left that late (schedule lag), so the response TTFT
    of those is ``late_ms`` longer and a lag over 10 ms makes the point untrusted."""
    slo = slo or SLO(ttft_ms=100.0)
    gap_ns = int(1e9 / rate_rps)
    recs = []
    for i in range(n):
        scheduled = i * gap_ns
        sent = scheduled + (int(late_ms * MS) if i % 2 else 0)
        first = sent + int(ttft_ms * MS)
        chunks = [first + int(k * itl_ms * MS) for k in range(4)]
        failed = i >= n - errors
        recs.append(Record(
            target="t", load_index=index, load_label=f"{kind}={rate_rps:g}", request_id=i,
            task_id=f"task{i}", scheduled_ns=scheduled, sent_ns=sent,
            first_token_ns=None if failed else first,
            done_ns=sent + MS if failed else chunks[-1], chunk_ns=[] if failed else chunks,
            prompt_tokens=10, output_tokens=None if failed else 4,
            tokens_from=None if failed else "usage", error_kind="http" if failed else None,
            correct=None if failed else True))
    table = records_to_table(recs)
    requested = None if kind == "concurrency" else rate_rps
    summary = summarize_point(table, slo=slo, requested_rate_rps=requested)
    return PointResult(index=index, label=f"{kind}={rate_rps:g}", kind=kind, level=rate_rps,
                       requested_rate_rps=requested, stopped_by="count", sent=n, completed=n,
                       started_ns=0, ended_ns=int(recs[-1].done_ns or 0), summary=summary)


def closed_point(index: int, concurrency: int, ttft_ms: float, e2e_extra_ms: float, *,
                 n: int = 40, slo: SLO | None = None) -> PointResult:
    """A closed-loop point: ``concurrency`` requests in flight, each TTFT ``ttft_ms`` and
    done ``e2e_extra_ms`` later (4 tokens)."""
    slo = slo or SLO(ttft_ms=100.0)
    e2e_ns = int((ttft_ms + e2e_extra_ms) * MS)
    recs = []
    for i in range(n):
        sent = (i // concurrency) * e2e_ns
        first = sent + int(ttft_ms * MS)
        step = int(e2e_extra_ms / 3 * MS)
        chunks = [first + k * step for k in range(4)]
        recs.append(Record(
            target="t", load_index=index, load_label=f"concurrency={concurrency}",
            request_id=i, task_id=f"task{i}", scheduled_ns=None, sent_ns=sent,
            first_token_ns=first, done_ns=chunks[-1], chunk_ns=chunks, prompt_tokens=10,
            output_tokens=4, tokens_from="usage", correct=True))
    summary = summarize_point(records_to_table(recs), slo=slo, requested_rate_rps=None)
    return PointResult(index=index, label=f"concurrency={concurrency}", kind="concurrency",
                       level=float(concurrency), requested_rate_rps=None, stopped_by="count",
                       sent=n, completed=n, started_ns=0, ended_ns=int(recs[-1].done_ns or 0),
                       summary=summary)
