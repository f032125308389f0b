"""The peer load generators: their throw-away venvs, command lines, and output parsers.

Each peer is installed from PyPI into its own venv under ``--peers-root`` (default
``/work/peers``), never into the project's .venv; ``vllm bench serve`` runs from the venv
``make test-vllm`` builds (``.vllm/venv``, tools/vllm_install.py), or ``--vllm-venv``. Peers
that want a tokenizer get a tiny byte-level BPE tokenizer built locally with ``tokenizers``
(no download). Every parser turns the peer's own output files into :class:`ClientReq` rows on
CLOCK_MONOTONIC nanoseconds, the clock the acceval server log uses, so one join and one set of
statistics serve every tool.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Prompts are sized in peer-tokenizer tokens (bytes here); 32 keeps requests small for all.
PROMPT_TOKENS = 32
ROOT = Path(__file__).resolve().parents[1]
#: Where ``make test-vllm`` keeps vLLM's venv (tools/vllm.py's ``--work``, default .vllm).
VLLM_VENV = ROOT / ".vllm" / "venv"


@dataclass(slots=True)
class ClientReq:
    """One request as the client saw it. Times are CLOCK_MONOTONIC ns (perf_counter_ns)."""

    send_ns: int | None
    ttft_ms: float | None
    lag_ms: float | None          # client send minus the schedule's intended time
    request_id: str | None        # what the client sent as X-Request-Id, if anything
    ok: bool


@dataclass(slots=True)
class PeerRun:
    reqs: list[ClientReq]
    # Aggregate schedule-lag percentiles when the peer reports no per-request lag.
    lag_p50_ms: float | None = None
    lag_p99_ms: float | None = None
    note: str = ""


@dataclass(slots=True, frozen=True)
class Job:
    """One measurement for a peer: closed loop (concurrency) or open loop (Poisson rate)."""

    url: str                      # http://127.0.0.1:PORT
    out: Path                     # an empty folder for the peer's files
    tokenizer: Path
    output_tokens: int
    requests: int
    concurrency: int | None = None
    rate_rps: float | None = None
    seed: int = 7


class Peer:
    name = ""
    package = ""
    python = "3.11"               # Python version used to create the venv
    extra_pins: tuple[str, ...] = ()

    def __init__(self, root: Path, venv: Path | None = None) -> None:
        self.venv = venv or root / self.name

    def env(self) -> dict[str, str]:
        """Environment the peer's command runs with, on top of the harness's."""
        return {}

    def installed(self) -> bool:
        return (self.venv / "bin" / self.exe()).exists()

    def exe(self) -> str:
        return self.name

    def setup(self) -> None:
        if self.installed():
            return
        subprocess.run([find_python(self.python), "-m", "venv", str(self.venv)], check=True)
        pip = [str(self.venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, self.package, *self.extra_pins], check=True)

    def version(self) -> str:
        out = subprocess.run([str(self.venv / "bin" / "python"), "-c",
                              "import importlib.metadata as m,sys;"
                              f"print(m.version('{self.package}'))"],
                             capture_output=True, text=True, check=False)
        return out.stdout.strip() or "?"

    def command(self, job: Job) -> list[str]:
        raise NotImplementedError

    def parse(self, job: Job, wall_minus_mono_ns: int) -> PeerRun:
        raise NotImplementedError


class InferencePerf(Peer):
    """kubernetes-sigs/inference-perf: YAML config; per-request stamps are perf_counter."""

    name = "inference-perf"
    package = "inference-perf"
    python = "3.12"               # it requires Python >= 3.12

    def command(self, job: Job) -> list[str]:
        if job.concurrency is not None:
            load: dict[str, Any] = {"type": "concurrent", "stages": [
                {"num_requests": job.requests, "concurrency_level": job.concurrency}]}
        else:
            assert job.rate_rps is not None
            load = {"type": "poisson", "stages": [
                {"rate": job.rate_rps, "duration": round(job.requests / job.rate_rps)}]}
        load["base_seed"] = job.seed
        # Its default is 100 in-flight requests per worker process (one per CPU).
        load["worker_max_concurrency"] = max(100, job.concurrency or 0)
        n = job.output_tokens
        cfg = {
            "api": {"type": "completion", "streaming": True},
            "server": {"type": "vllm", "model_name": "mock", "base_url": job.url,
                       "ignore_eos": True},
            "tokenizer": {"pretrained_model_name_or_path": str(job.tokenizer)},
            "data": {"type": "synthetic",
                     "input_distribution": {"min": PROMPT_TOKENS, "max": PROMPT_TOKENS,
                                            "mean": PROMPT_TOKENS, "std_dev": 0},
                     "output_distribution": {"min": n, "max": n, "mean": n, "std_dev": 0}},
            "load": load,
            "report": {"request_lifecycle": {
                "summary": True, "per_stage": True, "per_request": True,
                "per_request_fields": {"request": False, "response": False,
                                       "response_chunks": False, "info": True}}},
            "storage": {"local_storage": {"path": str(job.out / "report")}},
        }
        path = job.out / "config.yml"
        path.write_text(json.dumps(cfg, indent=1))  # JSON is YAML
        return [str(self.venv / "bin" / "inference-perf"), "--config_file", str(path)]

    def parse(self, job: Job, wall_minus_mono_ns: int) -> PeerRun:
        rows = json.loads((job.out / "report" / "per_request_lifecycle_metrics.json").read_text())
        reqs = []
        for r in rows:
            times = ((r.get("info") or {}).get("response_metrics") or {}).get("chunk_times") or []
            start = r["start_time"]  # time.perf_counter() seconds: CLOCK_MONOTONIC
            ok = r.get("error") is None and bool(times)
            reqs.append(ClientReq(send_ns=round(start * 1e9),
                                  ttft_ms=(times[0] - start) * 1e3 if times else None,
                                  lag_ms=None, request_id=None, ok=ok))
        stage = json.loads((job.out / "report" / "stage_0_lifecycle_metrics.json").read_text())
        delay = stage.get("load_summary", {}).get("schedule_delay") or {}
        p50 = delay.get("median")
        p99 = delay.get("p99")
        return PeerRun(reqs, lag_p50_ms=None if p50 is None else p50 * 1e3,
                       lag_p99_ms=None if p99 is None else p99 * 1e3,
                       note="schedule lag: the tool's own aggregate schedule_delay")


class AIPerf(Peer):
    """ai-dynamo/aiperf: sends X-Request-ID; profile_export.jsonl has wall-clock ns stamps."""

    name = "aiperf"
    package = "aiperf"

    def command(self, job: Job) -> list[str]:
        cmd = [str(self.venv / "bin" / "aiperf"), "profile", "--model", "mock", "--url", job.url,
               "--endpoint-type", "completions", "--streaming",
               "--tokenizer", str(job.tokenizer), "--use-server-token-count",
               "--synthetic-input-tokens-mean", str(PROMPT_TOKENS),
               "--synthetic-input-tokens-stddev", "0",
               "--output-tokens-mean", str(job.output_tokens), "--output-tokens-stddev", "0",
               "--extra-inputs", "ignore_eos:true",
               "--request-count", str(job.requests), "--random-seed", str(job.seed),
               "--ui-type", "none", "--no-gpu-telemetry", "--no-server-metrics",
               "--export-level", "records", "--artifact-dir", str(job.out / "artifacts")]
        if job.concurrency is not None:
            cmd += ["--concurrency", str(job.concurrency)]
        else:
            cmd += ["--request-rate", str(job.rate_rps), "--arrival-pattern", "poisson"]
        return cmd

    def parse(self, job: Job, wall_minus_mono_ns: int) -> PeerRun:
        reqs = []
        path = job.out / "artifacts" / "profile_export.jsonl"
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            md, m = r["metadata"], r.get("metrics") or {}
            start = md.get("request_start_ns")
            issued = md.get("credit_issued_ns")
            ttft = (m.get("time_to_first_token") or {}).get("value")
            lag = (start - issued) / 1e6 if start and issued else None
            reqs.append(ClientReq(
                send_ns=None if start is None else start - wall_minus_mono_ns,
                ttft_ms=ttft, lag_ms=lag, request_id=md.get("x_request_id"),
                ok=ttft is not None and not md.get("was_cancelled") and not r.get("error")))
        return PeerRun(reqs, note="schedule lag: request_start_ns - credit_issued_ns")


class GuideLLM(Peer):
    """vllm-project/guidellm: benchmarks.json keeps every request's wall-clock timings."""

    name = "guidellm"
    package = "guidellm"
    extra_pins = ("torch==2.13.0",)  # it requires torch; only the on-disk release, never unpinned

    def command(self, job: Job) -> list[str]:
        if job.concurrency is not None:
            profile = f"kind=concurrent,streams={job.concurrency}"
        else:
            profile = f"kind=poisson,rate={job.rate_rps}"
        return [str(self.venv / "bin" / "guidellm"), "run",
                "--backend", f"kind=openai_http,target={job.url},model=mock,"
                             "request_format=/v1/completions",
                "--profile", profile,
                "--constraint", f"kind=max_requests,count={job.requests}",
                "--tokenizer", f"kind=huggingface_auto,model={job.tokenizer}",
                "--data", f"kind=synthetic_text,prompt_tokens={PROMPT_TOKENS},"
                          f"output_tokens={job.output_tokens}",
                "--seed", f"kind=static,value={job.seed}",
                "--output", f"kind=json,path={job.out / 'benchmarks.json'}",
                "--disable-console-interactive"]

    def parse(self, job: Job, wall_minus_mono_ns: int) -> PeerRun:
        data = json.loads((job.out / "benchmarks.json").read_text())
        reqs = []
        for bench in data["benchmarks"]:
            groups = bench["requests"]
            for status in ("successful", "errored", "incomplete"):
                for r in groups.get(status) or []:
                    t = (r.get("info") or {}).get("timings") or {}
                    start, first = t.get("request_start"), t.get("first_token_iteration")
                    target = t.get("targeted_start")
                    reqs.append(ClientReq(
                        send_ns=None if start is None
                        else round(start * 1e9) - wall_minus_mono_ns,
                        ttft_ms=(first - start) * 1e3 if start and first else None,
                        lag_ms=(start - target) * 1e3 if start and target else None,
                        request_id=None, ok=status == "successful"))
        return PeerRun(reqs, note="schedule lag: request_start - targeted_start")


