"""Client benchmark: acceval's load generator against vllm bench serve, inference-perf, AIPerf
and GuideLLM.

Every tool drives the same ``acceval serve --engine mock`` process group (``--server-workers``
processes, optionally pinned with taskset) over /v1/completions with SSE streaming, and every
number comes from the same places: the server's ground-truth log (rate, load window, server
TTFT) and /proc CPU of the client's whole process tree (user+sys, sampled by psutil). acceval
runs as a child process too (``loadgen.py worker``, ``--clients N`` processes splitting the
point as ``acceval run --clients`` does), calling ``run_point`` in-process there, so it is
measured exactly like the peers. Runs alternate (acceval, peer1, peer2, ..., acceval, ...) so
the ratios come from one sitting. Then acceval runs Poisson at half its maximum rate
``--half-rounds`` times (3), each after the host's timer floor at that rate; the lag goal takes
the median of their p99s. A run whose window, rate or schedule is off what was asked
is rejected, said so and left out of the tables (goals.py); the script exits 3 when a goal of
issue 31 is missed, naming it.

    python benchmarks/loadgen.py --setup-peers --setup-only   # venvs, vLLM's, the tokenizer
    python benchmarks/loadgen.py                              # every peer, 22 s windows
    python benchmarks/loadgen.py --quick --peers vllm-bench   # smoke run: 3 s windows
    python benchmarks/loadgen.py --peers none --transports native,aiohttp   # both transports
    benchmarks/paced_many_cores.sh                            # paced, mock and clients apart
    python benchmarks/loadgen.py --peers none --settings fast --poisson-rounds 0 \
        --half-rounds 0 --lag-ramp 0.3,0.4,0.5,0.6,0.7          # where the lag p99 crosses 1 ms

With ``--transports``, acceval is measured once per transport (``acceval`` is the native one,
``acceval-aiohttp`` the aiohttp one), and with ``--clients 1,8`` once per client count
(``acceval-c8``), alternating like the peers.

Results: ``benchmarks/out/loadgen-<UTC>/results.json`` and ``report.md`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import math
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goals import (
    EXIT_GOAL_MISSED,
    LAG_P99_GOAL_MS,
    MIN_WINDOW_S,
    Cores,
    Goal,
    evaluate,
    floor_key,
    lag_crossing,
    median,
    reject_reasons,
    summary,
)
from measure import MockServer, TreeCpu, run_client, summarize, wall_minus_mono_ns
from peers import (
    PEERS,
    VLLM_VENV,
    ClientReq,
    Job,
    Peer,
    PeerRun,
    build_tokenizer,
    make_peer,
    setup_peers,
)

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
# Requests per closed-loop peer run, sized from each peer's ceiling per setting in the
# sitting of 2026-12-06 (docs/benchmarks.md) plus a tenth, so that a run lasts --duration; a
# peer that turns out faster runs again (Bench.measure). The guesses from a slower host had
# 11 of that sitting's 16 closed-loop peer runs rerun.
PEER_RATE_GUESS = {
    "fast": {"vllm-bench": 2300.0, "inference-perf": 1600.0, "aiperf": 1000.0,
             "guidellm": 370.0},
    "paced": {"vllm-bench": 1100.0, "inference-perf": 830.0, "aiperf": 520.0,
              "guidellm": 330.0},
}


# --- the acceval side: a worker process that calls run_point in-process -------------------

def _prompts(n_out: int) -> list[Any]:
    from acceval.loadgen.protocol import Prompt

    # About the peers' prompt size (32 bytes); a unique text per request slot.
    return [Prompt(task_id=str(i), prompt=f"r{i:05d} the quick brown fox jumps over",
                   max_tokens=n_out) for i in range(1024)]


def _point_spec(args: argparse.Namespace) -> Any:
    from acceval.loadgen.runner import PointSpec

    kind = "concurrency" if args.concurrency else "poisson"
    level = float(args.concurrency or args.rate)
    # No in-flight brake on the open loop: the schedule alone sets the load (a paced half-max
    # point on many cores has more than the default 4096 in flight).
    return PointSpec(index=0, label=f"{kind} {level:g}", kind=kind, level=level, seed=7,
                     min_duration_s=args.duration, min_requests=1,
                     max_duration_s=args.duration + 0.001 if kind == "concurrency"
                     else args.duration, max_in_flight=65536)


async def _worker_main(args: argparse.Namespace) -> dict[str, Any]:
    """One load generator. With ``--clients N --shard K`` it runs share K of the point, split
    as ``acceval run --clients N`` splits it (``split_point``: the closed loop's workers, or
    every N-th arrival of the one open-loop schedule), starting at the shared instant."""
    from acceval.loadgen.runner import run_point
    from acceval.scaleout.shard import split_point
    from acceval.targets.openai import OpenAITarget
    from acceval.targets.spec import Endpoint

    target = OpenAITarget("mock", Endpoint(base_url=args.url + "/v1", model="mock",
                                           api="completions", stream=True,
                                           transport=args.transport,
                                           receive_stamps=args.receive_stamps))
    prompts = _prompts(args.output_tokens)
    spec = _point_spec(args)
    shards, _ = split_point(spec, len(prompts), args.clients, first_request_id=0,
                            prompts=prompts)
    if args.shard >= len(shards):  # a closed loop with fewer workers than clients
        return {"rows": [], "self_cpu_s": 0.0, "completed": 0, "lags_ns": []}
    shard = shards[args.shard]
    await target.start()
    start_at = None
    if args.shard_of_many:  # ready: the parent answers with the shared start instant
        print("ready", flush=True)
        start_at = int(sys.stdin.readline())
    kept = _Kept()
    lags: list[int] = []
    t0 = time.perf_counter_ns()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    run = await run_point(target, [prompts[i] for i in shard.prompts], shard.spec, kept.add,
                          t0_ns=t0, first_request_id=shard.first_request_id,
                          request_id_step=shard.request_id_step, schedule_ns=shard.schedule_ns,
                          start_at_ns=start_at, lags_out=lags)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    await target.close()
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return {"rows": kept.rows(t0), "self_cpu_s": cpu, "completed": run.completed,
            "lags_ns": lags}


class _Kept:
    """What the benchmark needs of each record, kept as it lands: four numbers in blocks of
    preallocated arrays, where keeping the records themselves (a few hundred bytes and a list
    of token stamps each, 250,000 of them in a fast half-max run) grew the heap through the
    run, which a real run does not (its writer converts and drops them). A request counts as
    answered when it has a first-token stamp, kept only for one without an error."""

    BLOCK = 1 << 16
    NONE = -(1 << 62)

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._n = 0

    def add(self, r: Any) -> None:
        i = self._n % self.BLOCK
        if i == 0:
            self._blocks.append(np.empty((self.BLOCK, 4), dtype=np.int64))
        none = self.NONE
        first = r.first_token_ns
        self._blocks[-1][i] = (none if r.sent_ns is None else r.sent_ns,
                               none if first is None or r.error_kind is not None else first,
                               none if r.scheduled_ns is None else r.scheduled_ns,
                               r.request_id)
        self._n += 1

    def rows(self, t0: int) -> list[dict[str, Any]]:
        none = self.NONE
        out = []
        kept = (np.concatenate(self._blocks)[: self._n] if self._blocks
                else np.empty((0, 4), dtype=np.int64))
        for sent, first, scheduled, request_id in kept.tolist():
            ok = first != none
            out.append({
                "send_ns": None if sent == none else t0 + sent,
                "ttft_ms": (first - sent) / 1e6 if ok else None,
                "lag_ms": (sent - scheduled) / 1e6
                if scheduled != none and sent != none else None,
                "request_id": str(request_id), "ok": ok})
        return out


def _pin_to_own_cpu(shard: int) -> None:
    """Client K of N takes the K-th CPU of those it was given (taskset), when there are
    enough, so that the clients do not migrate onto each other's cores."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > 1:
        os.sched_setaffinity(0, {cpus[shard % len(cpus)]})


