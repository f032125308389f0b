"""What an answer that does not stream leaves unmeasured: TTFT, TPOT and ITL are not
measured (never TTFT = E2E or TPOT = 0), an SLO on them is not assessed, and ITL counts the
tokens that arrived, not the end-of-sequence token a server counts but never sends."""

from __future__ import annotations

import dataclasses

import pytest
from metrics_fixtures import req, table

from acceval.metrics import derive, summarize_point
from acceval.results.records import Record
from acceval.study import SLO


def _unstreamed(i: int, sent_ms: float, done_ms: float, tokens: int = 8) -> Record:
    """A JSON answer: the target leaves first_token_ns unset and stamps no chunk."""
    return req(i, sent_ms=sent_ms, done_ms=done_ms, tokens=tokens)


def _points(n: int = 30) -> list[Record]:
    return [_unstreamed(i, sent_ms=i * 10.0, done_ms=i * 10.0 + 40) for i in range(n)]


def test_an_unstreamed_answer_has_e2e_but_no_ttft_tpot_or_itl() -> None:
    s = summarize_point(table(*_points()), slo=SLO(), requested_rate_rps=None)
    assert s.e2e_ms.count == 30 and s.e2e_ms.p50 == pytest.approx(40.0)
    assert s.ttft_ms.count == 0 and s.tpot_ms.count == 0 and s.itl_ms.count == 0


@pytest.mark.parametrize("bound", [{"ttft_ms": 500.0}, {"tpot_ms": 0.001}])
def test_an_slo_on_what_was_not_measured_is_not_assessed(bound: dict[str, float]) -> None:
    s = summarize_point(table(*_points()), slo=SLO(**bound), requested_rate_rps=None)
    assert s.meets_slo is None  # not "met" (a tpot bound of 0.001 ms used to pass on 0)
    assert s.slo_unmeasured == tuple(bound)
    assert s.goodput_rps is None and s.good_fraction is None


def test_a_failing_measured_bound_still_fails_beside_an_unmeasured_one() -> None:
    s = summarize_point(table(*_points()), slo=SLO(ttft_ms=500.0, e2e_ms=10.0),
                        requested_rate_rps=None)
    assert s.meets_slo is False and s.slo_unmeasured == ("ttft_ms",)


def test_an_e2e_bound_is_assessed_on_unstreamed_answers() -> None:
    s = summarize_point(table(*_points()), slo=SLO(e2e_ms=100.0), requested_rate_rps=None)
    assert s.meets_slo is True and s.slo_unmeasured == () and s.good == 30


def test_a_streamed_answer_sent_in_one_piece_has_ttft_but_no_tpot() -> None:
    one_write = [req(i, sent_ms=0, chunks_ms=[30.0], done_ms=30.0, tokens=8) for i in range(5)]
    d = derive(table(*one_write))
    assert d.ttft_ms.tolist() == [30.0] * 5
    assert all(v != v for v in d.tpot_ms)  # NaN: not measured, where it used to be 0
    assert d.chunks.tolist() == [1] * 5


def test_itl_uses_the_tokens_that_arrived() -> None:
    # Four one-token chunks 2 ms apart, then the finish chunk 2 ms later; the server counts
    # five tokens (the EOS it never sends as text) and says finish_reason "stop": five
    # counted tokens make four 2 ms steps, the last one ending at the finish chunk.
    base = req(0, sent_ms=0, chunks_ms=[10, 12, 14, 16], tokens=5)
    stopped = dataclasses.replace(base, finish_reason="stop", finish_ns=18_000_000)
    d = derive(table(stopped))
    assert d.itl_ms.tolist() == pytest.approx([2.0, 2.0, 2.0, 2.0])
    assert d.tpot_ms.tolist() == pytest.approx([2.0])
    # Cut by the length limit, every counted token is one that came: no correction.
    length = dataclasses.replace(base, finish_reason="length", output_tokens=4)
    assert derive(table(length)).itl_ms.tolist() == pytest.approx([2.0, 2.0, 2.0])
    # Chunks carrying two tokens each (8 counted, 4 chunks): two gaps of 1 ms per chunk gap.
    two = dataclasses.replace(base, finish_reason="length", output_tokens=8)
    assert derive(table(two)).itl_ms.tolist() == pytest.approx([1.0, 1.0, 1.0])
