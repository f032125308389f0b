"""What scraping a vLLM-sized ``/metrics`` page costs the measurement, in one sitting.

A recorded-format vLLM v1 page (tests/fixtures/metrics/vllm-v1-page.txt, ~60 KB, rebuilt by
build_vllm_v1_page.py) is served by a separate process next to the mock engine; a study at
concurrency 1 and 4 runs with telemetry scraping that page every 0.25 s, in three modes
alternated round by round so that drift in the host's load spreads over all of them:

- ``off``: no scraping;
- ``whole``: every line parsed by prometheus-client, in the probe thread (what acceval did);
- ``sieve``: the lines of mapped families only (acceval.telemetry.sieve), in the probe thread.

Per mode it prints the event-loop lag p99 of every point (the self-check's own figure) and the
share of points trusted. Then the CPU one scrape holds in the load generator's interpreter,
for both ways of taking the parse off the stamping loop: the sieve in-thread, and the whole
parse in a child process (the parent only unpickles the readings).

    python benchmarks/telemetry_cost.py [--rounds 3] [--requests 120]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import acceval.probes.prometheus as prom
from acceval.pipeline import execute
from acceval.study import study_from_dict
from acceval.telemetry import Scrape, parse_metrics
from acceval.telemetry.names import FAMILIES
from acceval.telemetry.sieve import sieve

PAGE = Path(__file__).resolve().parents[1] / "tests/fixtures/metrics/vllm-v1-page.txt"
MODES = ("off", "whole", "sieve")


def _serve_page(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    (folder / "metrics").write_text(PAGE.read_text())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    for _ in range(100):
        try:
            prom.fetch(url, 1.0)
            return proc, url
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the page server did not start")


def _study(url: str | None, requests: int) -> Any:
    target: dict[str, Any] = {"name": "mock", "serve": {"engine": "mock", "options": {
        "ttft_ms": 20, "itl_ms": 4, "output_tokens": 16, "seed": 1}}}
    target["telemetry"] = ({"metrics_url": url, "interval_s": 0.25} if url
                           else {"enabled": False})
    return study_from_dict({
        "name": "telemetry-cost",
        "tasks": {"source": "text:Count to sixteen.", "count": requests, "max_tokens": 16},
        "targets": [target],
        "load": [{"concurrency": [1, 4], "warmup_requests": 3}],
    })


def _one(mode: str, url: str, requests: int, root: Path) -> list[tuple[float, bool]]:
    whole = functools.partial(parse_metrics, whole=True)
    prom.parse_metrics = whole if mode == "whole" else parse_metrics  # type: ignore[assignment]
    try:
        result, _ = execute(_study(None if mode == "off" else url, requests), base_dir=root,
                            out_dir=root / "runs", progress=False)
    finally:
        prom.parse_metrics = parse_metrics  # type: ignore[assignment]
    return [(p.summary.loop_lag_ms.p99 or float("nan"), p.summary.trusted)
            for p in result.targets[0].points]


def _child_parse(text: str) -> Scrape:
    return parse_metrics(text, whole=True)


def _cpu_per_scrape(url: str, n: int = 40) -> dict[str, float]:
    """Process CPU (all threads of this interpreter) per scrape, fetch included."""
    def cost(f: Any) -> float:
        f()
        start = time.process_time()
        for _ in range(n):
            f()
        return (time.process_time() - start) / n * 1e3

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out = {
            "fetch only": cost(lambda: prom.fetch(url, 2.0)),
            "fetch + whole parse, in-thread": cost(
                lambda: parse_metrics(prom.fetch(url, 2.0), whole=True)),
            "fetch + sieve + parse, in-thread": cost(lambda: parse_metrics(prom.fetch(url, 2.0))),
            "fetch, whole parse in a child process": cost(
                lambda: pool.apply(_child_parse, (prom.fetch(url, 2.0),))),
            "sieve alone": cost(lambda: sieve(PAGE.read_text(), FAMILIES)),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=120)
    args = ap.parse_args()
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (1 min) at start")
    with tempfile.TemporaryDirectory() as tmp:
        server, url = _serve_page(Path(tmp))
        try:
            results: dict[str, list[tuple[float, bool]]] = {m: [] for m in MODES}
            for r in range(args.rounds):
                for mode in MODES if r % 2 == 0 else reversed(MODES):
                    results[mode] += _one(mode, url, args.requests, Path(tmp) / f"{mode}{r}")
            print(f"page {PAGE.stat().st_size} bytes, scraped every 0.25 s; "
                  f"{args.rounds} rounds x 2 points (concurrency 1, 4) per mode")
            for mode in MODES:
                lag = np.array([p for p, _ in results[mode]])
                trusted = sum(t for _, t in results[mode])
                print(f"  {mode:6s} loop-lag p99 per point: median {np.nanmedian(lag):5.2f} ms, "
                      f"max {np.nanmax(lag):5.2f} ms; trusted {trusted}/{len(lag)}")
            print("CPU held in this interpreter per scrape (ms):")
            for name, ms in _cpu_per_scrape(url).items():
                print(f"  {name:40s} {ms:6.2f}")
        finally:
            server.terminate()
            server.wait()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