def _fan_out(args: argparse.Namespace) -> dict[str, Any]:
    """``--clients N``: N worker processes, one share each, from one start instant."""
    out = Path(args.out)
    load = (["--concurrency", str(args.concurrency)] if args.concurrency
            else ["--rate", str(args.rate)])
    base = [sys.executable, str(HERE / "loadgen.py"), "worker", "--url", args.url,
            "--duration", str(args.duration), "--output-tokens", str(args.output_tokens),
            *load, "--transport", args.transport, "--clients", str(args.clients)]
    procs = [subprocess.Popen([*base, "--shard", str(k), "--out", f"{out}.part{k}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for k in range(args.clients)]
    # Every share starts at one instant, once every interpreter has imported and is ready
    # (a share with nothing to do exits at once and says nothing).
    ready = [p for p in procs if p.stdout is not None and p.stdout.readline() == "ready\n"]
    start_at = time.perf_counter_ns() + 200_000_000
    for p in ready:
        assert p.stdin is not None
        p.stdin.write(f"{start_at}\n")
        p.stdin.close()
    rcs = [p.wait() for p in procs]
    if any(rcs):
        sys.exit(f"a client process exited with {rcs}")
    parts = [json.loads(Path(f"{out}.part{k}").read_text()) for k in range(args.clients)]
    return {"rows": [r for p in parts for r in p["rows"]],
            "self_cpu_s": sum(p["self_cpu_s"] for p in parts),
            "completed": sum(p["completed"] for p in parts),
            "lags_ns": [x for p in parts for x in p["lags_ns"]]}


def worker(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="loadgen.py worker")
    ap.add_argument("--url", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--output-tokens", type=int, required=True)
    ap.add_argument("--concurrency", type=int)
    ap.add_argument("--rate", type=float)
    ap.add_argument("--transport", default="native")
    ap.add_argument("--receive-stamps", choices=("read", "kernel"), default="read",
                    help="endpoint.receive_stamps for the client (one process only)")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--shard", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.shard_of_many = args.shard is not None
    if args.clients > 1 and args.shard is None:
        result = _fan_out(args)
    else:
        from acceval.loadgen.runner import run

        if args.shard_of_many:
            _pin_to_own_cpu(args.shard)
        args.shard = args.shard or 0
        result = run(_worker_main(args))
        if args.shard_of_many:  # the raw lags go to _fan_out, which merges every share's
            Path(args.out).write_text(json.dumps(result))
            return
    lags = np.asarray(result.pop("lags_ns"), dtype=np.float64) / 1e6
    result["dispatch_lag_p50_ms"] = float(np.percentile(lags, 50)) if lags.size else None
    result["dispatch_lag_p99_ms"] = float(np.percentile(lags, 99)) if lags.size else None
    Path(args.out).write_text(json.dumps(result))


def floor(argv: list[str]) -> None:
    """This host's timer floor at a rate (timer_floor.py's runner waker), as the client
    process would see it: printed as JSON for the orchestrator."""
    ap = argparse.ArgumentParser(prog="loadgen.py floor")
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--arrivals", type=int, required=True)
    args = ap.parse_args(argv)
    from timer_floor import waker

    print(json.dumps(waker(args.rate, args.arrivals, seed=7)))


# --- the orchestrator ------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


#: Free space a memory-backed folder needs to hold one run's server log (the fastest closed
#: loop writes about 250 MB in 22 s).
SERVER_LOG_ROOM_BYTES = 2 << 30


def server_log_dir(asked: str) -> Path | None:
    """Where the mock writes its ground-truth log during a run: ``asked`` ("" for the output
    folder itself), or by default ``/dev/shm`` where it is a memory-backed folder with room.

    Written to this host's virtual disk, the log (about 500 bytes a request) sent the
    kernel's writeback into the measurement: the client's send-lag p99 at 11,560 req/s was
    1.41-1.50 ms with the log on disk against 0.23-0.40 ms with it in memory (15-s runs, three
    each, alternated twice). Each log is moved into the output folder after its run."""
    if asked != "auto":
        return Path(asked) if asked else None
    shm = Path("/dev/shm")
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    return shm if st.f_bavail * st.f_frsize >= SERVER_LOG_ROOM_BYTES else None


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.root = Path(args.peers_root)
        self.out = Path(args.out) / dt.datetime.now(dt.UTC).strftime("loadgen-%Y%m%dT%H%M%SZ")
        self.out.mkdir(parents=True, exist_ok=True)
        where = server_log_dir(args.server_log_dir)
        self.log_scratch = (Path(tempfile.mkdtemp(prefix="acceval-loadgen-", dir=where))
                            if where is not None else None)
        self.tokenizer = build_tokenizer(self.root / "tokenizer") if args.peer_list else None
        self.peers: list[Peer] = [make_peer(n, self.root, args.vllm_venv)
                                  for n in args.peer_list]
        for p in self.peers:
            if not p.installed():
                sys.exit(f"{p.name} is not installed in {p.venv}: run with --setup-peers")
        # acceval's clients: a tool per (transport, client processes).
        self.ours = {_tool_name(t, c): (t, c) for c in args.clients for t in args.transports}
        self.results: list[dict[str, Any]] = []
        self.floors: dict[str, list[float | None]] = {}
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

    def cores(self) -> Cores:
        a = self.args
        return Cores(host_cpus=os.cpu_count() or 0, server=a.server_cpu or "any",
                     server_workers=a.server_workers, acceval=a.acceval_cpu or "any",
                     acceval_clients=",".join(map(str, a.clients)),
                     peers=a.client_cpu or "any")

    def _server(self, setting: str) -> MockServer:
        log = (self.log_scratch or self.out) / f"server-{self.n}.jsonl"
        return MockServer(_free_port(), SETTINGS[setting], log, self.args.server_cpu, self.env,
                          workers=self.args.server_workers)

    def _client_prefix(self, tool: str) -> list[str]:
        if tool in self.ours:
            cpus = self.args.acceval_cpu
        elif tool == "acceval-unpinned":
            cpus = None
        else:
            cpus = self.args.client_cpu
        return ["taskset", "-c", cpus] if cpus else []

    def _duration(self, rate: float | None) -> float:
        return self.args.duration if rate is None else self.args.poisson_duration

    def _acceval(self, tool: str, url: str, work: Path, n_out: int, concurrency: int | None,
                 rate: float | None) -> tuple[int, TreeCpu, list[ClientReq], dict[str, Any]]:
        transport, clients = self.ours.get(tool, ("native", 1))
        cmd = [sys.executable, str(HERE / "loadgen.py"), "worker", "--url", url,
               "--out", str(work / "acceval.json"), "--output-tokens", str(n_out),
               "--duration", str(self._duration(rate)), "--transport", transport,
               "--clients", str(clients)]
        cmd += ["--concurrency", str(concurrency)] if concurrency else ["--rate", str(rate)]
        rc, cpu = run_client(self._client_prefix(tool) + cmd, work / "client.log", 300,
                             env=self.env)
        path = work / "acceval.json"
        data = json.loads(path.read_text()) if path.exists() else {"rows": []}
        extra = {k: data.get(k) for k in ("self_cpu_s", "dispatch_lag_p50_ms",
                                          "dispatch_lag_p99_ms")}
        extra["clients"] = clients
        return rc, cpu, [ClientReq(**row) for row in data["rows"]], extra

    def _peer(self, peer: Peer, job: Job, offset_ns: int
              ) -> tuple[int, TreeCpu, PeerRun | None]:
        rc, cpu = run_client(self._client_prefix(peer.name) + peer.command(job),
                             job.out / "client.log", 600, env=peer.env())
        try:
            return rc, cpu, peer.parse(job, offset_ns)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # no file, or not its schema
            print(f"  {peer.name}: its output could not be read ({exc!r})", file=sys.stderr)
            return rc or 1, cpu, None

    def measure(self, tool: str, setting: str, mode: str, *, concurrency: int | None = None,
                rate: float | None = None) -> dict[str, Any]:
        """One run, checked (goals.reject_reasons); a peer whose closed-loop window came out
        short, and nothing else wrong, runs once more with the requests its rate needs."""
        res = self._measure_once(tool, setting, mode, concurrency, rate, None)
        reasons = res.get("rejected") or []
        if (not tool.startswith("acceval") and rate is None and len(reasons) == 1
                and reasons[0].startswith("load window") and res.get("rate_rps")):
            n = math.ceil(res["rate_rps"] * self._duration(rate) * 1.15)
            print(f"  {tool}: window {res['window_s']:.1f} s too short; again with {n} "
                  "requests", flush=True)
            res["superseded"] = True
            res = self._measure_once(tool, setting, mode, concurrency, rate, n)
        return res

    def _measure_once(self, tool: str, setting: str, mode: str, concurrency: int | None,
                      rate: float | None, n_req: int | None) -> dict[str, Any]:
        self.n += 1
        n_out = SETTINGS[setting]["output_tokens"]
        work = self.out / f"{self.n:03d}-{tool}-{setting}-{mode}"
        work.mkdir()
        server = self._server(setting)
        extra: dict[str, Any] = {}
        reqs: list[ClientReq] = []
        lag50 = lag99 = None
        try:
            offset = wall_minus_mono_ns()
            if tool.startswith("acceval"):
                rc, cpu, reqs, extra = self._acceval(tool, server.url, work, n_out,
                                                     concurrency, rate)
            else:
                peer = next(p for p in self.peers if p.name == tool)
                assert self.tokenizer is not None
                guess = (PEER_RATE_GUESS.get(setting, {}).get(tool, 500.0) if rate is None
                         else rate)
                n = n_req or math.ceil(guess * self._duration(rate) * 1.05)
                job = Job(url=server.url, out=work, tokenizer=self.tokenizer,
                          output_tokens=n_out, requests=n, concurrency=concurrency,
                          rate_rps=rate)
                rc, cpu, run = self._peer(peer, job, offset)
                if run is not None:
                    reqs, lag50, lag99 = run.reqs, run.lag_p50_ms, run.lag_p99_ms
                    extra["note"] = run.note
                extra["requests_asked"] = n
        finally:
            log = server.stop()
            server_cpu = server.cpu
            if self.log_scratch is not None:   # into the output folder, after the run
                for path in server.logs():
                    shutil.move(path, self.out / path.name)
        if rc != 0:
            print(f"  {tool}: exit {rc}, see {work / 'client.log'}", file=sys.stderr)
        res = summarize(tool, reqs, log, n_out, cpu, lag_p50_ms=lag50, lag_p99_ms=lag99)
        res.update(extra)
        if res.get("window_s"):
            a, b = min(x["recv_ns"] for x in log), max(x["done_ns"] or x["recv_ns"] for x in log)
            res["server_cpu_util"] = server_cpu.cpu_between(a, b) / res["window_s"]
        res.update({"setting": setting, "mode": mode, "concurrency": concurrency,
                    "rate_target_rps": rate, "exit": rc, "dir": work.name})
        reasons = reject_reasons(res, requested_rps=rate, min_window_s=self.args.min_window)
        if reasons:
            res["rejected"] = reasons
        self.results.append(res)
        _print_row(res)
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1))
        if not self.args.keep:
            for big in ("report", "artifacts", "benchmarks.json", "bench.json"):
                path = work / big
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
        return res

    def measure_floor(self, setting: str, tool: str, rate: float) -> None:
        """The host's timer floor at ``rate``, on the CPUs ``tool`` runs on, just before its
        half-max point (timer_floor.py's waker: no server, no requests)."""
        arrivals = max(500, int(rate * min(self.args.poisson_duration, 5.0)))
        cmd = [*self._client_prefix(tool), sys.executable, str(HERE / "loadgen.py"),
               "floor", "--rate", str(rate), "--arrivals", str(arrivals)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                             env={**os.environ, **self.env})
        try:
            floor_p99 = float(json.loads(out.stdout.strip().splitlines()[-1])["p99_ms"])
        except (IndexError, KeyError, ValueError):
            print(f"  timer floor not measured: {out.stderr.strip()[-300:]}", file=sys.stderr)
            floor_p99 = None
        self.floors.setdefault(floor_key(setting, tool), []).append(floor_p99)
        print(f"{setting:6} floor    timer waker at {rate:g}/s: p99 {_fmt(floor_p99, 3)} ms",
              flush=True)

    def run(self) -> None:
        a = self.args
        ours = list(self.ours)
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
                         and r.get("rate_rps") and not r.get("rejected")]
                if rates:
                    half = round(max(rates) / 2, -1)
                    for _ in range(a.half_rounds):
                        self.measure_floor(setting, tool, half)
                        self.measure(tool, setting, "half-max", rate=half)
                    for share in a.lag_ramp:
                        self.measure(tool, setting, "ramp", rate=round(max(rates) * share, -1))

    def goals(self) -> list[Goal]:
        rows = [r for r in self.results if not r.get("superseded")]
        return evaluate(rows, settings=self.args.settings, ours=list(self.ours),
                        peers=[p.name for p in self.peers], cores=self.cores(),
                        floors_p99_ms={k: median(v) for k, v in self.floors.items()},
                        reference_rps=self.args.peer_reference)


def _tool_name(transport: str, clients: int) -> str:
    base = ACCEVAL_TOOLS[transport]
    return base if clients == 1 else f"{base}-c{clients}"


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
          f" (write-to-read p99 {_fmt(r.get('write_to_read_p99_ms'), 3)})"
          f" lag p50/p99={_fmt(r.get('lag_p50_ms'), 3)}/{_fmt(r.get('lag_p99_ms'), 3)}"
          f" ok={r.get('server_ok')}/{r.get('client_total')} join={r.get('join')}"
          f" server_cpu={_fmt(r.get('server_cpu_util'))}",
          flush=True)


