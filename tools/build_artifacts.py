"""Package trained tiny models as acceval's built-in artifacts, and measure them.

For each trained HF folder ``build/models/<name>`` (from ``tools/train_tiny.py``) this writes
``src/acceval/data/models/<name>/``:

- the HF-format files (config.json, model.safetensors, tokenizer.json, tokenizer_config.json,
  generation_config.json) and the held-out evaluation set ``heldout.tsv``;
- ``ort-fp32``, ``ort-int8``, ``ort-int4``: ONNX Runtime GenAI builds made offline with
  ``python -m onnxruntime_genai.models.builder -i HF -o OUT -p PRECISION -e cpu``;
- ``card.json``: how it was made (training report, builder versions) and, per engine and
  precision, the exact-match accuracy on ``heldout.tsv`` and the latency measured here;
- ``MANIFEST.json``: sha256 and size of every file.

Run::

    .venv/bin/python tools/build_artifacts.py tiny small
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"

from acceval.engines.base import GenerationRequest
from acceval.engines.batching import BatchedEngine
from acceval.engines.ortgenai import OrtGenAIEngine
from acceval.engines.torch_engine import TorchEngine
from acceval.models import MANIFEST, PRECISIONS, build_manifest, models_dir

HF_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "generation_config.json", "heldout.tsv"]
REPO = Path(__file__).resolve().parents[1]


def build_ort(hf_dir: Path, out: Path, precision: str) -> None:
    cache = out.parent / f".cache-{precision}"
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf_dir),
           "-o", str(out), "-p", precision, "-e", "cpu", "-c", str(cache)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(cache, ignore_errors=True)
    # The builder re-saves the tokenizer through transformers, which drops its unk token and
    # turns on the byte-level regex; ship the original so every engine tokenizes identically.
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(hf_dir / name, out / name)


def load_heldout(path: Path) -> list[tuple[str, str]]:
    rows = [line.rstrip("\n").split("\t") for line in path.read_text().splitlines()]
    return [(p, a) for p, a in rows]


async def _answer(engine: BatchedEngine, i: int, prompt: str) -> tuple[str, str | None]:
    text, finish = "", None
    async for c in engine.generate(GenerationRequest(str(i), prompt, max_tokens=8)):
        text += c.text
        finish = c.finish_reason
    return text, finish


async def _batched(engine: BatchedEngine, heldout: list[tuple[str, str]]) -> dict[str, Any]:
    """Accuracy over the whole set, every request offered at once (full batches)."""
    await engine.start()
    try:
        t0 = time.perf_counter()
        outs = await asyncio.gather(*(_answer(engine, i, p) for i, (p, _) in enumerate(heldout)))
        batched_s = time.perf_counter() - t0
    finally:
        await engine.stop()
    hits = [t == a and f == "stop" for (t, f), (_, a) in zip(outs, heldout, strict=True)]
    numeric = [t.isdigit() and int(t) == int(a) for (t, _), (_, a) in zip(outs, heldout,
                                                                           strict=True)]
    return {
        "n": len(heldout),
        "exact_match": sum(hits) / len(hits),
        "exact_match_first200": sum(hits[:200]) / len(hits[:200]),
        "numeric_match": sum(numeric) / len(numeric),
        "throughput_rps_batched": round(len(heldout) / batched_s, 1),
        "max_batch": engine.max_batch,
    }


async def _latency(engine: BatchedEngine, heldout: list[tuple[str, str]]) -> dict[str, Any]:
    """Median time per request, one request at a time, no batching window."""
    await engine.start()
    lat_ms = []
    try:
        for i, (p, _) in enumerate(heldout[:200]):
            t = time.perf_counter_ns()
            await _answer(engine, i, p)
            lat_ms.append((time.perf_counter_ns() - t) / 1e6)
    finally:
        await engine.stop()
    return {"latency_ms_batch1_p50": round(statistics.median(lat_ms), 3)}


def measure(make: Callable[[int, float], BatchedEngine],
            heldout: list[tuple[str, str]]) -> dict[str, Any]:
    result = asyncio.run(_batched(make(16, 2.0), heldout))
    result |= asyncio.run(_latency(make(1, 0.0), heldout))
    return result


def package(name: str, src: Path, threads: int) -> dict[str, Any]:
    dst = models_dir() / name
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for f in HF_FILES:
        shutil.copy2(src / f, dst / f)
    for p in PRECISIONS:
        build_ort(dst, dst / f"ort-{p}", p)
    heldout = load_heldout(dst / "heldout.tsv")
    evals: dict[str, Any] = {}
    for p in PRECISIONS:
        evals[f"ortgenai-{p}"] = measure(
            lambda n, w, p=p: OrtGenAIEngine(str(dst), precision=p, max_batch=n,
                                             batch_window_ms=w, threads=threads), heldout)
        print(name, p, json.dumps(evals[f"ortgenai-{p}"]), flush=True)
    evals["transformers-fp32"] = measure(
        lambda n, w: TorchEngine(str(dst), threads=threads, max_batch=n, batch_window_ms=w),
        heldout)
    print(name, "torch", json.dumps(evals["transformers-fp32"]), flush=True)
    train = json.loads((src / "train_report.json").read_text())
    sizes = {d.name: sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
             for d in dst.iterdir() if d.is_dir()}
    sizes["hf"] = sum((dst / f).stat().st_size for f in HF_FILES)
    card = {
        "name": name,
        "spec": f"builtin:{name}",
        "task": "builtin:arithmetic, digits=3: prompt '{a:03d}+{b:03d}=' -> '{a+b:04d}' + EOS",
        "training": train,
        "evaluation": {
            "set": "heldout.tsv: operand pairs held out of training by a fixed hash",
            "threads": threads,
            "machine": platform.platform(),
            "results": evals,
        },
        "build": {
            "script": "tools/build_artifacts.py",
            "ort_builder": "python -m onnxruntime_genai.models.builder -i HF -o OUT "
                           "-p {fp32,int8,int4} -e cpu",
            "versions": {pkg: version(pkg) for pkg in
                         ("onnxruntime-genai", "onnxruntime", "onnx", "torch", "transformers",
                          "tokenizers", "safetensors")},
        },
        "sizes_bytes": sizes,
    }
    (dst / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    (dst / MANIFEST).write_text(json.dumps(build_manifest(dst), indent=2) + "\n")
    return card


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+")
    ap.add_argument("--trained", type=Path, default=REPO / "build" / "models")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    for name in args.names:
        package(name, args.trained / name, args.threads)
    total = sum(f.stat().st_size for f in models_dir().rglob("*") if f.is_file())
    print(f"total shipped: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
