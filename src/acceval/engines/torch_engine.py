"""The transformers/torch engine: the same weights run eagerly, the unoptimised reference.

Registered as ``transformers`` (the ``[torch]`` extra). The model loads from its local HF
folder only (never a hub). Batches decode greedily with the KV cache, one token per step for
every row, on CPU or CUDA.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import Field, field_validator

from acceval.engines.batching import BatchedEngine, BatchedOptions, StepFn
from acceval.errors import MissingExtra, UsageError
from acceval.models import resolve_model


def _device_ok(device: str) -> bool:
    return device in ("cpu", "cuda") or device.startswith("cuda:")


class TorchOptions(BatchedOptions):
    """Options of the ``transformers`` engine."""

    requires = (("torch", "torch"), ("torch", "transformers"), ("torch", "tokenizers"))

    device: str = Field("cpu", description="cpu, cuda or cuda:N.")

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        if not _device_ok(v):
            raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got '{v}'")
        return v

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        if not found and self.device.startswith("cuda"):
            import torch  # only to ask for a device: the run would fail on this later

            if not torch.cuda.is_available():
                found.append(("device", "device 'cuda' asked for, but torch sees no CUDA "
                                        "device; use device: cpu"))
        return found


class TorchEngine(BatchedEngine):
    """Serve ``model`` (``builtin:NAME`` or an HF directory) with transformers on torch."""

    Options = TorchOptions

    def __init__(self, model: str = "builtin:tiny", device: str = "cpu", threads: int = 1,
                 max_batch: int = 16, batch_window_ms: float = 2.0,
                 model_id: str | None = None) -> None:
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            raise MissingExtra("torch", "torch") from exc
        if not _device_ok(device):
            raise UsageError(f"device must be 'cpu' or 'cuda[:N]', got '{device}'")
        if max_batch < 1:
            raise UsageError(f"max_batch must be at least 1, got {max_batch}")
        if threads < 1:
            raise UsageError(f"threads must be at least 1, got {threads}")
        art = resolve_model(model)
        if art.hf_dir is None:
            raise UsageError(f"model '{model}' has no HF-format folder (config.json)")
        self.artifact = art
        self.device = device
        self.threads = threads
        cfg = json.loads((art.hf_dir / "config.json").read_text())
        eos = cfg["eos_token_id"]
        super().__init__(
            model_id=model_id or f"{art.name}-torch",
            tokenizer_json=art.hf_dir / "tokenizer.json",
            eos_ids=eos if isinstance(eos, list) else [eos],
            context_length=int(cfg["max_position_embeddings"]),
            max_batch=max_batch,
            batch_window_ms=batch_window_ms,
        )
        self._model: Any = None

    def _load(self) -> StepFn:
        os.environ["HF_HUB_OFFLINE"] = "1"  # a local folder only; never reach for a hub
        import torch

        # Typed as Any on purpose: mypy must pass whether or not transformers is installed.
        transformers: Any = importlib.import_module("transformers")
        transformers.utils.logging.disable_progress_bar()

        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise UsageError("device 'cuda' asked for, but torch sees no CUDA device")
        # Process-wide; one thread is fastest for a model this small on a shared CPU.
        torch.set_num_threads(self.threads)
        model: Any = transformers.AutoModelForCausalLM.from_pretrained(
            str(self.artifact.hf_dir), local_files_only=True, dtype=torch.float32
        ).to(self.device).eval()
        self._model = model
        device = self.device
        # transformers 5 renamed the KV-cache argument and output from past_key_values to cache.
        cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters \
            else "past_key_values"

        def steps(prompts: list[list[int]], max_new_tokens: int,
                  min_new_tokens: int = 0) -> Iterator[Sequence[int]]:
            # Every row decodes max_new_tokens steps: EOS is the batcher's stop rule, so
            # ignore_eos (min_new_tokens) needs nothing here.
            with torch.inference_mode():
                ids = torch.tensor(prompts, dtype=torch.long, device=device)
                out = model(input_ids=ids, use_cache=True)
                for step in range(max_new_tokens):
                    nxt = out.logits[:, -1, :].argmax(dim=-1)
                    yield nxt.tolist()
                    if step + 1 < max_new_tokens:  # no forward pass for a token never read
                        out = model(input_ids=nxt[:, None], use_cache=True,
                                    **{cache_arg: getattr(out, cache_arg)})

        return steps

    def _unload(self) -> None:
        self._model = None
