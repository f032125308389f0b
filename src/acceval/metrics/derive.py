"""Per-request quantities derived from stored records: one numpy array per quantity, aligned
with the table's rows (plus the flat inter-token-latency sample, which is not).

Everything is pulled from the Arrow table once and vectorised; no Python loop per row.
Timestamps are int64 ns since the run anchor; they are converted to float64, which is exact up
to 2**53 ns (104 days), and nulls become NaN so that missing stays missing through arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
ObjArray = npt.NDArray[np.object_]

_NS_PER_MS = 1e6


@dataclass(frozen=True, slots=True)
class Derived:
    """Per-row arrays (length ``n``) and the flat ITL sample (``itl_ms`` with ``itl_row``)."""

    n: int
    measured: BoolArray          # not a warmup row; every metric uses only these
    ok: BoolArray                # error_kind is null
    error_kind: ObjArray         # str or None
    scheduled_ns: FloatArray
    sent_ns: FloatArray
    done_ns: FloatArray
    ttft_ms: FloatArray          # first_token_ns - sent_ns (service time)
    e2e_ms: FloatArray           # done_ns - sent_ns (service time)
    response_ttft_ms: FloatArray  # first_token_ns - scheduled_ns; NaN without a schedule
    response_e2e_ms: FloatArray   # done_ns - scheduled_ns; NaN without a schedule
    tpot_ms: FloatArray          # (last decode stamp - first) / (output_tokens - 1); NaN when
                                 # tokens <= 1 or fewer than two distinct arrival times
    chunks: IntArray             # content chunks that arrived (0: not streamed; -1: unknown)
    schedule_lag_ms: FloatArray  # sent_ns - scheduled_ns
    itl_ms: FloatArray           # flat: every decode-stamp gap / tokens per stamp of its row
    itl_row: IntArray            # the row each itl_ms sample belongs to
    itl_mean_ms: FloatArray      # per row: mean of its itl_ms samples; NaN when none
    output_tokens: FloatArray
    prompt_tokens: FloatArray
    cached_prompt_tokens: FloatArray  # what the server's prefix cache held; NaN: not said
    turn: FloatArray             # a conversation's turn (0 first); NaN: not a conversation
    tokens_from_usage: BoolArray   # the output count came from the server's usage
    tokens_from_chunks: BoolArray  # ... from counting the chunks (neither: not said)
    correct: BoolArray           # correct is True and the request did not error
    correct_known: BoolArray     # correct is not null
    task_code: IntArray          # task_id dictionary code (for grouping attempts); -1 if null

    def subset(self, rows: BoolArray) -> Derived:
        """The same arrays for the rows where ``rows`` is True (a load point of a target),
        without deriving them again; the flat ITL sample keeps its rows' gaps."""
        keep = np.asarray(rows, dtype=np.bool_)
        renumber = np.cumsum(keep) - 1
        itl_keep = keep[self.itl_row] if self.itl_row.size else np.zeros(0, np.bool_)
        values: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "n":
                values["n"] = int(keep.sum())
            elif f.name == "itl_ms":
                values[f.name] = v[itl_keep]
            elif f.name == "itl_row":
                values[f.name] = renumber[v[itl_keep]].astype(np.int64)
            else:
                values[f.name] = v[keep]
        return Derived(**values)


def _col(table: pa.Table, name: str) -> pa.Array:
    col = table.column(name)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _float(table: pa.Table, name: str) -> FloatArray:
    arr = pc.cast(_col(table, name), pa.float64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)


def _bool(table: pa.Table, name: str, *, null: bool) -> BoolArray:
    arr = pc.fill_null(_col(table, name), null)
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.bool_)


def _chunk_counts(chunks: pa.Array) -> IntArray:
    return np.asarray(
        pc.fill_null(pc.list_value_length(chunks), 0).to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )


def arrived_tokens(output_tokens: FloatArray, chunks: IntArray,
                   stopped: BoolArray) -> FloatArray:
    """The output tokens that arrived as text: the server's count, less the end-of-sequence
    token it counts but never sends, when the answer stopped on it (finish_reason "stop")
    and the count exceeds the chunks that came (so some token did not come as a chunk)."""
    return np.where(finish_step(output_tokens, chunks, stopped), output_tokens - 1,
                    output_tokens)


