"""Client benchmark: acceval's load generator against inference-perf, AIPerf and GuideLLM.

Every tool drives the same ``acceval serve --engine mock`` process (a separate process,
optionally pinned with taskset) over /v1/completions with SSE streaming, and every number
comes from the same places: the server's ground-truth log (rate, load window, server TTFT)
and /proc CPU of the client's whole process tree (user+sys, sampled by psutil). acceval runs
as a child process too (``loadgen.py worker``), calling ``run_point`` in-process there, so
it is measured exactly like the peers. Runs alternate (acceval, peer1, peer2, ..., acceval,
...) so the ratios come from one sitting.

    python benchmarks/loadgen.py --setup-peers            # venvs under /work/peers, tokenizer
    python benchmarks/loadgen.py --peers inference-perf,aiperf,guidellm
    python benchmarks/loadgen.py --quick --peers none     # acceval only, seconds
    python benchmarks/loadgen.py --peers none --transports native,aiohttp   # both transports

With ``--transports``, acceval is measured once per transport (``acceval`` is the native one,
``acceval-aiohttp`` the aiohttp one), alternating like the peers.

Results: ``benchmarks/out/loadgen-<UTC>.json`` and ``.md`` (see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import MockServer, run_client, summarize, wall_minus_mono_ns
from peers import PEERS, ClientReq, Job, Peer, build_tokenizer, setup_peers

HERE = Path(__file__).resolve().parent
SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {"ttft_ms": 0, "itl_ms": 0, "output_tokens": 16},
    "paced": {"ttft_ms": 50, "itl_ms": 5, "output_tokens": 64},
}
# Closed-loop concurrency per setting: a paced request lasts 50 + 63*5 = 365 ms, so the
# in-flight count must be large for the client, not Little's law, to set the rate.
CONCURRENCY = {"fast": 128, "paced": 1024}
# acceval's client per transport, named as a tool of its own in the tables.
ACCEVAL_TOOLS = {"native": "acceval", "aiohttp": "acceval-aiohttp"}
# Requests per closed-loop peer run, sized from their known ceilings so a run lasts ~10 s.
PEER_RATE_GUESS = {"inference-perf": 400.0, "aiperf": 250.0, "guidellm": 130.0}


# --- the acceval side: a worker process that calls run_point in-process -------------------

def _prompts(n_out: int) -> list[Any]:
    from acceval.loadgen.protocol import Prompt

    # About the peers' prompt size (32 bytes); a unique text per request slot.
    return [Prompt(task_id=str(i), prompt=f"r{i:05d} the quick brown fox jumps over",
                   max_tokens=n_out) for i in range(1024)]


async def _worker_main(args: argparse.Namespace) -> dict[str, Any]:
    from acceval.loadgen.runner import PointSpec, run_point
    from acceval.targets.openai import OpenAITarget
    from acceval.targets.spec import Endpoint

    target = OpenAITarget("mock", Endpoint(base_url=args.url + "/v1", model="mock",
                                           api="completions", stream=True,
                                           transport=args.transport))
    await target.start()
    recs: list[Any] = []
    kind = "concurrency" if args.concurrency else "poisson"
    level = float(args.concurrency or args.rate)
    spec = PointSpec(index=0, label=f"{kind} {level:g}", kind=kind, level=level, seed=7,
                     min_duration_s=args.duration, min_requests=1,
                     max_duration_s=args.duration + 0.001 if kind == "concurrency"
                     else args.duration)
    prompts = _prompts(args.output_tokens)
    t0 = time.perf_counter_ns()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    run = await run_point(target, prompts, spec, recs.append, t0_ns=t0)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    await target.close()
    rows = []
    for r in recs:
        ok = r.error_kind is None and r.first_token_ns is not None
        rows.append({
            "send_ns": None if r.sent_ns is None else t0 + r.sent_ns,
            "ttft_ms": (r.first_token_ns - r.sent_ns) / 1e6 if ok else None,
            "lag_ms": (r.sent_ns - r.scheduled_ns) / 1e6
            if r.scheduled_ns is not None and r.sent_ns is not None else None,
            "request_id": str(r.request_id), "ok": ok})
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return {"rows": rows, "self_cpu_s": cpu, "completed": run.completed,
            "dispatch_lag_p50_ms": run.lag_p50_ms, "dispatch_lag_p99_ms": run.lag_p99_ms}


def worker(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="loadgen.py worker")
    ap.add_argument("--url", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--output-tokens", type=int, required=True)
    ap.add_argument("--concurrency", type=int)
    ap.add_argument("--rate", type=float)
    ap.add_argument("--transport", default="native")
    args = ap.parse_args(argv)
    from acceval.loadgen.runner import run

    result = run(_worker_main(args))
    Path(args.out).write_text(json.dumps(result))


# --- the orchestrator ------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.root = Path(args.peers_root)
        self.out = Path(args.out) / dt.datetime.now(dt.UTC).strftime("loadgen-%Y%m%dT%H%M%SZ")
        self.out.mkdir(parents=True, exist_ok=True)
        self.tokenizer = build_tokenizer(self.root / "tokenizer") if args.peer_list else None
        self.peers: list[Peer] = [PEERS[n](self.root) for n in args.peer_list]
        for p in self.peers:
            if not p.installed():
                sys.exit(f"{p.name} is not installed in {p.venv}: run with --setup-peers")
        self.results: list[dict[str, Any]] = []
        self.n = 0
        # Other work may be editing src/ while the benchmark runs: server and worker import
        # acceval from a snapshot of the committed tree (HEAD) unless --code tree.
        self.commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True, check=False).stdout.strip()
        self.env: dict[str, str] = {}
        if args.code == "head":
            snap = self.out / "src-snapshot"
            snap.mkdir()
            archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", "HEAD", "src"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(snap)], input=archive, check=True)
            self.env["PYTHONPATH"] = str(snap / "src")

    def _server(self, setting: str) -> MockServer:
        log = self.out / f"server-{self.n}.jsonl"
        return MockServer(_free_port(), SETTINGS[setting], log, self.args.server_cpu, self.env)

    def _client_prefix(self, tool: str) -> list[str]:
        if tool in ACCEVAL_TOOLS.values():
            cpus = self.args.acceval_cpu
        elif tool == "acceval-unpinned":
            cpus = None
        else:
            cpus = self.args.client_cpu
        return ["taskset", "-c", cpus] if cpus else []

    def measure(self, tool: str, setting: str, mode: str, *, concurrency: int | None = None,
                rate: float | None = None) -> dict[str, Any]:
        self.n += 1
        n_out = SETTINGS[setting]["output_tokens"]
        work = self.out / f"{self.n:03d}-{tool}-{setting}-{mode}"
        work.mkdir()
        server = self._server(setting)
        peer_run = None
        extra: dict[str, Any] = {}
        try:
            offset = wall_minus_mono_ns()
            if tool.startswith("acceval"):
                cmd = [sys.executable, str(HERE / "loadgen.py"), "worker", "--url", server.url,
                       "--out", str(work / "acceval.json"), "--output-tokens", str(n_out),
                       "--duration", str(self.args.duration if rate is None
                                         else self.args.poisson_duration)]
                cmd += (["--concurrency", str(concurrency)] if concurrency
                        else ["--rate", str(rate)])
                transport = next((k for k, v in ACCEVAL_TOOLS.items() if v == tool), "native")
                cmd += ["--transport", transport]
                rc, cpu = run_client(self._client_prefix(tool) + cmd, work / "client.log", 300,
                                     env=self.env)
            else:
                peer = next(p for p in self.peers if p.name == tool)
                assert self.tokenizer is not None
                dur = self.args.duration if rate is None else self.args.poisson_duration
                n_req = int((PEER_RATE_GUESS[tool] if rate is None else rate) * dur)
                job = Job(url=server.url, out=work, tokenizer=self.tokenizer,
                          output_tokens=n_out, requests=n_req, concurrency=concurrency,
                          rate_rps=rate)
                rc, cpu = run_client(self._client_prefix(tool) + peer.command(job),
                                     work / "client.log", 600)
        finally:
            log = server.stop()
            server_cpu = server.cpu
        if rc != 0:
            print(f"  {tool}: exit {rc}, see {work / 'client.log'}", file=sys.stderr)
        if tool.startswith("acceval"):
            data = json.loads((work / "acceval.json").read_text())
            reqs = [ClientReq(**row) for row in data["rows"]]
            extra = {"self_cpu_s": data["self_cpu_s"],
                     "dispatch_lag_p50_ms": data["dispatch_lag_p50_ms"],
                     "dispatch_lag_p99_ms": data["dispatch_lag_p99_ms"]}
            res = summarize(tool, reqs, log, n_out, cpu)
        else:
            peer = next(p for p in self.peers if p.name == tool)
            peer_run = peer.parse(job, offset)
            res = summarize(tool, peer_run.reqs, log, n_out, cpu,
                            lag_p50_ms=peer_run.lag_p50_ms, lag_p99_ms=peer_run.lag_p99_ms)
            extra["note"] = peer_run.note
        res.update(extra)
        if res.get("window_s"):
            a, b = min(x["recv_ns"] for x in log), max(x["done_ns"] or x["recv_ns"] for x in log)
            res["server_cpu_util"] = server_cpu.cpu_between(a, b) / res["window_s"]
        res.update({"setting": setting, "mode": mode, "concurrency": concurrency,
                    "rate_target_rps": rate, "exit": rc, "dir": work.name})
        self.results.append(res)
        _print_row(res)
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1))
        if not self.args.keep:
            for big in ("report", "artifacts", "benchmarks.json"):
                path = work / big
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
        return res

    def run(self) -> None:
        a = self.args
        ours = [ACCEVAL_TOOLS[t] for t in a.transports]
        tools = [*ours, *[p.name for p in self.peers]]
        if a.acceval_cpu and a.also_unpinned:
            tools.insert(len(ours), "acceval-unpinned")
        for setting in a.settings:
            for _ in range(a.rounds):
                for tool in tools:
                    self.measure(tool, setting, "closed",
                                 concurrency=a.concurrency or CONCURRENCY[setting])
            for _ in range(a.poisson_rounds):
                for tool in tools:
                    self.measure(tool, setting, "poisson", rate=a.rate)
            for tool in ours if a.half_rate else []:
                rates = [r["rate_rps"] for r in self.results if r["tool"] == tool
                         and r["setting"] == setting and r["mode"] == "closed"
                         and r.get("rate_rps")]
                if rates:
                    self.measure(tool, setting, "half-max", rate=round(max(rates) / 2, -1))


def _fmt(v: Any, nd: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def _print_row(r: dict[str, Any]) -> None:
    print(f"{r['setting']:6} {r['mode']:8} {r['tool']:15} rate={_fmt(r.get('rate_rps'), 0):>6}"
          f" cpu/req={_fmt(r.get('cpu_ms_per_req'), 3):>7}ms"
          f" (whole run {_fmt(r.get('cpu_total_ms_per_req'), 3)})"
          f" ttft_err p50/p99={_fmt(r.get('ttft_err_p50_ms'))}/{_fmt(r.get('ttft_err_p99_ms'))}"
          f" lag p50/p99={_fmt(r.get('lag_p50_ms'), 3)}/{_fmt(r.get('lag_p99_ms'), 3)}"
          f" ok={r.get('server_ok')}/{r.get('client_total')} join={r.get('join')}"
          f" server_cpu={_fmt(r.get('server_cpu_util'))}",
          flush=True)


def _median(xs: list[float]) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """A Markdown table: medians over rounds per (setting, tool), and ratios to acceval."""
    lines = [f"Run {meta['date']}, acceval {meta['acceval_commit']}, peers {meta['peers']},"
             f" on {meta['machine']} ({meta['cpu_model']}); load average"
             f" before: {meta['load_before']}, after: {meta['load_after']}.", ""]
    for setting in dict.fromkeys(r["setting"] for r in results):
        lines += [f"### Setting `{setting}`: {SETTINGS[setting]}", "",
                  "| tool | max rate (req/s) | CPU/request, load window (ms) | CPU/request,"
                  " whole run (ms) | TTFT error p50 / p99 (ms) | schedule lag p50 / p99 (ms)"
                  " | acceval rate / tool rate | tool CPU / acceval CPU |",
                  "|---|---|---|---|---|---|---|---|"]
        rows = [r for r in results if r["setting"] == setting]
        tools = list(dict.fromkeys(r["tool"] for r in rows))

        def med(tool: str, mode: str, key: str, rows: list[dict[str, Any]] = rows) -> Any:
            return _median([r.get(key) for r in rows if r["tool"] == tool and r["mode"] == mode])

        ours_rate = med("acceval", "closed", "rate_rps")
        ours_cpu = med("acceval", "closed", "cpu_ms_per_req")
        for tool in tools:
            rate = med(tool, "closed", "rate_rps")
            cpu = med(tool, "closed", "cpu_ms_per_req")
            cpu_all = med(tool, "closed", "cpu_total_ms_per_req")
            e50, e99 = med(tool, "poisson", "ttft_err_p50_ms"), med(tool, "poisson",
                                                                      "ttft_err_p99_ms")
            l50, l99 = med(tool, "poisson", "lag_p50_ms"), med(tool, "poisson", "lag_p99_ms")
            rr = ours_rate / rate if ours_rate and rate else None
            cr = cpu / ours_cpu if ours_cpu and cpu else None
            lines.append(f"| {tool} | {_fmt(rate, 0)} | {_fmt(cpu, 3)} | {_fmt(cpu_all, 3)}"
                         f" | {_fmt(e50)} / {_fmt(e99)} | {_fmt(l50, 3)} / {_fmt(l99, 3)}"
                         f" | {_fmt(rr, 1)}x | {_fmt(cr, 1)}x |")
        half = [r for r in rows if r["mode"] == "half-max"]
        for r in half:
            lines.append(f"\n{r['tool']} at half its max rate"
                         f" ({_fmt(r['rate_target_rps'], 0)} req/s"
                         f" Poisson): schedule lag p50 / p99 = {_fmt(r.get('lag_p50_ms'), 3)} /"
                         f" {_fmt(r.get('lag_p99_ms'), 3)} ms, achieved"
                         f" {_fmt(r.get('rate_rps'), 0)} req/s,"
                         f" TTFT error p99 {_fmt(r.get('ttft_err_p99_ms'))} ms.")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        worker(argv[1:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup-peers", action="store_true",
                    help="create/reuse the peers' venvs and the tokenizer, then continue")
    ap.add_argument("--setup-only", action="store_true", help="stop after --setup-peers")
    ap.add_argument("--peers", default="inference-perf,aiperf,guidellm",
                    help="comma list, or 'none' for acceval alone")
    ap.add_argument("--peers-root", default=os.environ.get("ACCEVAL_PEERS", "/work/peers"))
    ap.add_argument("--settings", default="fast,paced")
    ap.add_argument("--transports", default="native",
                    help="acceval's transports to measure, comma list: native,aiohttp")
    ap.add_argument("--concurrency", type=int, default=0,
                    help="closed-loop concurrency (default: per setting, see CONCURRENCY)")
    ap.add_argument("--rate", type=float, default=50.0, help="Poisson rate for TTFT error")
    ap.add_argument("--duration", type=float, default=10.0, help="closed-loop seconds")
    ap.add_argument("--poisson-duration", type=float, default=15.0)
    ap.add_argument("--rounds", type=int, default=2, help="closed-loop rounds per tool")
    ap.add_argument("--poisson-rounds", type=int, default=1)
    ap.add_argument("--no-half-rate", dest="half_rate", action="store_false")
    ap.add_argument("--server-cpu", default="1", help="taskset CPU list for the server ('' off)")
    ap.add_argument("--client-cpu", default="",
                    help="taskset CPU list for the peers ('' = free to use every CPU)")
    ap.add_argument("--acceval-cpu", default="",
                    help="taskset CPU list for acceval's client ('' = free, like the peers);"
                         " when set, an extra unpinned acceval run is added per round")
    ap.add_argument("--no-unpinned", dest="also_unpinned", action="store_false",
                    help="skip the extra acceval run without taskset")
    ap.add_argument("--code", choices=["head", "tree"], default="head",
                    help="acceval code to measure: the committed HEAD (a snapshot) or the tree")
    ap.add_argument("--quick", action="store_true", help="3 s runs, one round, no peers")
    ap.add_argument("--keep", action="store_true", help="keep the peers' full output files")
    ap.add_argument("--out", default=str(HERE / "out"))
    args = ap.parse_args(argv)
    args.peer_list = [] if args.peers in ("", "none") else args.peers.split(",")
    args.settings = args.settings.split(",")
    args.transports = args.transports.split(",")
    unknown = set(args.transports) - set(ACCEVAL_TOOLS)
    if unknown:
        sys.exit(f"unknown transport(s) {', '.join(sorted(unknown))}; "
                 f"choose from {', '.join(ACCEVAL_TOOLS)}")
    args.server_cpu = args.server_cpu or None
    if args.quick:
        args.duration, args.poisson_duration, args.rounds = 3.0, 3.0, 1
    if args.setup_peers:
        setup_peers(Path(args.peers_root), args.peer_list)
        if args.setup_only:
            return
    load_before = os.getloadavg()
    bench = Bench(args)
    bench.run()
    meta = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                   f"{platform.platform()}, Python {platform.python_version()}",
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "peers": {p.name: p.version() for p in bench.peers},
        "args": {k: v for k, v in vars(args).items()},
        "cpu_model": _cpu_model(),
        "acceval_commit": bench.commit if args.code == "head" else f"{bench.commit} + tree",
    }
    md = report(bench.results, meta)
    (bench.out / "results.json").write_text(json.dumps({"meta": meta, "results": bench.results},
                                                       indent=1))
    (bench.out / "report.md").write_text(md)
    print()
    print(md)
    print(f"\nfiles: {bench.out}")


def _cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "?"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "?"


if __name__ == "__main__":
    main()
