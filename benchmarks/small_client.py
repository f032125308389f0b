"""The small client: what a user writes instead of a load generator, in under 90 lines.

aiohttp on uvloop, N closed-loop workers streaming completions for a fixed time; per
request it stamps the send, the first token and the end, and counts the content events
(one JSON decode per SSE event, as any client that reads the tokens does). It keeps no
records and checks nothing else, so it is the floor the aiohttp transport is held to
(``benchmarks/transports.py``: within 1.2x its CPU per request) and the rate the native
transport is held to (at least 1.5x).

    python benchmarks/small_client.py URL --concurrency 64 --seconds 4 --tokens 16

Prints one JSON line: completed, errors, rate_rps, cpu_us_per_req, ttft_p50_ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import aiohttp
import uvloop


async def one(session: aiohttp.ClientSession, url: str, body: bytes,
              ttfts: list[int]) -> bool:
    sent = time.perf_counter_ns()
    first = 0
    tokens = 0
    async with session.post(url, data=body,
                            headers={"Content-Type": "application/json"}) as resp:
        if resp.status != 200:
            await resp.read()
            return False
        buf = b""
        async for data in resp.content.iter_any():
            buf += data
            *events, buf = buf.split(b"\n\n")
            for ev in events:
                payload = ev[6:] if ev.startswith(b"data: ") else b""
                if not payload or payload == b"[DONE]":
                    continue
                choices = json.loads(payload).get("choices") or ()
                if choices and choices[0].get("text"):
                    tokens += 1
                    first = first or time.perf_counter_ns()
    if first:
        ttfts.append(first - sent)
    return tokens > 0


async def main(url: str, concurrency: int, seconds: float, n_tokens: int) -> dict[str, float]:
    body = json.dumps({"model": "mock", "prompt": "the quick brown fox jumps over",
                       "max_tokens": n_tokens, "stream": True}).encode()
    ttfts: list[int] = []
    done = [0, 0]   # completed, errors
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        end = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < end:
                try:
                    ok = await one(session, url + "/completions", body, ttfts)
                except aiohttp.ClientError:
                    ok = False
                done[0 if ok else 1] += 1

        cpu0, w0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - w0, time.process_time() - cpu0
    return {"completed": done[0], "errors": done[1], "rate_rps": done[0] / wall,
            "cpu_us_per_req": cpu / max(done[0], 1) * 1e6,
            "ttft_p50_ms": statistics.median(ttfts) / 1e6 if ttfts else float("nan")}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", help="the server's base URL, ending in /v1")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--tokens", type=int, default=16)
    a = ap.parse_args()
    print(json.dumps(uvloop.run(main(a.url, a.concurrency, a.seconds, a.tokens))))