def report(results: list[dict[str, Any]], meta: dict[str, Any],
           goals: list[Goal] | None = None) -> str:
    """A Markdown table per setting: medians over the accepted rounds per tool, and ratios to
    acceval; then every rejected run with its reasons, then the goals."""
    lines = [f"Run {meta['date']}, acceval {meta['acceval_commit']}, peers {meta['peers']},"
             f" on {meta['machine']} ({meta['cpu_model']}); load average"
             f" before: {meta['load_before']}, after: {meta['load_after']};"
             f" cores: {meta['cores']}.", ""]
    accepted = [r for r in results if not r.get("rejected")]
    for setting in dict.fromkeys(r["setting"] for r in results):
        lines += _setting_table(setting, [r for r in accepted if r["setting"] == setting])
        lines += _ramp_lines([r for r in results if r["setting"] == setting
                              and not r.get("superseded")])
    rejected = [r for r in results if r.get("rejected")]
    if rejected:
        lines += ["### Rejected runs (not in the tables)", ""]
        lines += [f"- `{r['dir']}` {r['tool']} {r['setting']} {r['mode']}"
                  f"{' (run again)' if r.get('superseded') else ''}: "
                  f"{'; '.join(r['rejected'])}" for r in rejected]
        lines.append("")
    if goals:
        lines += ["### Goals (issue 31)", "", *summary(goals), ""]
    return "\n".join(lines)


