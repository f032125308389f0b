"""The demand replay judges each hour's SLO on response time, like any open-loop point."""

from __future__ import annotations

from acceval.capacity import DemandProfile
from acceval.capacity.replay import summarize_replay
from acceval.results.records import Record, records_to_table
from acceval.results.runlog import PointLog
from acceval.scenarios import point_result
from acceval.study import SLO

MS = 1_000_000


def _hour0(late_ms: float) -> list[Record]:
    """Ten requests due in the first compressed hour (1 s), each sent ``late_ms`` late and
    answered 20 ms after its actual send."""
    out = []
    for i in range(10):
        due = i * 90 * MS
        sent = due + int(late_ms * MS)
        out.append(Record("t", 0, "replay", i, f"t{i}", scheduled_ns=due, sent_ns=sent,
                          first_token_ns=sent + 20 * MS, done_ns=sent + 20 * MS,
                          chunk_ns=[sent + 20 * MS], output_tokens=1, tokens_from="usage"))
    return out


def _hour0_meets(late_ms: float) -> bool | None:
    table = records_to_table(_hour0(late_ms))
    slo = SLO(e2e_ms=100.0)
    log = PointLog(index=0, label="replay", kind="poisson", level=10.0, role="replay",
                   requested_rate_rps=10.0, started_ns=0, ended_ns=24_000 * MS, sent=10,
                   completed=10, errors=0, stopped_by="duration")
    s = summarize_replay(table, point_result(log, table, slo), started_ns=0,
                         profile=DemandProfile((10.0,) * 24), compress_to_s=24.0, slo=slo)
    return s.hours[0].meets_slo


def test_an_hour_of_late_sends_misses_the_slo_on_response_time() -> None:
    assert _hour0_meets(0.0) is True
    # 20 ms of service, but every user waited 200 ms more for the client to send.
    assert _hour0_meets(5.0) is True
    assert _hour0_meets(200.0) is False
