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
    tpot_ms: FloatArray          # (e2e - ttft) / (output_tokens - 1); NaN when tokens <= 1
                                 # or the answer arrived in fewer than two chunks
    chunks: IntArray             # content chunks that arrived (0: not streamed; -1: unknown)
    schedule_lag_ms: FloatArray  # sent_ns - scheduled_ns
    itl_ms: FloatArray           # flat: every chunk gap / tokens per chunk of its request
    itl_row: IntArray            # the row each itl_ms sample belongs to
    itl_mean_ms: FloatArray      # per row: mean of its itl_ms samples; NaN when none
    output_tokens: FloatArray
    prompt_tokens: FloatArray
    cached_prompt_tokens: FloatArray  # what the server's prefix cache held; NaN: not said
    turn: FloatArray             # a conversation's turn (0 first); NaN: not a conversation
    tokens_from: ObjArray        # "usage", "chunks" or None
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
    eos = stopped & (output_tokens > chunks) & (output_tokens > 1)
    return np.where(eos, output_tokens - 1, output_tokens)


def _itl(
    chunks: pa.Array, output_tokens: FloatArray, n: int
) -> tuple[FloatArray, IntArray, FloatArray]:
    """Gaps between consecutive content chunks, divided by the request's mean tokens per chunk
    (``output_tokens / len(chunks)``, with the tokens that arrived: :func:`arrived_tokens`),
    so a chunk that carries k tokens counts as k gaps of gap/k instead of one long gap. Gaps
    are taken in int64 ns (exact) over the flattened lists; the one gap that spans two
    requests at each list boundary is dropped."""
    lengths = _chunk_counts(chunks)
    flat = pc.list_flatten(chunks)
    if flat.null_count:
        flat = pc.cast(flat, pa.float64())
    values = np.asarray(flat.to_numpy(zero_copy_only=False))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    per_row = np.maximum(lengths - 1, 0)
    diffs = np.diff(values)
    keep = np.ones(diffs.size, dtype=np.bool_)
    cut = ends[:-1] - 1
    keep[cut[(cut >= 0) & (cut < diffs.size)]] = False
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens_per_chunk = output_tokens / lengths
    tokens_per_chunk[~(tokens_per_chunk > 0)] = np.nan
    ms_per_token_gap = _NS_PER_MS * tokens_per_chunk  # ns of gap per ms of ITL
    itl = diffs[keep].astype(np.float64) / np.repeat(ms_per_token_gap, per_row)
    rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
    valid = ~np.isnan(itl)
    has_gap = per_row > 0
    mean = np.full(n, np.nan)
    span = values[ends[has_gap] - 1] - values[starts[has_gap]]
    mean[has_gap] = span / per_row[has_gap] / ms_per_token_gap[has_gap]
    return itl[valid], rows[valid], mean


def derive(table: pa.Table, *, itl: bool = True) -> Derived:
    """Per-request derived arrays for a table with ``RECORD_SCHEMA``; ``itl=False`` leaves the
    inter-token sample empty (for callers that need only the stamps, e.g. a timeline)."""
    n = table.num_rows
    scheduled = _float(table, "scheduled_ns")
    sent = _float(table, "sent_ns")
    first = _float(table, "first_token_ns")
    done = _float(table, "done_ns")
    out_tok = _float(table, "output_tokens")
    ttft = (first - sent) / _NS_PER_MS
    e2e = (done - sent) / _NS_PER_MS
    # Without the chunk stamps (a reader that needs only the stamps) the count is unknown (-1).
    chunk_col = _col(table, "chunk_ns") if "chunk_ns" in table.column_names else None
    chunks = _chunk_counts(chunk_col) if chunk_col is not None else np.full(n, -1, np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # An answer that came in one piece (not streamed, or sent in one write) shows no
        # decode phase: its TPOT is not measured, not zero.
        tpot = np.where((out_tok > 1) & ((chunks >= 2) | (chunks < 0)),
                        (e2e - ttft) / (out_tok - 1), np.nan)
    if itl and chunk_col is not None:
        stopped = (np.asarray(pc.fill_null(pc.equal(_col(table, "finish_reason"), "stop"),
                                           False).to_numpy(zero_copy_only=False), dtype=bool)
                   if "finish_reason" in table.column_names else np.zeros(n, dtype=bool))
        itl_ms, itl_row, itl_mean = _itl(chunk_col, arrived_tokens(out_tok, chunks, stopped),
                                         n)
    else:
        itl_ms, itl_row = np.zeros(0), np.zeros(0, np.int64)
        itl_mean = np.full(n, np.nan)
    error_kind = _col(table, "error_kind")
    ok = np.asarray(pc.is_null(error_kind).to_numpy(zero_copy_only=False), dtype=np.bool_)
    task_codes = pc.dictionary_encode(_col(table, "task_id")).indices
    return Derived(
        n=n,
        measured=~_bool(table, "warmup", null=False),
        ok=ok,
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
        tokens_from=np.asarray(
            _col(table, "tokens_from").to_numpy(zero_copy_only=False), dtype=object
        ),
        # An errored request is never correct, even if its partial text passed the checker.
        correct=_bool(table, "correct", null=False) & ok,
        correct_known=np.asarray(
            pc.is_valid(_col(table, "correct")).to_numpy(zero_copy_only=False), dtype=np.bool_
        ),
        task_code=np.asarray(
            pc.fill_null(task_codes, -1).to_numpy(zero_copy_only=False), dtype=np.int64
        ),
    )