def finish_step(output_tokens: FloatArray, chunks: IntArray, stopped: BoolArray) -> BoolArray:
    """Rows whose server counted a last decode step that sent no text: the answer stopped on
    its own and ``usage`` counts more tokens than text chunks came (vLLM counts the
    end-of-sequence token: a 4-digit answer reports 5). That step ends at the finish chunk."""
    return np.asarray(stopped & (chunks >= 1) & (output_tokens > chunks) & (output_tokens > 1),
                      dtype=np.bool_)


@dataclass(frozen=True, slots=True)
class _Decode:
    """Each row's decode stamps, flattened: its text chunks, then the finish chunk when the
    server counted that step (:func:`finish_step`)."""

    values: npt.NDArray[np.float64]  # ns, flattened over rows
    lengths: IntArray                # stamps per row
    distinct: IntArray               # distinct arrival times per row
    ends: IntArray                   # where each row's stamps end in ``values``
    gaps: npt.NDArray[np.float64]    # consecutive differences within each row, flattened


def _decode_stamps(chunks: pa.Array, lengths: IntArray, extra: BoolArray,
                   end_ns: FloatArray) -> _Decode:
    flat = pc.list_flatten(chunks)
    if flat.null_count:
        flat = pc.cast(flat, pa.float64())
    values = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float64)
    if extra.any():
        values = np.insert(values, np.cumsum(lengths)[extra], end_ns[extra])
    stamps = lengths + extra.astype(np.int64)
    ends = np.cumsum(stamps)
    rows = np.repeat(np.arange(stamps.size, dtype=np.int64), np.maximum(stamps - 1, 0))
    gaps = np.diff(values)[_within_rows(ends, values.size)]
    distinct = np.where(stamps > 0, 1, 0) + np.bincount(rows, weights=gaps != 0,
                                                        minlength=stamps.size).astype(np.int64)
    return _Decode(values, stamps, distinct, ends, gaps)


def _within_rows(ends: IntArray, size: int) -> BoolArray:
    """Which consecutive differences of the flattened stamps lie inside one row (the one gap
    that spans two rows at each list boundary is dropped)."""
    keep = np.ones(max(size - 1, 0), dtype=np.bool_)
    cut = ends[:-1] - 1
    keep[cut[(cut >= 0) & (cut < keep.size)]] = False
    return keep


