"""Artifact portability: do the weights move? One folder, a checksum manifest, two runtimes.

:func:`check_artifact` verifies the folder against a sha256 manifest, loads it in two runtimes
(any registered engine, through the :class:`~acceval.engines.base.Engine` protocol), generates
greedily on the same prompts and compares the answers; where a runtime exposes logits
(ONNX Runtime GenAI, transformers, the NumPy reference) it also compares the last-position
logits of each prompt.
A corrupted or altered copy fails with the reason: a checksum mismatch, a load failure,
disagreeing answers or non-finite logits.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from acceval.engines.base import GenerationRequest, engine_class, load_engine
from acceval.errors import MissingExtra, UsageError
from acceval.models import MANIFEST, build_manifest, resolve_model
from acceval.portability.evidence import Verdict
from acceval.results.section import Section
from acceval.units import number

LogitsFn = Callable[[Path, list[list[int]]], list[list[float]]]


# --- the manifest ----------------------------------------------------------------------------

def artifact_manifest(root: str | Path) -> dict[str, Any]:
    """sha256 and size of every file under ``root`` (MANIFEST.json itself excluded)."""
    p = Path(root)
    if not p.is_dir():
        raise UsageError(f"{p}: not an artifact folder")
    return build_manifest(p)


def write_manifest(root: str | Path, dest: str | Path | None = None) -> Path:
    """Write the manifest of ``root`` to ``dest`` (default ``root/MANIFEST.json``)."""
    out = Path(dest) if dest is not None else Path(root) / MANIFEST
    out.write_text(json.dumps(artifact_manifest(root), indent=1, sort_keys=True) + "\n")
    return out


def compare_manifest(root: str | Path, expected: dict[str, Any]) -> list[str]:
    """Problems of ``root`` against an expected manifest; empty when every file matches."""
    want = expected.get("files", {})
    have = artifact_manifest(root)["files"]
    problems = []
    for rel in sorted(want.keys() | have.keys()):
        if rel not in have:
            problems.append(f"{rel}: missing")
        elif rel not in want:
            problems.append(f"{rel}: not in manifest")
        elif have[rel]["size"] != want[rel]["size"]:
            problems.append(f"{rel}: size {have[rel]['size']} != {want[rel]['size']}")
        elif have[rel]["sha256"] != want[rel]["sha256"]:
            problems.append(f"{rel}: sha256 mismatch")
    return problems


# --- runtimes --------------------------------------------------------------------------------

def _options(name: str, path: Path, extra: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(engine_class(name)).parameters
    opts: dict[str, Any] = {"model": str(path)} if "model" in params else {}
    if "threads" in params:
        opts["threads"] = 1
    return {**opts, **extra}


async def _generate(name: str, options: dict[str, Any], prompts: Sequence[str],
                    max_tokens: int) -> list[str]:
    engine = load_engine(name, **options)
    await engine.start()

    async def one(i: int, prompt: str) -> str:
        text = []
        async for chunk in engine.generate(GenerationRequest(f"artifact-{i}", prompt,
                                                             max_tokens)):
            text.append(chunk.text)
        return "".join(text)

    try:
        return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts))))
    finally:
        await engine.stop()


def _ort_logits(path: Path, ids: list[list[int]]) -> list[list[float]]:
    import numpy as np
    import onnxruntime_genai as og

    art = resolve_model(str(path), "fp32")
    assert art.ort_dir is not None
    config = og.Config(str(art.ort_dir))
    config.clear_providers()
    model = og.Model(config)
    out = []
    for row in ids:
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(row) + 1, batch_size=1, do_sample=False)
        gen = og.Generator(model, params)
        gen.append_tokens(np.asarray([row], dtype=np.int32))
        out.append([float(x) for x in np.asarray(gen.get_logits()).reshape(-1)])
        del gen
    return out


def _torch_logits(path: Path, ids: list[list[int]]) -> list[list[float]]:
    import importlib

    import torch

    transformers: Any = importlib.import_module("transformers")
    art = resolve_model(str(path))
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(art.hf_dir), local_files_only=True, dtype=torch.float32).eval()
    out = []
    with torch.inference_mode():
        for row in ids:
            logits = model(input_ids=torch.tensor([row], dtype=torch.long)).logits[0, -1]
            out.append([float(x) for x in logits.tolist()])
    return out


def _numpy_logits(path: Path, ids: list[list[int]]) -> list[list[float]]:
    from acceval.engines.numpy_engine import NumpyLlama

    art = resolve_model(str(path))
    if art.hf_dir is None:
        raise UsageError(f"{path}: no HF-format folder (config.json) for the numpy runtime")
    logits: list[list[float]] = NumpyLlama.from_dir(art.hf_dir).next_token_logits(ids).tolist()
    return logits


#: Runtimes whose logits are reachable, by engine name.
LOGIT_READERS: dict[str, LogitsFn] = {"ortgenai": _ort_logits, "transformers": _torch_logits,
                                      "numpy": _numpy_logits}


# --- the check -------------------------------------------------------------------------------

class ArtifactCheck(Section):
    """One artifact check, as ``check_artifact`` returns it, the artifact level carries it in
    ``details`` and ``acceval artifact-check`` prints it. Non-finite logits are stored as
    ``max_abs_logit_diff`` None with ``logits_non_finite``, because JSON has no NaN; the flag is
    written only when set, so the JSON keys are those of earlier versions."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    path: str
    runtime_a: str
    runtime_b: str
    manifest_status: str                      # verified / mismatch / unverified
    manifest_problems: tuple[str, ...] = ()
    files: int = 0
    total_bytes: int = 0
    load_errors: dict[str, str] = Field(default_factory=dict)
    prompts: int = 0
    agreement_rate: float | None = None       # identical answers / prompts
    disagreements: tuple[tuple[str, str, str], ...] = ()  # (prompt, a, b), first few
    accuracy_a: float | None = None           # against the expected answers, when known
    accuracy_b: float | None = None
    max_abs_logit_diff: float | None = None   # None also when logits_non_finite
    logits_compared: int = 0
    verdict: Verdict = "not assessed"
    reasons: tuple[str, ...] = ()
    wall_s: float | None = None
    logits_non_finite: bool = False           # a runtime produced NaN/inf logits

    @model_serializer(mode="wrap")
    def _flag_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if not self.logits_non_finite:
            out.pop("logits_non_finite", None)
        return out


