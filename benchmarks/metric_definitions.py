"""TPOT and ITL by each tool's own formula, on the same stamps: acceval's client against the
test SSE server on loopback, answering 4-token answers at a fixed inter-token delay, once as
vLLM does (the finish chunk one step after the last text, ``usage`` counting the EOS token)
and once as a server that counts only the text. The peers' formulas are applied to the
stamps acceval recorded (docs/metrics.md cites where each comes from), so the differences
are the definitions', not the clients'. The percentile methods are compared on GuideLLM's
own recorded file (tests/fixtures/peers).

    python benchmarks/metric_definitions.py [--requests 200] [--itl-ms 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from acceval.loadgen.protocol import Prompt  # noqa: E402
from acceval.metrics import derive  # noqa: E402
from acceval.results.records import Record, records_to_table  # noqa: E402
from acceval.study import Endpoint  # noqa: E402
from acceval.targets import OpenAITarget  # noqa: E402
from helpers.sse_server import ServerConfig, SSEServer  # noqa: E402

TOKENS = 4


async def _records(count_eos: bool, n: int, itl_s: float) -> list[Record]:
    async with SSEServer(ServerConfig(tokens=TOKENS, itl_s=itl_s, count_eos=count_eos)) as srv:
        target = OpenAITarget("t", Endpoint(base_url=srv.base_url, model="m"))
        await target.start()
        out = []
        try:
            for i in range(n):
                rec = Record("t", 0, "p", i, f"t{i}")
                await target.send(Prompt(f"t{i}", prompt="x", max_tokens=TOKENS), rec, 0)
                out.append(rec)
        finally:
            await target.close()
    return out


def _peers(recs: list[Record]) -> dict[str, tuple[float, float]]:
    """Mean TPOT-like and ITL-like values (ms) by each tool's formula on these stamps."""
    ms = 1e6
    d = derive(records_to_table(recs))
    rows = [r for r in recs if r.finish_ns is not None and r.output_tokens]
    vb_tpot = [(r.finish_ns - r.chunk_ns[0]) / ms / (r.output_tokens - 1)  # type: ignore[operator]
               for r in rows]
    vb_itl = [g / ms for r in rows for g in np.diff([*r.chunk_ns, r.finish_ns])]
    gl_itl = [(r.chunk_ns[-1] - r.chunk_ns[0]) / ms / (r.output_tokens - 1)  # type: ignore[operator]
              for r in rows]
    text = [len(r.chunk_ns) for r in rows]  # AIPerf's OSL: its tokenizer on the text
    ap_itl = [(r.done_ns - r.chunk_ns[0]) / ms / (k - 1)  # type: ignore[operator]
              for r, k in zip(rows, text, strict=True)]
    return {
        "acceval tpot_ms / itl_ms": (float(np.nanmean(d.tpot_ms)), float(np.mean(d.itl_ms))),
        "vllm bench TPOT / ITL": (float(np.mean(vb_tpot)), float(np.mean(vb_itl))),
        "GuideLLM inter_token_latency_ms": (float(np.mean(gl_itl)), float("nan")),
        "AIPerf inter_token_latency": (float(np.mean(ap_itl)), float("nan")),
    }


def _percentiles() -> dict[str, float]:
    """acceval's p99 (linear) against GuideLLM's (the upper order statistic) on GuideLLM's
    own recorded per-request values."""
    data = json.loads((ROOT / "tests/fixtures/peers/guidellm-benchmarks.json").read_text())
    b = data["benchmarks"][0]
    out = {}
    for metric, field in (("request_latency", "request_latency"),
                          ("time_to_first_token_ms", "time_to_first_token_ms"),
                          ("inter_token_latency_ms", "inter_token_latency_ms")):
        values = np.array([r[field] for r in b["requests"]["successful"]], dtype=float)
        linear = float(np.percentile(values, 99))
        upper = float(np.percentile(values, 99, method="inverted_cdf"))
        theirs = b["metrics"][metric]["successful"]["percentiles"]["p99"]
        out[f"{metric} p99: acceval {linear:.3f}, GuideLLM {theirs:.3f}, inverted_cdf "
            f"{upper:.3f} (n={values.size})"] = (theirs - linear) / linear
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--itl-ms", type=float, default=4.0)
    args = ap.parse_args()
    for eos in (True, False):
        recs = asyncio.run(_records(eos, args.requests, args.itl_ms / 1e3))
        print(f"\nserver {'counts' if eos else 'does not count'} EOS, {TOKENS} text tokens, "
              f"itl {args.itl_ms} ms, {len(recs)} requests")
        for name, (tpot, itl) in _peers(recs).items():
            print(f"  {name:34s} {tpot:7.3f}  {itl:7.3f}")
        d = derive(records_to_table(recs))
        # GuideLLM's p99 is the ceil(0.99 n)-th smallest value: below 100 values, the max.
        for name, values in (("ttft_ms", d.ttft_ms), ("ttft_ms, first 30", d.ttft_ms[:30]),
                             ("itl_ms", d.itl_ms), ("e2e_ms, first 30", d.e2e_ms[:30])):
            linear = float(np.percentile(values, 99))
            upper = float(np.percentile(values, 99, method="inverted_cdf"))
            print(f"  p99 {name} (n={values.size}): linear (acceval, vllm bench, AIPerf) "
                  f"{linear:.3f}, GuideLLM (the ceil(0.99 n)-th value) {upper:.3f}: "
                  f"{(upper - linear) / linear:+.1%}")
    print("\npercentiles on GuideLLM's recorded file")
    for name, gap in _percentiles().items():
        print(f"  {name}: GuideLLM {gap:+.1%}")


if __name__ == "__main__":
    main()