def _itl(dec: _Decode, counted_tokens: FloatArray, n: int
         ) -> tuple[FloatArray, IntArray, FloatArray]:
    """Gaps between consecutive decode stamps, divided by the request's mean tokens per stamp
    (``counted_tokens / stamps``), so a chunk that carries k tokens counts as k gaps of gap/k
    instead of one long gap. A row whose stamps share one arrival time (the whole answer in
    one read) showed no decode: it gives no samples."""
    lengths, values, ends, diffs = dec.lengths, dec.values, dec.ends, dec.gaps
    starts = ends - lengths
    per_row = np.maximum(lengths - 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens_per_stamp = counted_tokens / lengths
    tokens_per_stamp[~(tokens_per_stamp > 0) | (dec.distinct < 2)] = np.nan
    ms_per_token_gap = _NS_PER_MS * tokens_per_stamp  # ns of gap per ms of ITL
    itl = diffs / np.repeat(ms_per_token_gap, per_row)
    rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
    valid = ~np.isnan(itl)
    has_gap = per_row > 0
    mean = np.full(n, np.nan)
    span = values[ends[has_gap] - 1] - values[starts[has_gap]]
    mean[has_gap] = span / per_row[has_gap] / ms_per_token_gap[has_gap]
    return itl[valid], rows[valid], mean


def _tpot(dec: _Decode, output_tokens: FloatArray) -> FloatArray:
    """(last decode stamp - first) / (output_tokens - 1): NaN with at most one token or
    fewer than two distinct arrival times (no decode phase was seen)."""
    ends = dec.ends
    has = dec.lengths > 0
    span_ms = np.full(dec.lengths.size, np.nan)
    span_ms[has] = (dec.values[ends[has] - 1] - dec.values[ends[has] - dec.lengths[has]]
                    ) / _NS_PER_MS
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((output_tokens > 1) & (dec.distinct >= 2),
                        span_ms / (output_tokens - 1), np.nan)


def decode_stamps(chunk_ns: list[int], output_tokens: int | None, finish_reason: str | None,
                  finish_ns: int | None, done_ns: int | None) -> list[int]:
    """One request's decode stamps as :func:`derive` counts them: its text chunks, then the
    end of the server-counted finish step (:func:`finish_step`) when there is one. What the
    vLLM-bench export writes as ``itls`` (one gap per stamp after the first)."""
    tokens = np.array([np.nan if output_tokens is None else output_tokens], dtype=np.float64)
    step = finish_step(tokens, np.array([len(chunk_ns)]), np.array([finish_reason == "stop"]))
    end = finish_ns if finish_ns is not None else done_ns
    return [*chunk_ns, end] if bool(step[0]) and end is not None else list(chunk_ns)


def _stopped(table: pa.Table, n: int) -> BoolArray:
    if "finish_reason" not in table.column_names:
        return np.zeros(n, dtype=np.bool_)
    return _equals(table, "finish_reason", "stop")


def _equals(table: pa.Table, column: str, value: str) -> BoolArray:
    """Which rows hold ``value`` in a string column (null: no), without a Python string per
    row."""
    eq = pc.fill_null(pc.equal(_col(table, column), value), False)
    return np.asarray(eq.to_numpy(zero_copy_only=False), dtype=np.bool_)


def _finish_end_ns(table: pa.Table, done: FloatArray) -> FloatArray:
    """When the counted finish step ended: the finish chunk's stamp; ``done_ns`` for records
    written before ``finish_ns`` existed (on vLLM the usage chunk and [DONE] follow the
    finish chunk within the same moment)."""
    if "finish_ns" not in table.column_names:
        return done
    fin = _float(table, "finish_ns")
    return np.where(np.isnan(fin), done, fin)


def derive(table: pa.Table, *, itl: bool = True, task_code: IntArray | None = None) -> Derived:
    """Per-request derived arrays for a table with ``RECORD_SCHEMA``; ``itl=False`` leaves the
    inter-token sample empty (for callers that need only the stamps, e.g. a timeline);
    ``task_code`` as :func:`outcomes` takes it."""
    n = table.num_rows
    scheduled = _float(table, "scheduled_ns")
    lat = latencies(table)
    sent, done, ttft, e2e = lat.sent_ns, lat.done_ns, lat.ttft_ms, lat.e2e_ms
    first = _float(table, "first_token_ns")
    out_tok = _float(table, "output_tokens")
    # Without the chunk stamps (a reader that needs only the stamps) the count is unknown (-1).
    chunk_col = _col(table, "chunk_ns") if "chunk_ns" in table.column_names else None
    chunks = _chunk_counts(chunk_col) if chunk_col is not None else np.full(n, -1, np.int64)
    itl_ms, itl_row = np.zeros(0), np.zeros(0, np.int64)
    itl_mean = np.full(n, np.nan)
    if chunk_col is not None:
        dec = _decode_stamps(chunk_col, chunks, finish_step(out_tok, chunks, _stopped(table, n)),
                             _finish_end_ns(table, done))
        tpot = _tpot(dec, out_tok)
        if itl:
            itl_ms, itl_row, itl_mean = _itl(dec, out_tok, n)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            tpot = np.where(out_tok > 1, (e2e - ttft) / (out_tok - 1), np.nan)
    error_kind = _col(table, "error_kind")
    out = outcomes(table, task_code)
    return Derived(
        n=n,
        measured=out.measured,
        ok=out.ok,
        error_kind=np.asarray(error_kind.to_numpy(zero_copy_only=False), dtype=object),
        scheduled_ns=scheduled,
        sent_ns=sent,
        done_ns=done,
        ttft_ms=ttft,
        e2e_ms=e2e,
        response_ttft_ms=(first - scheduled) / _NS_PER_MS,
        response_e2e_ms=(done - scheduled) / _NS_PER_MS,
        tpot_ms=tpot,
        chunks=chunks,
        schedule_lag_ms=(sent - scheduled) / _NS_PER_MS,
        itl_ms=itl_ms,
        itl_row=itl_row,
        itl_mean_ms=itl_mean,
        output_tokens=out_tok,
        prompt_tokens=_float(table, "prompt_tokens"),
        cached_prompt_tokens=(_float(table, "cached_prompt_tokens")
                              if "cached_prompt_tokens" in table.column_names
                              else np.full(n, np.nan)),
        turn=_float(table, "turn") if "turn" in table.column_names else np.full(n, np.nan),
        tokens_from_usage=_equals(table, "tokens_from", "usage"),
        tokens_from_chunks=_equals(table, "tokens_from", "chunks"),
        correct=out.correct,
        correct_known=out.correct_known,
        task_code=out.task_code,
    )


@dataclass(frozen=True, slots=True)
class Latencies:
    """The service times of each row, as :class:`Derived` has them, from four stamp columns:
    what a chart over every record of a run needs, at a fraction of a full derive's memory."""

    measured: BoolArray
    ok: BoolArray
    sent_ns: FloatArray
    done_ns: FloatArray
    ttft_ms: FloatArray
    e2e_ms: FloatArray


def latencies(table: pa.Table) -> Latencies:
    """TTFT and E2E from the actual send; reads ``warmup``, ``error_kind`` and the stamps."""
    sent, first, done = (_float(table, c) for c in ("sent_ns", "first_token_ns", "done_ns"))
    ok = np.asarray(pc.is_null(_col(table, "error_kind")).to_numpy(zero_copy_only=False),
                    dtype=np.bool_)
    return Latencies(measured=~_bool(table, "warmup", null=False), ok=ok, sent_ns=sent,
                     done_ns=done, ttft_ms=(first - sent) / _NS_PER_MS,
                     e2e_ms=(done - sent) / _NS_PER_MS)


#: The columns :func:`latencies` reads.
LATENCY_COLUMNS = ["warmup", "error_kind", "sent_ns", "first_token_ns", "done_ns"]


@dataclass(frozen=True, slots=True)
class Outcomes:
    """What accuracy and pass@1 read of each row, without the stamps: a target's accuracy
    over all its points is taken from these, each point's latencies from its own
    :class:`Derived` (so a target's per-request arrays are never all held at once)."""

    measured: BoolArray
    ok: BoolArray
    correct: BoolArray
    correct_known: BoolArray
    task_code: IntArray

    def subset(self, rows: BoolArray) -> Outcomes:
        keep = np.asarray(rows, dtype=np.bool_)
        return Outcomes(self.measured[keep], self.ok[keep], self.correct[keep],
                        self.correct_known[keep], self.task_code[keep])


def task_codes(table: pa.Table) -> IntArray:
    """Each row's ``task_id`` as a dictionary code (for grouping attempts); -1 if null."""
    codes = pc.dictionary_encode(_col(table, "task_id")).indices
    return np.asarray(pc.fill_null(codes, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def outcomes(table: pa.Table, task_code: IntArray | None = None) -> Outcomes:
    """The rows' outcomes; ``task_code``: codes already taken over a larger table (a point's
    rows keep their target's codes, so pass@1 groups them the same way)."""
    ok = np.asarray(pc.is_null(_col(table, "error_kind")).to_numpy(zero_copy_only=False),
                    dtype=np.bool_)
    return Outcomes(
        measured=~_bool(table, "warmup", null=False),
        ok=ok,
        # An errored request is never correct, even if its partial text passed the checker.
        correct=_bool(table, "correct", null=False) & ok,
        correct_known=np.asarray(
            pc.is_valid(_col(table, "correct")).to_numpy(zero_copy_only=False), dtype=np.bool_
        ),
        task_code=task_codes(table) if task_code is None else task_code,
    )