def heldout_prompts(path: Path, n: int) -> tuple[list[str], list[str | None]]:
    """The first ``n`` (prompt, answer) rows of the artifact's heldout.tsv."""
    art = resolve_model(str(path))
    for d in (art.hf_dir, art.root):
        f = d / "heldout.tsv" if d is not None else None
        if f is not None and f.is_file():
            rows = [ln.split("\t") for ln in f.read_text().splitlines() if ln.strip()][:n]
            return [r[0] for r in rows], [r[1].strip() if len(r) > 1 else None for r in rows]
    raise UsageError(f"{path}: no heldout.tsv; pass prompts= explicitly")


def _accuracy(outs: list[str] | None, answers: Sequence[str | None]) -> float | None:
    pairs = [(o, a) for o, a in zip(outs or [], answers, strict=False) if a is not None]
    if not outs or not pairs:
        return None
    return sum(o.strip() == a for o, a in pairs) / len(pairs)


def _manifest(root: Path, expected: dict[str, Any] | Path | None) -> tuple[str, list[str]]:
    want: dict[str, Any] | None
    if isinstance(expected, Path):
        want = json.loads(expected.read_text())
    elif expected is None and (root / MANIFEST).is_file():
        want = json.loads((root / MANIFEST).read_text())
    else:
        want = expected
    if want is None:
        return "unverified", []
    problems = compare_manifest(root, want)
    return ("mismatch" if problems else "verified"), problems


def _logit_diff(path: Path, a: str, b: str, tokenizer_json: Path,
                prompts: Sequence[str]) -> tuple[float | None, int]:
    if a not in LOGIT_READERS or b not in LOGIT_READERS:
        return None, 0
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    ids = [tok.encode(p, add_special_tokens=False).ids for p in prompts]
    la, lb = LOGIT_READERS[a](path, ids), LOGIT_READERS[b](path, ids)
    worst = 0.0
    for ra, rb in zip(la, lb, strict=True):
        if len(ra) != len(rb):
            raise UsageError(f"vocabulary sizes differ: {len(ra)} vs {len(rb)}")
        for x, y in zip(ra, rb, strict=True):
            d = abs(x - y)
            if not math.isfinite(d):
                return math.nan, len(la)
            worst = max(worst, d)
    return worst, len(la)