def _setting_table(setting: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"### Setting `{setting}`: {SETTINGS[setting]}", "",
             "| tool | max rate (req/s) | load window (s) | CPU/request, load window (ms)"
             " | CPU/request, whole run (ms) | TTFT error p50 / p99 (ms) (write to read p99)"
             " | schedule lag p50 / p99 (ms) | acceval rate / tool rate"
             " | tool CPU / acceval CPU |",
             "|---|---|---|---|---|---|---|---|---|"]
    tools = list(dict.fromkeys(r["tool"] for r in rows))

    def med(tool: str, mode: str, key: str) -> Any:
        return median([r.get(key) for r in rows if r["tool"] == tool and r["mode"] == mode])

    ours_rate = med("acceval", "closed", "rate_rps")
    ours_cpu = med("acceval", "closed", "cpu_ms_per_req")
    for tool in tools:
        rate = med(tool, "closed", "rate_rps")
        cpu = med(tool, "closed", "cpu_ms_per_req")
        rr = ours_rate / rate if ours_rate and rate else None
        cr = cpu / ours_cpu if ours_cpu and cpu else None
        lines.append(
            f"| {tool} | {_fmt(rate, 0)} | {_fmt(med(tool, 'closed', 'window_s'), 1)}"
            f" | {_fmt(cpu, 3)} | {_fmt(med(tool, 'closed', 'cpu_total_ms_per_req'), 3)}"
            f" | {_fmt(med(tool, 'poisson', 'ttft_err_p50_ms'))} /"
            f" {_fmt(med(tool, 'poisson', 'ttft_err_p99_ms'))}"
            f" ({_fmt(med(tool, 'poisson', 'write_to_read_p99_ms'), 3)})"
            f" | {_fmt(med(tool, 'poisson', 'lag_p50_ms'), 3)} /"
            f" {_fmt(med(tool, 'poisson', 'lag_p99_ms'), 3)}"
            f" | {_fmt(rr, 1)}x | {_fmt(cr, 1)}x |")
    for r in (r for r in rows if r["mode"] == "half-max"):
        lines.append(f"\n{r['tool']} at half its max rate ({_fmt(r['rate_target_rps'], 0)}"
                     f" req/s Poisson): schedule lag p50 / p99 = {_fmt(r.get('lag_p50_ms'), 3)}"
                     f" / {_fmt(r.get('lag_p99_ms'), 3)} ms, achieved"
                     f" {_fmt(r.get('rate_rps'), 0)} req/s, TTFT error p99"
                     f" {_fmt(r.get('ttft_err_p99_ms'))} ms (the mock's first write to the"
                     f" client's first-token stamp: p50 / p99"
                     f" {_fmt(r.get('write_to_read_p50_ms'), 3)} /"
                     f" {_fmt(r.get('write_to_read_p99_ms'), 3)} ms).")
    lines.append("")
    return lines


