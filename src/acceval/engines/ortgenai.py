"""The ONNX Runtime GenAI engine: the shipped tiny model, prebuilt per precision, batched.

Registered as ``ortgenai``. Each batch is one ``og.Generator`` with ``batch_size`` rows;
greedy search, one token per step for every row. Tokenization goes through the model's
``tokenizer.json`` with the ``tokenizers`` library, the same path the transformers engine
uses, so both count and decode tokens identically.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from acceval.engines.batching import BatchedEngine, BatchedOptions, StepFn
from acceval.errors import MissingExtra, UsageError
from acceval.models import ModelArtifact, resolve_model

# ONNX Runtime GenAI sizes its KV cache for this many rows at most.
MAX_BATCH_LIMIT = 32


class OrtGenAIOptions(BatchedOptions):
    """Options of the ``ortgenai`` engine."""

    requires = (("local", "onnxruntime_genai"), ("local", "tokenizers"))

    precision: Literal["fp32", "int8", "int4"] = Field("fp32", description="ONNX build.")
    max_batch: int = Field(16, ge=1, le=MAX_BATCH_LIMIT,
                           description="Most requests decoded together.")

    def artifact(self) -> ModelArtifact:
        return resolve_model(self.model, self.precision)

    def problems(self) -> list[tuple[str, str]]:
        try:
            art = self.artifact()
        except UsageError as exc:
            return [("model", str(exc))]
        if art.ort_dir is None:
            return [("model", f"model '{self.model}' has no ONNX Runtime GenAI build")]
        return []


class OrtGenAIEngine(BatchedEngine):
    """Serve ``model`` (``builtin:NAME`` or a directory) at ``precision`` with ORT GenAI."""

    Options = OrtGenAIOptions

    def __init__(self, model: str = "builtin:tiny", precision: str = "fp32", max_batch: int = 16,
                 batch_window_ms: float = 2.0, threads: int = 1,
                 model_id: str | None = None) -> None:
        try:
            import onnxruntime_genai  # noqa: F401
        except ImportError as exc:
            raise MissingExtra("local", "onnxruntime_genai") from exc
        if not 1 <= max_batch <= MAX_BATCH_LIMIT:
            raise UsageError(f"max_batch must be between 1 and {MAX_BATCH_LIMIT}, got {max_batch}")
        if threads < 1:
            raise UsageError(f"threads must be at least 1, got {threads}")
        art = resolve_model(model, precision)
        if art.ort_dir is None:
            raise UsageError(f"model '{model}' has no ONNX Runtime GenAI build")
        self.artifact = art
        self._ort_dir: Path = art.ort_dir
        self.precision = precision
        self.threads = threads
        cfg = json.loads((art.ort_dir / "genai_config.json").read_text())["model"]
        eos = cfg["eos_token_id"]
        super().__init__(
            model_id=model_id or f"{art.name}-{precision}",
            tokenizer_json=art.ort_dir / "tokenizer.json",
            eos_ids=eos if isinstance(eos, list) else [eos],
            context_length=int(cfg["context_length"]),
            max_batch=max_batch,
            batch_window_ms=batch_window_ms,
        )
        self._model: Any = None

    def _load(self) -> StepFn:
        import numpy as np
        import onnxruntime_genai as og

        config = og.Config(str(self._ort_dir))
        config.clear_providers()  # CPU
        # One intra-op thread: on a small shared CPU, OpenMP spin-waiting makes two slower.
        opts = {"intra_op_num_threads": self.threads, "inter_op_num_threads": 1}
        config.overlay(json.dumps({"model": {"decoder": {"session_options": opts}}}))
        model = og.Model(config)
        self._model = model

        def steps(prompts: list[list[int]], max_new_tokens: int,
                  min_new_tokens: int) -> Iterator[Sequence[int]]:
            params = og.GeneratorParams(model)
            search: dict[str, Any] = {"max_length": len(prompts[0]) + max_new_tokens,
                                      "batch_size": len(prompts), "do_sample": False}
            if min_new_tokens:
                # ORT GenAI ends a row at its EOS; under ignore_eos it must not end early.
                search["min_length"] = len(prompts[0]) + min_new_tokens
            params.set_search_options(**search)
            generator = og.Generator(model, params)
            try:
                generator.append_tokens(np.asarray(prompts, dtype=np.int32))
                while not generator.is_done():
                    generator.generate_next_token()
                    yield generator.get_next_tokens()
            finally:
                del generator

        return steps

    def _unload(self) -> None:
        self._model = None