def check_artifact(path: str | Path, *, runtime_a: str = "ortgenai",
                   runtime_b: str = "transformers", prompts: Sequence[str] | None = None,
                   answers: Sequence[str | None] | None = None, n_prompts: int = 32,
                   max_tokens: int = 8, min_agreement: float = 0.95,
                   max_logit_diff: float | None = None,
                   expected_manifest: dict[str, Any] | Path | None = None,
                   options_a: dict[str, Any] | None = None,
                   options_b: dict[str, Any] | None = None,
                   compare_logits: bool = True) -> ArtifactCheck:
    """Check that the artifact at ``path`` loads and answers alike in two runtimes.

    The manifest is ``expected_manifest`` or the folder's own MANIFEST.json. Prompts default
    to the first ``n_prompts`` rows of its heldout.tsv. The verdict fails on a checksum
    mismatch, a load failure, agreement below ``min_agreement``, non-finite logits, or a logit
    difference above ``max_logit_diff`` (when given); it is "not assessed" when a runtime's
    extra is not installed.
    """
    started = time.perf_counter_ns()
    art = resolve_model(str(path))
    root = art.root
    man = artifact_manifest(root)["files"]
    status, problems = _manifest(root, expected_manifest)
    if prompts is None:
        prompts, answers = heldout_prompts(root, n_prompts)
    answers = list(answers) if answers is not None else [None] * len(prompts)
    reasons: list[str] = []
    if status == "mismatch":
        reasons.append("checksum mismatch: " + "; ".join(problems[:5]))
    outs: dict[str, list[str] | None] = {}
    errors: dict[str, str] = {}
    missing: list[str] = []
    for name, extra in ((runtime_a, options_a or {}), (runtime_b, options_b or {})):
        try:
            outs[name] = asyncio.run(_generate(name, _options(name, root, extra), prompts,
                                               max_tokens))
        except MissingExtra as exc:
            missing.append(f"{name}: {exc}")
            outs[name] = None
        except Exception as exc:  # any load/run failure of a runtime is the finding
            errors[name] = f"{type(exc).__name__}: {exc}"[:500]
            outs[name] = None
            reasons.append(f"{name} could not load or run the artifact ({errors[name]})")
    a, b = outs.get(runtime_a), outs.get(runtime_b)
    agreement = None
    diffs: list[tuple[str, str, str]] = []
    if a is not None and b is not None:
        same = [x.strip() == y.strip() for x, y in zip(a, b, strict=True)]
        agreement = sum(same) / len(same) if same else None
        diffs = [(p, x, y) for p, x, y, s in zip(prompts, a, b, same, strict=True) if not s]
        if agreement is not None and agreement < min_agreement:
            reasons.append(f"answers disagree: agreement {agreement:.1%} < {min_agreement:.0%} "
                           f"({len(diffs)} of {len(same)} prompts differ)")
    logit_diff, n_logits = None, 0
    if compare_logits and not errors and not missing:
        try:
            logit_diff, n_logits = _logit_diff(root, runtime_a, runtime_b,
                                               art.tokenizer_json, prompts)
        except Exception as exc:  # the same for a runtime's logit path
            reasons.append(f"logits could not be read ({type(exc).__name__}: {exc})"[:300])
        if logit_diff is not None and math.isnan(logit_diff):
            reasons.append("non-finite logits (NaN/inf) in one runtime")
        elif logit_diff is not None and max_logit_diff is not None \
                and logit_diff > max_logit_diff:
            reasons.append(f"max |logit difference| {number(logit_diff)} > "
                           f"{number(max_logit_diff)}")
    non_finite = logit_diff is not None and math.isnan(logit_diff)
    if reasons:
        verdict: Verdict = "fail"
    elif missing:
        verdict = "not assessed"
        reasons = [f"runtime not installed: {m}" for m in missing]
    else:
        verdict = "pass"
    return ArtifactCheck(
        path=str(root), runtime_a=runtime_a, runtime_b=runtime_b, manifest_status=status,
        manifest_problems=tuple(problems), files=len(man),
        total_bytes=sum(int(f["size"]) for f in man.values()), load_errors=errors,
        prompts=len(prompts), agreement_rate=agreement, disagreements=tuple(diffs[:5]),
        accuracy_a=_accuracy(a, answers), accuracy_b=_accuracy(b, answers),
        max_abs_logit_diff=None if non_finite else logit_diff, logits_non_finite=non_finite,
        logits_compared=n_logits, verdict=verdict,
        reasons=tuple(reasons), wall_s=(time.perf_counter_ns() - started) / 1e9,
    )
