"""The analysis derives each load point from its own rows (and a target's accuracy from its
outcome columns only) instead of deriving the whole target and taking each point as a view
of it. On a random run with every awkward row (warm-ups, errors, null tasks, unstreamed and
one-chunk answers, finish steps, a schedule on some points), both ways give the same
summaries: counts exactly, every distribution and rate to the last bit."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from acceval.metrics import accuracy, pass_at_1, summarize_point
from acceval.metrics.derive import derive, latencies, outcomes, task_codes
from acceval.metrics.spec import SLO
from acceval.results.records import Record, records_to_table

MS = 1_000_000
ERRORS = (None, None, None, None, "timeout", "http", "stream_cut")


def _record(rng: np.random.Generator, i: int, point: int, open_loop: bool) -> Record:
    sched = int(rng.integers(0, 10_000 * MS))
    sent = sched + int(rng.integers(0, 5 * MS))
    n_chunks = int(rng.choice([0, 1, 2, 5, 12]))
    first = sent + int(rng.integers(1, 80 * MS))
    gaps = rng.integers(0, 4 * MS, max(n_chunks - 1, 0))  # 0: two chunks in one read
    chunks = [first, *(first + np.cumsum(gaps)).tolist()] if n_chunks else []
    done = (chunks[-1] if chunks else first) + int(rng.integers(0, 2 * MS))
    tokens = None if rng.random() < 0.05 else n_chunks + int(rng.integers(0, 3))
    task = None if rng.random() < 0.05 else f"task{int(rng.integers(0, 40))}"
    correct = None if rng.random() < 0.2 else bool(rng.random() < 0.7)
    return Record(
        target="t", load_index=point, load_label=f"p{point}", request_id=i,
        task_id=task, attempt=int(rng.integers(0, 3)), warmup=bool(rng.random() < 0.05),
        scheduled_ns=sched if open_loop else None, sent_ns=sent,
        first_token_ns=chunks[0] if chunks else None, done_ns=done, chunk_ns=chunks,
        prompt_tokens=int(rng.integers(5, 50)), output_tokens=tokens,
        tokens_from=None if tokens is None else str(rng.choice(["usage", "chunks"])),
        finish_reason=str(rng.choice(["stop", "length"])),
        error_kind=ERRORS[int(rng.integers(0, len(ERRORS)))], correct=correct,
        cached_prompt_tokens=None if rng.random() < 0.5 else int(rng.integers(0, 5)),
        finish_ns=done if rng.random() < 0.5 else None)


def random_run(seed: int, n: int = 600, points: int = 4) -> pa.Table:
    """One target's records over ``points`` load points, rows of the points interleaved as a
    resumed or merged run leaves them."""
    rng = np.random.default_rng(seed)
    return records_to_table([_record(rng, i, p := int(rng.integers(0, points)), p % 2 == 1)
                             for i in range(n)])


SLO_BOUNDS = SLO(ttft_ms=50.0, tpot_ms=2.0, e2e_ms=90.0, percentile=95.0)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_each_point_from_its_own_rows_equals_the_view_of_the_whole_target(seed: int) -> None:
    table = random_run(seed)
    index = table["load_index"].to_numpy()
    whole = derive(table)
    codes = task_codes(table)
    for p in np.unique(index):
        rows = index == p
        view = summarize_point(whole.subset(rows), slo=SLO_BOUNDS, requested_rate_rps=5.0)
        own = summarize_point(derive(table.filter(pa.array(rows)), task_code=codes[rows]),
                              slo=SLO_BOUNDS, requested_rate_rps=5.0)
        assert own.requests > 0
        assert own.model_dump() == view.model_dump()


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_target_accuracy_from_outcomes_equals_the_full_derive(seed: int) -> None:
    table = random_run(seed)
    whole = derive(table)
    o = outcomes(table)
    assert accuracy(o) == accuracy(whole)
    assert pass_at_1(o) == pass_at_1(whole)
    keep = table["load_index"].to_numpy() != 2  # the interrupted point left out
    assert accuracy(o.subset(keep)) == accuracy(whole.subset(keep))
    assert pass_at_1(o.subset(keep)) == pass_at_1(whole.subset(keep))
    assert accuracy(o).n > 0 and pass_at_1(o).tasks > 1


def test_chart_latencies_are_the_derived_service_times() -> None:
    table = random_run(9)
    d, lat = derive(table), latencies(table)
    for name in ("measured", "ok", "sent_ns", "done_ns", "ttft_ms", "e2e_ms"):
        np.testing.assert_array_equal(getattr(lat, name), getattr(d, name), err_msg=name)
    assert np.isnan(lat.ttft_ms).any() and (~lat.ok).any()  # the awkward rows are there


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_peak_in_flight_is_the_most_requests_open_at_a_send(seed: int) -> None:
    """At a send's instant, the requests sent by then and not done by then (one done at that
    very stamp is no longer in flight), counted one by one."""
    rng = np.random.default_rng(seed)
    recs = [Record(target="t", load_index=0, load_label="p", request_id=i, task_id="x",
                   sent_ns=(s := int(rng.integers(0, 30)) * MS),
                   done_ns=s + int(rng.integers(0, 6)) * MS) for i in range(200)]
    summary = summarize_point(records_to_table(recs), slo=SLO(), requested_rate_rps=None)
    sent = [r.sent_ns for r in recs]
    done = [r.done_ns for r in recs]
    open_at = [sum(1 for s, e in zip(sent, done, strict=True) if s <= t < e) for t in sent]
    assert summary.max_in_flight == max(open_at) > 1


def test_a_point_written_in_one_block_is_a_slice_with_the_filtered_rows() -> None:
    from acceval.analysis import _rows_of

    table = random_run(13)
    ordered = table.take(np.argsort(table["load_index"].to_numpy(), kind="stable"))
    index = ordered["load_index"].to_numpy()
    for p in np.unique(index):
        rows = index == p
        block = _rows_of(ordered, rows)
        assert block.equals(ordered.filter(pa.array(rows)))
        assert block.column("sent_ns").chunk(0).offset > 0 or p == index[0]  # a view
    mixed = table["load_index"].to_numpy() == 1  # interleaved: filtered
    assert _rows_of(table, mixed).equals(table.filter(pa.array(mixed)))