def _ramp_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The lag ramp (``--lag-ramp``): a table per tool, and where the p99 crossed 1 ms. A
    rejected ramp run is in the table with its reason: it did not hold its schedule."""
    lines: list[str] = []
    for tool in dict.fromkeys(r["tool"] for r in rows if r["mode"] == "ramp"):
        ramp = sorted((r for r in rows if r["tool"] == tool and r["mode"] == "ramp"),
                      key=lambda r: r["rate_target_rps"])
        top = median([r.get("rate_rps") for r in rows if r["tool"] == tool
                       and r["mode"] == "closed" and not r.get("rejected")])
        lines += ["", f"{tool}, open loop (Poisson) at shares of its max rate"
                  f" ({_fmt(top, 0)} req/s), one run each:", "",
                  "| req/s asked | share of max | achieved | schedule lag p50 / p99 (ms)"
                  " | CPU/request (ms) | TTFT error p99 (ms) |", "|---:|---:|---:|---:|---:|---:|"]
        for r in ramp:
            share = r["rate_target_rps"] / top if top else None
            lag = (f"rejected: {'; '.join(r['rejected'])}" if r.get("rejected") else
                   f"{_fmt(r.get('lag_p50_ms'), 3)} / {_fmt(r.get('lag_p99_ms'), 3)}")
            lines.append(f"| {_fmt(r['rate_target_rps'], 0)} | {_fmt(share)} |"
                         f" {_fmt(r.get('rate_rps'), 0)} | {lag} |"
                         f" {_fmt(r.get('cpu_ms_per_req'), 3)} |"
                         f" {_fmt(r.get('ttft_err_p99_ms'))} |")
        under, over = lag_crossing(ramp)
        lines += ["", f"Schedule-lag p99 under {LAG_P99_GOAL_MS:g} ms up to"
                  f" {_fmt(under, 0)} req/s; at or over it from {_fmt(over, 0)} req/s"
                  " (a dash: not reached in the ramp)."]
    return lines


def _lag_ramp(value: str) -> list[float]:
    shares = [float(v) for v in value.split(",") if v.strip()]
    if any(not 0 < v <= 1 for v in shares):
        raise argparse.ArgumentTypeError("shares of the max rate, each in (0, 1]")
    return shares


def _cpu_list(value: str) -> str | None:
    return value or None


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup-peers", action="store_true",
                    help="create/reuse the peers' venvs and the tokenizer, then continue")
    ap.add_argument("--setup-only", action="store_true", help="stop after --setup-peers")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="comma list, or 'none' for acceval alone")
    ap.add_argument("--peers-root", default=os.environ.get("ACCEVAL_PEERS", "/work/peers"))
    ap.add_argument("--vllm-venv", type=Path, default=VLLM_VENV,
                    help="vLLM's venv for vllm-bench (default: .vllm/venv, as make test-vllm "
                         "builds it; --setup-peers builds it there the same way)")
    ap.add_argument("--settings", default="fast,paced")
    ap.add_argument("--transports", default="native",
                    help="acceval's transports to measure, comma list: native,aiohttp")
    ap.add_argument("--clients", default="1",
                    help="acceval's client processes, comma list (e.g. 1,8): a tool per value"
                         " (acceval-cN), the point split as acceval run --clients splits it")
    ap.add_argument("--concurrency", type=int, default=0,
                    help="closed-loop concurrency (default: per setting, see CONCURRENCY)")
    ap.add_argument("--rate", type=float, default=50.0, help="Poisson rate for TTFT error")
    ap.add_argument("--duration", type=float, default=22.0, help="closed-loop seconds")
    ap.add_argument("--poisson-duration", type=float, default=22.0)
    ap.add_argument("--min-window", type=float, default=MIN_WINDOW_S,
                    help="reject a run whose server-side load window is shorter (seconds)")
    ap.add_argument("--peer-reference", action="append", default=[], metavar="SETTING=RPS",
                    help="with --peers none: the fastest peer's closed-loop rate from another"
                         " sitting, for the ratio goal (said as such in the output)")
    ap.add_argument("--rounds", type=int, default=2, help="closed-loop rounds per tool")
    ap.add_argument("--poisson-rounds", type=int, default=1)
    ap.add_argument("--no-half-rate", dest="half_rate", action="store_false")
    ap.add_argument("--half-rounds", type=int, default=3,
                    help="half-max runs per tool (the lag goal takes their median p99)")
    ap.add_argument("--lag-ramp", type=_lag_ramp, default=[], metavar="SHARES",
                    help="after the half-max runs, one Poisson run of acceval at each of these"
                         " shares of its max rate (e.g. 0.3,0.4,0.5,0.6,0.7): where the"
                         " schedule lag's p99 crosses 1 ms")
    ap.add_argument("--server-cpu", default="1", type=_cpu_list,
                    help="taskset CPU list for the mock ('' off)")
    ap.add_argument("--server-workers", type=int, default=1,
                    help="the mock's processes (serve --workers), all on --server-cpu")
    ap.add_argument("--client-cpu", default="",
                    help="taskset CPU list for the peers ('' = free to use every CPU)")
    ap.add_argument("--acceval-cpu", default="",
                    help="taskset CPU list for acceval's client ('' = free, like the peers);"
                         " when set, an extra unpinned acceval run is added per round")
    ap.add_argument("--no-unpinned", dest="also_unpinned", action="store_false",
                    help="skip the extra acceval run without taskset")
    ap.add_argument("--code", choices=["head", "tree"], default="head",
                    help="acceval code to measure: the committed HEAD (a snapshot) or the tree")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 3 s windows (and --min-window 2.5), one round")
    ap.add_argument("--keep", action="store_true", help="keep the peers' full output files")
    ap.add_argument("--server-log-dir", default="auto", metavar="DIR",
                    help="where the mock writes its ground-truth log during a run, moved into "
                         "the output folder after it; default /dev/shm where it has room, "
                         "'' for the output folder itself")
    ap.add_argument("--out", default=str(HERE / "out"))
    return ap


def main(argv: list[str] | None = None) -> int:
    """Exit 0 when every goal this sitting measured is met, EXIT_GOAL_MISSED otherwise."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["worker"], ["floor"]):
        (worker if argv[0] == "worker" else floor)(argv[1:])
        return 0
    args = _parser().parse_args(argv)
    args.peer_list = [] if args.peers in ("", "none") else args.peers.split(",")
    args.settings = args.settings.split(",")
    args.transports = args.transports.split(",")
    args.clients = [int(c) for c in args.clients.split(",")]
    args.peer_reference = {k: float(v) for k, _, v in
                           (x.partition("=") for x in args.peer_reference)}
    unknown = set(args.transports) - set(ACCEVAL_TOOLS)
    if unknown:
        sys.exit(f"unknown transport(s) {', '.join(sorted(unknown))}; "
                 f"choose from {', '.join(ACCEVAL_TOOLS)}")
    unknown = set(args.peer_list) - set(PEERS)
    if unknown:
        sys.exit(f"unknown peer(s) {', '.join(sorted(unknown))}; choose from {', '.join(PEERS)}")
    if args.quick:
        args.duration, args.poisson_duration, args.rounds, args.half_rounds = 3.0, 3.0, 1, 1
        args.min_window = min(args.min_window, 2.5)
    if min(args.duration, args.poisson_duration) < args.min_window:
        sys.exit(f"--duration and --poisson-duration must be at least --min-window "
                 f"({args.min_window:g} s): a shorter run would be rejected")
    if args.setup_peers:
        setup_peers(Path(args.peers_root), args.peer_list, args.vllm_venv)
        if args.setup_only:
            return 0
    load_before = os.getloadavg()
    bench = Bench(args)
    try:
        bench.run()
    finally:
        if bench.log_scratch is not None:
            shutil.rmtree(bench.log_scratch, ignore_errors=True)
    meta = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                   f"{platform.platform()}, Python {platform.python_version()}",
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "peers": {p.name: p.version() for p in bench.peers},
        "cores": bench.cores().describe(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "cpu_model": _cpu_model(),
        "acceval_commit": bench.commit if args.code == "head" else f"{bench.commit} + tree",
        "server_log_dir": str(bench.log_scratch.parent) if bench.log_scratch else "output folder",
    }
    goals = bench.goals()
    md = report(bench.results, meta, goals)
    (bench.out / "results.json").write_text(json.dumps(
        {"meta": meta, "results": bench.results, "floors_p99_ms": bench.floors,
         "goals": [dataclasses.asdict(g) for g in goals]}, indent=1))
    (bench.out / "report.md").write_text(md)
    print()
    print(md)
    print(f"\nfiles: {bench.out}")
    missed = [g.name for g in goals if not g.met]
    if missed:
        print(f"goals missed: {'; '.join(missed)}", file=sys.stderr)
        return EXIT_GOAL_MISSED
    return 0


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
    sys.exit(main())
