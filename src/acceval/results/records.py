"""The per-request record: raw stamps and what came back, nothing derived.

Times are ``time.perf_counter_ns()`` values minus the run's anchor (``t0_ns``), so they are
nanoseconds since the run started. On Linux ``perf_counter_ns`` reads CLOCK_MONOTONIC, which
is shared by every process on the host; a local server's own log can be compared directly.
Missing is ``None``, never 0.

Columns are only ever added, at the end and nullable: a records file written before a column
existed reads back with it null (``read_records`` reads every file with ``RECORD_SCHEMA``).
"""

from __future__ import annotations

import importlib.abc
import operator
import sys
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

# Error kinds a request can end with. ``None`` means it completed.
ERROR_KINDS = (
    "connect",       # connection refused / reset before a response
    "timeout",       # no complete response within the timeout
    "http",          # HTTP status >= 400 (see http_status)
    "stream_cut",    # the stream ended without [DONE] / finish, or the connection dropped
    "malformed",     # an event or body that is not the expected JSON, or broken HTTP framing
    "too_large",     # the response body passed endpoint.max_response_bytes
    "client",        # a bug or limit on our side (e.g. too many open files)
    "peer",          # imported: the peer tool recorded a failure (its text in error_detail)
)


@dataclass(slots=True)
class Record:
    target: str
    load_index: int
    load_label: str
    request_id: int
    task_id: str
    attempt: int = 0
    warmup: bool = False
    scheduled_ns: int | None = None      # when the schedule said to send
    sent_ns: int | None = None           # just before the request was written
    first_byte_ns: int | None = None     # first response bytes (headers)
    first_token_ns: int | None = None    # first chunk with non-empty content
    done_ns: int | None = None           # last byte / error
    chunk_ns: list[int] = field(default_factory=list)  # every content chunk's arrival
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    tokens_from: str | None = None       # "usage" (server) or "chunks" (counted, a fallback)
    output_text: str | None = None
    finish_reason: str | None = None
    http_status: int | None = None
    error_kind: str | None = None
    error_detail: str | None = None
    correct: bool | None = None
    check_reason: str | None = None
    extracted: str | None = None
    retry_after_s: float | None = None   # the last Retry-After the server sent, in seconds
    http_attempts: int | None = None     # sends of this request (> 1: endpoint.retry resent it)
    cached_prompt_tokens: int | None = None  # prompt tokens the server's prefix cache held
    turn: int | None = None              # a conversation's turn, 0 first (None: not one)
    # The server's own per-request timings, where it sends them (llama.cpp's ``timings``:
    # prompt_ms, predicted_ms); None when it does not.
    server_prompt_ms: float | None = None
    server_decode_ms: float | None = None
    # When the event that carried finish_reason arrived: the end of the last decode step
    # when that step sent no text (vLLM's end-of-sequence chunk). None: not streamed or
    # no finish_reason seen (and every record written before this column existed).
    finish_ns: int | None = None


RECORD_SCHEMA = pa.schema(
    [
        ("target", pa.string()),
        ("load_index", pa.int32()),
        ("load_label", pa.string()),
        ("request_id", pa.int64()),
        ("task_id", pa.string()),
        ("attempt", pa.int32()),
        ("warmup", pa.bool_()),
        ("scheduled_ns", pa.int64()),
        ("sent_ns", pa.int64()),
        ("first_byte_ns", pa.int64()),
        ("first_token_ns", pa.int64()),
        ("done_ns", pa.int64()),
        ("chunk_ns", pa.list_(pa.int64())),
        ("prompt_tokens", pa.int32()),
        ("output_tokens", pa.int32()),
        ("tokens_from", pa.string()),
        ("output_text", pa.string()),
        ("finish_reason", pa.string()),
        ("http_status", pa.int32()),
        ("error_kind", pa.string()),
        ("error_detail", pa.string()),
        ("correct", pa.bool_()),
        ("check_reason", pa.string()),
        ("extracted", pa.string()),
        ("retry_after_s", pa.float64()),
        ("http_attempts", pa.int32()),
        ("cached_prompt_tokens", pa.int32()),
        ("turn", pa.int32()),
        ("server_prompt_ms", pa.float64()),
        ("server_decode_ms", pa.float64()),
        ("finish_ns", pa.int64()),
    ]
)

_NAMES = [f.name for f in fields(Record)]
assert RECORD_SCHEMA.names == _NAMES, "Record and RECORD_SCHEMA must list the same columns"
_ROW = pa.struct(list(RECORD_SCHEMA))


class _NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("acceval's command skips pyarrow's pandas probe",
                                      name=name)


def arrow_without_pandas() -> None:
    """Let pyarrow find pandas absent on its first conversion, so that it does not import it.

    On its first conversion in a process (a list, a numpy array, a Python scalar in a compute
    call), pyarrow imports pandas when pandas is installed, only to ask whether the value is a
    pandas object. acceval never hands it one, and pandas is not among its dependencies, yet
    that import costs 0.3-1.9 s of CPU (pandas 3.1, numpy already loaded): more than a quarter
    of ``acceval report`` on a million records. This makes that one import fail; pyarrow then
    takes values as not pandas objects, and imports pandas again only where pandas is really
    asked for (``Table.to_pandas()``), so nothing is lost.

    For acceval's own command (:func:`acceval.cli.run_main`). Nothing happens when pandas is
    already loaded or pyarrow has already looked."""
    if "pandas" in sys.modules:
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        # Untyped: its type inference makes pyarrow's C++ converter look for pandas as well.
        pa.array([0])
    finally:
        sys.meta_path.remove(finder)


def prepare_conversion() -> None:
    """Pay pyarrow's one-time cost before any load. On its first conversion of a Python list
    in a process, pyarrow imports pandas when pandas is installed (to ask whether the list is
    a pandas object): 0.3 s or more holding the interpreter (the ``acceval`` command skips it,
    :func:`arrow_without_pandas`). Done from the records writer's thread during a point, that
    stalled the loop stamping requests and could cost the first point its trust; every process
    that converts records during a point calls this first."""
    records_to_table([])


_FIELDS = operator.attrgetter(*_NAMES)


def records_to_table(records: list[Record]) -> pa.Table:
    """Columnar conversion in one Arrow call: each record's fields as one tuple (a C call),
    converted as the rows of a struct array, whose fields are the table's columns. The
    records writer converts while a point runs, holding the interpreter: 200 records took
    430 us with a comprehension per column, 335 us with one ``pa.array`` per column (31 calls
    of ~5 us each before any data), 265 us so."""
    return pa.Table.from_struct_array(pa.array(list(map(_FIELDS, records)), type=_ROW))


def table_to_records(table: pa.Table) -> list[Record]:
    """The records of a table in :data:`RECORD_SCHEMA`'s columns (in any order). Column by
    column: five times cheaper than ``table.to_pylist()``'s dict per row (4 against 22 us a
    record), which is what the Ray driver pays for every record it receives."""
    cols = [table.column(n).to_pylist() for n in _NAMES]
    return [Record(*row) for row in zip(*cols, strict=True)]
