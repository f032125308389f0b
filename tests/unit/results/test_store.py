"""Records stream to crash-safe parts and compact into records.parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.results import store
from acceval.results.records import RECORD_SCHEMA, Record, records_to_table, table_to_records
from acceval.results.store import PARTS_DIR, RECORDS_FILE, RecordWriter, read_records


def _rec(i: int) -> Record:
    return Record(target="t", load_index=0, load_label="c1", request_id=i, task_id=f"k{i}",
                  sent_ns=i * 10, done_ns=i * 10 + 5, chunk_ns=[i, i + 1], output_text="é<b>")


def test_round_trip_columns() -> None:
    recs = [_rec(i) for i in range(3)]
    table = records_to_table(recs)
    assert table.schema == RECORD_SCHEMA
    assert table_to_records(table) == recs


def test_round_trip_every_field_in_any_column_order() -> None:
    full = Record(target="t", load_index=3, load_label="r=5", request_id=7, task_id="k7",
                  attempt=1, warmup=True, scheduled_ns=1, sent_ns=2, first_byte_ns=3,
                  first_token_ns=4, done_ns=9, chunk_ns=[4, 6, 8], prompt_tokens=11,
                  output_tokens=3, tokens_from="usage", output_text="42", finish_reason="stop",
                  http_status=200, error_kind="http", error_detail="why", correct=False,
                  check_reason="mismatch", extracted="41", retry_after_s=1.5, http_attempts=2,
                  cached_prompt_tokens=8, turn=1, server_prompt_ms=0.5, server_decode_ms=2.25)
    table = records_to_table([full, _rec(1)])
    shuffled = table.select(list(reversed(table.column_names)))
    assert table_to_records(shuffled) == [full, _rec(1)]


_i32 = st.integers(-(2**31), 2**31 - 1)
_i64 = st.integers(-(2**63), 2**63 - 1)
_text = st.text(max_size=12)
_records = st.builds(
    Record, target=_text, load_index=_i32, load_label=_text, request_id=_i64, task_id=_text,
    attempt=_i32, warmup=st.booleans(), scheduled_ns=st.none() | _i64,
    sent_ns=st.none() | _i64, first_token_ns=st.none() | _i64,
    chunk_ns=st.lists(_i64, max_size=5), prompt_tokens=st.none() | _i32,
    output_text=st.none() | _text, error_kind=st.none() | _text,
    correct=st.none() | st.booleans(),
    retry_after_s=st.none() | st.floats(allow_nan=False), turn=st.none() | _i32,
    finish_ns=st.none() | _i64)


@settings(max_examples=200, deadline=None)
@given(st.lists(_records, max_size=6))
def test_round_trip_any_records_nulls_and_extremes_included(recs: list[Record]) -> None:
    table = records_to_table(recs)
    assert table.schema == RECORD_SCHEMA and table.num_rows == len(recs)
    assert table_to_records(table) == recs


def test_parts_are_readable_before_finalize(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path, flush_every=2, flush_s=3600)
    for i in range(5):
        w.add(_rec(i))
    w.wait()
    # 4 flushed in two parts, 1 still buffered: a crash now keeps the 4.
    assert len(list((tmp_path / PARTS_DIR).glob("part-*.parquet"))) == 2
    assert read_records(tmp_path).num_rows == 4
    w.finalize()
    assert not (tmp_path / PARTS_DIR).exists()
    table = read_records(tmp_path)
    assert (tmp_path / RECORDS_FILE).exists()
    assert table["request_id"].to_pylist() == [0, 1, 2, 3, 4]


def test_empty_run_reads_empty(tmp_path: Path) -> None:
    assert read_records(tmp_path).num_rows == 0
    RecordWriter(tmp_path).finalize()
    assert read_records(tmp_path).num_rows == 0


def test_stray_temp_file_is_ignored(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path, flush_every=1)
    w.add(_rec(1))
    w.wait()
    (tmp_path / PARTS_DIR / "part-000009.tmp").write_bytes(b"half written")
    assert read_records(tmp_path).num_rows == 1


def test_records_written_before_a_column_existed_read_it_as_null(tmp_path: Path) -> None:
    old = records_to_table([_rec(1), _rec(2)]).drop_columns(["retry_after_s", "http_attempts"])
    (tmp_path / PARTS_DIR).mkdir()
    pq.write_table(old, tmp_path / PARTS_DIR / "part-000000.parquet")
    table = read_records(tmp_path)
    assert table.schema == RECORD_SCHEMA
    recs = table_to_records(table)
    assert [(r.retry_after_s, r.http_attempts) for r in recs] == [(None, None)] * 2
    assert recs[0].output_text == "é<b>"


def test_a_part_larger_than_a_slice_keeps_every_record_in_order(tmp_path: Path) -> None:
    # The writer thread converts a large part slice by slice (store._SLICE); the part on
    # disk holds the same records, in order, as one whole conversion.
    n = 2 * store._SLICE + 7
    recs = [_rec(i) for i in range(n)]
    w = RecordWriter(tmp_path, flush_every=n, flush_s=3600)
    for r in recs:
        w.add(r)
    w.wait()
    parts = list((tmp_path / PARTS_DIR).glob("part-*.parquet"))
    assert len(parts) == 1
    assert table_to_records(pq.read_table(parts[0])) == recs


def test_a_parts_slices_are_spread_while_nothing_waits_and_hurried_otherwise(
        tmp_path: Path) -> None:
    w = RecordWriter(tmp_path, flush_s=1.0)
    try:
        assert w._pause_s(10) == store._SPREAD_MAX_S            # 50 ms budget: capped at 20
        w.flush_s = 0.1
        assert w._pause_s(10) == 0.5 * 0.1 / 10                 # half of 0.1 s over 10 slices
        assert w._pause_s(10**6) == store._PAUSE_S              # never below the short pause
        w._submitted, w._finished = 2, 0                        # a part waits behind this one
        assert w._pause_s(10) == store._PAUSE_S
        w._submitted = 1
        w._hurry = True                                         # someone waits for the writer
        assert w._pause_s(10) == store._PAUSE_S
    finally:
        w._submitted = w._finished = 0
        w._hurry = False
        w.finalize()


def test_the_writer_asks_its_pause_between_slices_and_counts_parts_done(tmp_path: Path) -> None:
    asked: list[int] = []
    n = 3 * store._SLICE + 1
    store._write_part([_rec(i) for i in range(n)], tmp_path / "part-000001.parquet",
                      lambda n_slices: asked.append(n_slices) or 0.0)
    assert asked == [4, 4, 4]                                   # between 4 slices, 3 pauses
    w = RecordWriter(tmp_path / "run", flush_every=n, flush_s=3600)
    for i in range(n):
        w.add(_rec(i))
    w.wait()
    assert (w._submitted, w._finished, w.written, w._hurry) == (1, 1, n, False)
    w.finalize()
