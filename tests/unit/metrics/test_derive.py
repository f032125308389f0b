import numpy as np
import pyarrow as pa
import pytest
from metrics_fixtures import hand_table, req, table

from acceval.metrics import derive


def test_hand_example_per_request_arrays():
    d = derive(hand_table())
    assert d.n == 4
    assert d.measured.tolist() == [True, True, True, False]
    assert d.ok.tolist() == [True, True, False, True]
    np.testing.assert_allclose(d.ttft_ms[:2], [10.0, 20.0])
    assert np.isnan(d.ttft_ms[2])                      # the timeout never produced a token
    np.testing.assert_allclose(d.e2e_ms[:3], [16.0, 30.0, 30.0])
    np.testing.assert_allclose(d.tpot_ms[:2], [2.0, 10.0 / 3.0])
    np.testing.assert_allclose(d.schedule_lag_ms, [1.0, 0.0, 0.0, 100.0])
    assert d.error_kind.tolist() == [None, None, "timeout", None]


def test_itl_is_normalised_by_tokens_per_chunk():
    d = derive(hand_table())
    # A: 1 token per chunk, gaps 2,2,2. B: 2 tokens per chunk, one 10 ms gap -> 5 ms.
    # W (warmup): 1 token per chunk, one 100 ms gap.
    np.testing.assert_allclose(d.itl_ms, [2.0, 2.0, 2.0, 5.0, 100.0])
    assert d.itl_row.tolist() == [0, 0, 0, 1, 3]
    np.testing.assert_allclose(d.itl_mean_ms[[0, 1, 3]], [2.0, 5.0, 100.0])
    assert np.isnan(d.itl_mean_ms[2])


def test_one_token_output_has_no_tpot_and_no_itl():
    d = derive(table(req(0, sent_ms=0, chunks_ms=[5], tokens=1)))
    assert np.isnan(d.tpot_ms[0])
    assert d.itl_ms.size == 0 and np.isnan(d.itl_mean_ms[0])
    assert d.ttft_ms[0] == 5.0 and d.e2e_ms[0] == 5.0


def test_missing_token_count_gives_nan_not_zero():
    d = derive(table(req(0, sent_ms=0, chunks_ms=[5, 6, 7], tokens=None)))
    assert np.isnan(d.output_tokens[0]) and np.isnan(d.tpot_ms[0])
    assert d.itl_ms.size == 0                          # tokens per chunk unknown
    assert d.tokens_from_usage.tolist() == d.tokens_from_chunks.tolist() == [False]


def test_where_each_output_count_came_from():
    d = derive(table(req(0, sent_ms=0, chunks_ms=[1, 2], tokens=2),
                     req(1, sent_ms=0, chunks_ms=[1, 2], tokens=2, tokens_from="chunks"),
                     req(2, sent_ms=0, chunks_ms=[1, 2], tokens=None)))
    assert d.tokens_from_usage.tolist() == [True, False, False]
    assert d.tokens_from_chunks.tolist() == [False, True, False]
    assert d.subset(np.array([False, True, True])).tokens_from_chunks.tolist() == [True, False]


def test_errored_request_is_never_correct():
    d = derive(table(
        req(0, sent_ms=0, chunks_ms=[1, 2], tokens=2, error="stream_cut", correct=True),
        req(1, sent_ms=0, chunks_ms=[1, 2], tokens=2, correct=True),
        req(2, sent_ms=0, chunks_ms=[1, 2], tokens=2, correct=None),
    ))
    assert d.correct.tolist() == [False, True, False]
    assert d.correct_known.tolist() == [True, True, False]


def test_chunked_and_sliced_tables_match_the_plain_table():
    t = hand_table()
    parts = pa.concat_tables([t.slice(0, 1), t.slice(1, 2), t.slice(3)])
    assert parts.column("chunk_ns").num_chunks == 3
    a, b = derive(t), derive(parts)
    np.testing.assert_array_equal(a.itl_ms, b.itl_ms)
    np.testing.assert_array_equal(a.itl_row, b.itl_row)
    np.testing.assert_array_equal(a.tpot_ms, b.tpot_ms)
    sliced = derive(t.slice(1, 2))
    np.testing.assert_allclose(sliced.itl_ms, [5.0])
    assert sliced.itl_row.tolist() == [0]


def test_empty_lists_between_requests_do_not_create_gaps():
    d = derive(table(
        req(0, sent_ms=0, chunks_ms=[], done_ms=3, error="http", tokens=None),
        req(1, sent_ms=0, chunks_ms=[10, 12], tokens=2),
        req(2, sent_ms=0, chunks_ms=[], done_ms=3, error="http", tokens=None),
        req(3, sent_ms=0, chunks_ms=[20, 23], tokens=2),
    ))
    np.testing.assert_allclose(d.itl_ms, [2.0, 3.0])
    assert d.itl_row.tolist() == [1, 3]


def test_empty_table():
    d = derive(table())
    assert d.n == 0 and d.itl_ms.size == 0 and d.ttft_ms.size == 0


@pytest.mark.parametrize("tokens", [0, -1])
def test_nonpositive_token_counts_do_not_divide(tokens):
    d = derive(table(req(0, sent_ms=0, chunks_ms=[1, 2], tokens=tokens)))
    assert d.itl_ms.size == 0 and np.isnan(d.tpot_ms[0])


def test_tpot_needs_two_distinct_arrival_times_not_two_chunks() -> None:
    # Three chunks in one read (one stamp), then one read later: the second is a decode.
    d = derive(table(req(0, sent_ms=0, chunks_ms=[5, 5, 5], tokens=3),
                     req(1, sent_ms=0, chunks_ms=[5, 5, 9], tokens=3)))
    assert np.isnan(d.tpot_ms[0]) and d.tpot_ms[1] == pytest.approx(2.0)
    assert d.itl_row.tolist() == [1, 1]  # the one-read answer gives no ITL samples


def test_a_counted_finish_step_ends_at_the_finish_chunk_or_else_at_done() -> None:
    fin = req(0, sent_ms=0, chunks_ms=[10, 12], tokens=3, finish_reason="stop",
              finish_ms=14, done_ms=20)
    old = req(1, sent_ms=0, chunks_ms=[10, 12], tokens=3, finish_reason="stop", done_ms=16)
    d = derive(table(fin, old))
    assert d.tpot_ms.tolist() == pytest.approx([2.0, 3.0])  # (14-10)/2; no finish_ns: (16-10)/2
    np.testing.assert_allclose(d.itl_ms, [2.0, 2.0, 2.0, 4.0])


def test_an_uncounted_finish_chunk_adds_no_step() -> None:
    # usage equals the text chunks: the later finish chunk carried no token.
    d = derive(table(req(0, sent_ms=0, chunks_ms=[10, 12, 14], tokens=3, finish_reason="stop",
                         finish_ms=30, done_ms=30)))
    assert d.tpot_ms.tolist() == pytest.approx([2.0]) and d.itl_ms.tolist() == [2.0, 2.0]
