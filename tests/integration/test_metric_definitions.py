"""One definition of TPOT and ITL, over real SSE on loopback: against a server that counts the
end-of-sequence token in ``usage`` (vLLM), one that does not, and one that writes the whole
answer at once. Every assertion is on the stamps the client recorded, so none depends on how
busy the host is: TPOT and ITL count the same tokens and end at the same stamp."""

from __future__ import annotations

import numpy as np
import pytest

from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import run
from acceval.metrics import derive, summarize_point
from acceval.results.records import Record, records_to_table
from acceval.study import SLO, Endpoint
from acceval.targets import OpenAITarget
from acceval.targets.transport import TRANSPORTS
from helpers.sse_server import ServerConfig, SSEServer

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase

TOKENS = 4  # a 4-digit answer


def _answers(config: ServerConfig, transport: str, n: int = 6) -> list[Record]:
    async def go() -> list[Record]:
        async with SSEServer(config) as srv:
            target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m",
                                                transport=transport))
            await target.start()
            recs = []
            try:
                for i in range(n):
                    rec = Record("t", 0, "p", i, f"task{i}")
                    await target.send(Prompt(f"task{i}", prompt="x", max_tokens=TOKENS), rec, 0)
                    recs.append(rec)
            finally:
                await target.close()
            return recs

    recs = run(go())
    assert all(r.error_kind is None for r in recs), [r.error_detail for r in recs]
    return recs


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_that_counts_eos_gets_its_finish_step_in_tpot_and_itl(transport: str) -> None:
    recs = _answers(ServerConfig(tokens=TOKENS, itl_s=0.002, count_eos=True), transport)
    for r in recs:  # what vLLM says for a 4-digit answer
        assert (len(r.chunk_ns), r.output_tokens, r.finish_reason) == (TOKENS, TOKENS + 1, "stop")
        assert r.finish_ns is not None and r.finish_ns > r.chunk_ns[-1]
    d = derive(records_to_table(recs))
    # Five counted tokens: four steps, the last from the last digit to the finish chunk,
    # as vLLM's histogram and `vllm bench` count them (one ITL gap per chunk after the first).
    assert np.bincount(d.itl_row).tolist() == [TOKENS] * len(recs)
    for i, r in enumerate(recs):
        span_ms = (r.finish_ns - r.chunk_ns[0]) / 1e6  # type: ignore[operator]
        assert d.tpot_ms[i] == pytest.approx(span_ms / TOKENS)
        assert d.itl_mean_ms[i] == pytest.approx(d.tpot_ms[i])  # the same tokens
        gaps = np.diff([*r.chunk_ns, r.finish_ns]) / 1e6
        np.testing.assert_allclose(d.itl_ms[d.itl_row == i], gaps)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_that_does_not_count_eos_ends_tpot_at_the_last_token(transport: str) -> None:
    recs = _answers(ServerConfig(tokens=TOKENS, itl_s=0.002), transport)
    for r in recs:
        assert (len(r.chunk_ns), r.output_tokens, r.finish_reason) == (TOKENS, TOKENS, "length")
        assert r.finish_ns is not None and r.finish_ns > r.chunk_ns[-1]
    d = derive(records_to_table(recs))
    # Four counted tokens, all of them text: three steps; the finish chunk carried no token.
    assert np.bincount(d.itl_row).tolist() == [TOKENS - 1] * len(recs)
    for i, r in enumerate(recs):
        span_ms = (r.chunk_ns[-1] - r.chunk_ns[0]) / 1e6
        assert d.tpot_ms[i] == pytest.approx(span_ms / (TOKENS - 1))
        assert d.itl_mean_ms[i] == pytest.approx(d.tpot_ms[i])


@pytest.mark.parametrize("count_eos", [False, True])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_answer_in_one_write_has_no_tpot_and_no_itl(transport: str, count_eos: bool) -> None:
    recs = _answers(ServerConfig(tokens=TOKENS, coalesce=True, count_eos=count_eos), transport)
    for r in recs:  # every stamp is the one read's
        assert len(r.chunk_ns) == TOKENS and len({*r.chunk_ns, r.finish_ns}) == 1
    s = summarize_point(records_to_table(recs), slo=SLO(tpot_ms=0.001), requested_rate_rps=None)
    assert s.ttft_ms.count == len(recs)
    # No decode was seen: not measured, never 0 (which would pass any TPOT bound).
    assert s.tpot_ms.count == 0 and s.itl_ms.count == 0
    assert s.meets_slo is None and s.slo_unmeasured == ("tpot_ms",)