class VllmBench(Peer):
    """``vllm bench serve`` (vllm-project/vllm, vllm/benchmarks/serve.py) from the CPU build's
    venv. ``--save-detailed`` keeps one list entry per request, in the order the dataset made
    them: ``start_times`` (``time.perf_counter()`` seconds, CLOCK_MONOTONIC), ``ttfts``
    (seconds; 0 on failure), ``errors`` ("" on success) and ``queue_times`` (its send minus the
    instant its schedule released the request). The random dataset names request ``i``
    ``<prefix><i>`` and sends it as ``x-request-id``, so the join is by id."""

    name = "vllm-bench"
    package = "vllm"
    PREFIX = "vb-"

    def __init__(self, root: Path, venv: Path | None = None) -> None:
        super().__init__(root, venv or VLLM_VENV)

    def exe(self) -> str:
        return "vllm"

    def setup(self) -> None:
        """The same install as ``make test-vllm`` (tools/vllm_install.py), into this venv."""
        if self.installed():
            return
        if self.venv.name != "venv":
            sys.exit(f"--vllm-venv must be a folder named venv (as .vllm/venv), not {self.venv}")
        sys.path.insert(0, str(ROOT / "tools"))
        import vllm_install

        vllm_install.ensure(self.venv.parent)

    def env(self) -> dict[str, str]:
        return {"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}

    def command(self, job: Job) -> list[str]:
        cmd = [str(self.venv / "bin" / "vllm"), "bench", "serve", "--backend", "openai",
               "--base-url", job.url, "--endpoint", "/v1/completions", "--model", "mock",
               "--tokenizer", str(job.tokenizer), "--dataset-name", "random",
               "--random-input-len", str(PROMPT_TOKENS), "--random-output-len",
               str(job.output_tokens), "--ignore-eos", "--num-prompts", str(job.requests),
               "--seed", str(job.seed), "--num-warmups", "0", "--request-id-prefix",
               self.PREFIX, "--save-result", "--save-detailed", "--result-dir", str(job.out),
               "--result-filename", "bench.json", "--disable-tqdm"]
        if job.concurrency is not None:
            return [*cmd, "--max-concurrency", str(job.concurrency), "--request-rate", "inf"]
        return [*cmd, "--request-rate", str(job.rate_rps), "--burstiness", "1"]

    def parse(self, job: Job, wall_minus_mono_ns: int) -> PeerRun:
        data = json.loads((job.out / "bench.json").read_text())
        # Under --max-concurrency a queue time is the wait for a free slot, not lateness.
        queues = data["queue_times"] if job.rate_rps is not None else [None] * len(data["ttfts"])
        reqs = []
        for i, (start, ttft, err, queue) in enumerate(zip(
                data["start_times"], data["ttfts"], data["errors"], queues, strict=True)):
            ok = not err and ttft > 0
            reqs.append(ClientReq(send_ns=round(start * 1e9), ttft_ms=ttft * 1e3 if ok else None,
                                  lag_ms=None if queue is None else queue * 1e3,
                                  request_id=f"{self.PREFIX}{i}", ok=ok))
        return PeerRun(reqs, note="schedule lag: start_time - the schedule's release "
                                  "(queue_times; the release's own lateness is not recorded)")


def find_python(version: str) -> str:
    """An interpreter for ``version``: on PATH (a working one, not a bare pyenv shim) or pyenv's."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    if sys.version_info[:2] == tuple(int(x) for x in version.split(".")):
        candidates.append(sys.executable)
    for exe in candidates:
        if exe and subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
            return exe
    sys.exit(f"no working Python {version} found (PATH or ~/.pyenv/versions)")


# vllm bench first: the peer a vLLM user reaches for, and the fastest one measured so far.
PEERS: dict[str, type[Peer]] = {p.name: p for p in (VllmBench, InferencePerf, AIPerf, GuideLLM)}


def build_tokenizer(folder: Path) -> Path:
    """A tiny byte-level BPE tokenizer (any text round-trips), trained locally in milliseconds."""
    if (folder / "tokenizer.json").exists():
        return folder
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"])
    tok.train_from_iterator(["the quick brown fox jumps over the lazy dog " * 5,
                             "what is the number of tokens in this request prompt answer"],
                            trainer)
    tok.save(str(folder / "tokenizer.json"))
    eos = "<|endoftext|>"
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": eos, "eos_token": eos,
        "unk_token": eos, "model_max_length": 8192,
        "chat_template": "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"}))
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2",
                                                    "vocab_size": tok.get_vocab_size()}))
    return folder


def make_peer(name: str, root: Path, vllm_venv: Path | None = None) -> Peer:
    return PEERS[name](root, vllm_venv if name == VllmBench.name else None)


def setup_peers(root: Path, names: list[str], vllm_venv: Path | None = None) -> None:
    root.mkdir(parents=True, exist_ok=True)
    build_tokenizer(root / "tokenizer")
    for name in names:
        peer = make_peer(name, root, vllm_venv)
        print(f"setting up {name} in {peer.venv} ...", file=sys.stderr, flush=True)
        peer.setup()
