"""The NumPy engine: a from-scratch Llama forward pass, the torch-free reference runtime.

Registered as ``numpy``. It reads the HF folder's ``config.json`` and ``model.safetensors``
(through ``safetensors.numpy``, no torch) and runs the decoder in float32, written out step by
step as HF transformers' ``LlamaForCausalLM`` does it: RMSNorm, rotary position embeddings
with the ``rotate_half`` convention, grouped-query attention, a causal mask, the SiLU-gated
MLP, the final norm and the LM head (tied to the embeddings when the config says so).
Greedy decoding keeps a KV cache per batch; batching and stop rules are the shared
:class:`~acceval.engines.batching.DynamicBatcher`'s.

Its purpose is the artifact check: a second runtime that shares no code with ONNX Runtime,
so "the same weights answer alike in two runtimes" holds where torch is not installed. It is
readable rather than fast; :class:`NumpyLlama` is usable on its own for logits.

NumPy's BLAS (OpenBLAS) threads its matrix products by size, and on a small shared CPU its
spinning threads made a batch-16 step 37 times slower (128x128 by 128x384: 3.7 ms on two
threads, 0.1 ms on one), so each forward pass runs under a ``threads`` limit (threadpoolctl).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from acceval.engines.batching import BatchedEngine, BatchedOptions, StepFn
from acceval.errors import MissingExtra, UsageError
from acceval.models import resolve_model

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class LlamaConfig:
    """The part of an HF Llama ``config.json`` the forward pass needs."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    rms_norm_eps: float
    rope_theta: float
    max_positions: int
    tie_embeddings: bool
    eos_ids: tuple[int, ...]

    @classmethod
    def from_json(cls, cfg: dict[str, Any], where: Path) -> LlamaConfig:
        if cfg.get("model_type") != "llama":
            raise UsageError(f"{where}: model_type {cfg.get('model_type')!r} is not 'llama'; "
                             "the numpy engine runs Llama-architecture models only")
        if cfg.get("hidden_act", "silu") != "silu":
            raise UsageError(f"{where}: hidden_act {cfg['hidden_act']!r} is not 'silu'")
        # transformers 5 nests RoPE settings in rope_parameters; 4.x kept them at the top.
        rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        if rope_type != "default":
            raise UsageError(f"{where}: rope_type {rope_type!r} is not supported by the numpy "
                             "engine (only 'default')")
        heads = int(cfg["num_attention_heads"])
        hidden = int(cfg["hidden_size"])
        eos = cfg.get("eos_token_id")
        return cls(
            vocab=int(cfg["vocab_size"]), hidden=hidden, layers=int(cfg["num_hidden_layers"]),
            heads=heads, kv_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            intermediate=int(cfg["intermediate_size"]),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0))),
            max_positions=int(cfg["max_position_embeddings"]),
            tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            eos_ids=tuple(eos if isinstance(eos, list) else [] if eos is None else [eos]),
        )


@dataclass(frozen=True, slots=True)
class _Layer:
    ln1: F32
    wqkv: F32          # [hidden, (heads + 2 kv_heads) * head_dim]: q, k, v projections fused
    bqkv: F32 | None
    wo: F32            # [heads * head_dim, hidden]
    bo: F32 | None
    ln2: F32
    wgu: F32           # [hidden, 2 * intermediate]: gate, up fused
    wdown: F32         # [intermediate, hidden]


class KVCache:
    """Keys and values of every layer for one batch, preallocated to ``length`` positions."""

    def __init__(self, cfg: LlamaConfig, batch: int, length: int) -> None:
        shape = (batch, cfg.kv_heads, length, cfg.head_dim)
        self.k = [np.zeros(shape, np.float32) for _ in range(cfg.layers)]
        self.v = [np.zeros(shape, np.float32) for _ in range(cfg.layers)]
        self.length = length


class NumpyLlama:
    """A Llama decoder in NumPy float32, loaded from an HF folder."""

    def __init__(self, cfg: LlamaConfig, weights: dict[str, npt.NDArray[Any]],
                 threads: int | None = None) -> None:
        self.cfg = cfg
        self._blas: Any = None
        if threads is not None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError as exc:
                raise MissingExtra("local", "threadpoolctl") from exc
            self._blas = ThreadpoolController()
        self.threads = threads

        def w(name: str) -> F32:
            if name not in weights:
                raise UsageError(f"model.safetensors has no tensor '{name}'")
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        def opt(name: str) -> F32 | None:
            return w(name) if name in weights else None

        self.embed = w("model.embed_tokens.weight")
        if self.embed.shape != (cfg.vocab, cfg.hidden):
            raise UsageError(f"embeddings have shape {self.embed.shape}, the config says "
                             f"{(cfg.vocab, cfg.hidden)}")
        head = "model.embed_tokens.weight" if cfg.tie_embeddings else "lm_head.weight"
        self.lm_head_t = np.ascontiguousarray(w(head).T)
        self.norm = w("model.norm.weight")
        self.layers = []
        for i in range(cfg.layers):
            p = f"model.layers.{i}."
            a, m = p + "self_attn.", p + "mlp."
            biases = [opt(a + n + "_proj.bias") for n in "qkv"]
            self.layers.append(_Layer(
                ln1=w(p + "input_layernorm.weight"),
                wqkv=np.ascontiguousarray(np.concatenate(
                    [w(a + n + "_proj.weight") for n in "qkv"], axis=0).T),
                bqkv=None if any(b is None for b in biases)
                else np.concatenate([b for b in biases if b is not None]),
                wo=np.ascontiguousarray(w(a + "o_proj.weight").T), bo=opt(a + "o_proj.bias"),
                ln2=w(p + "post_attention_layernorm.weight"),
                wgu=np.ascontiguousarray(np.concatenate(
                    [w(m + "gate_proj.weight"), w(m + "up_proj.weight")], axis=0).T),
                wdown=np.ascontiguousarray(w(m + "down_proj.weight").T),
            ))
        # HF's default RoPE: inv_freq = theta^(-2i/d), angles = position * inv_freq, and the
        # table repeated for both halves (rotate_half pairs dimension j with j + d/2).
        half = np.arange(0, cfg.head_dim, 2, dtype=np.int64).astype(np.float32) / cfg.head_dim
        inv_freq = (1.0 / (cfg.rope_theta ** half)).astype(np.float32)
        angles = np.arange(cfg.max_positions, dtype=np.float32)[:, None] * inv_freq[None, :]
        emb = np.concatenate([angles, angles], axis=-1)
        self.cos, self.sin = np.cos(emb), np.sin(emb)

    @classmethod
    def from_dir(cls, hf_dir: str | Path, threads: int | None = 1) -> NumpyLlama:
        """Load ``config.json`` and ``model.safetensors`` from an HF folder.

        ``threads`` caps NumPy's BLAS threads during each forward pass (``None``: no cap).
        """
        try:
            from safetensors.numpy import load_file
        except ImportError as exc:
            raise MissingExtra("local", "safetensors") from exc
        d = Path(hf_dir)
        cfg = LlamaConfig.from_json(json.loads((d / "config.json").read_text()), d)
        return cls(cfg, load_file(str(d / "model.safetensors")), threads)

    def _blas_limit(self) -> AbstractContextManager[Any]:
        if self._blas is None:
            return nullcontext()
        limit: AbstractContextManager[Any] = self._blas.limit(limits=self.threads,
                                                              user_api="blas")
        return limit

    def new_cache(self, batch: int, length: int) -> KVCache:
        return KVCache(self.cfg, batch, length)

    def _rms_norm(self, x: F32, weight: F32) -> F32:
        var = np.mean(np.square(x), axis=-1, keepdims=True)
        out: F32 = weight * (x / np.sqrt(var + np.float32(self.cfg.rms_norm_eps)))
        return out

    @staticmethod
    def _rope(x: F32, cos: F32, sin: F32) -> F32:
        half = x.shape[-1] // 2
        rotated: F32 = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # rotate_half
        out: F32 = x * cos + rotated * sin
        return out

    def forward(self, ids: npt.NDArray[np.int64], cache: KVCache, start: int) -> F32:
        """Logits ``[batch, vocab]`` of the last position, after appending ``ids`` at ``start``.

        ``ids`` is ``[batch, tokens]``; positions ``start .. start + tokens - 1`` must fit the
        cache. Non-finite weights give non-finite logits, silently: the caller checks them.
        """
        c = self.cfg
        b, t = ids.shape
        end = start + t
        if end > cache.length:
            raise ValueError(f"positions up to {end} do not fit a cache of {cache.length}")
        nq, nkv, hd = c.heads * c.head_dim, c.kv_heads * c.head_dim, c.head_dim
        cos, sin = self.cos[start:end], self.sin[start:end]
        # A token sees itself and earlier positions: mask key j > start + i for query i.
        mask = np.triu(np.full((t, end), -np.inf, np.float32), k=start + 1) if t > 1 else None
        scale = np.float32(hd ** -0.5)
        # Overflow or NaN in corrupted weights is a finding (non-finite logits), not an error.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), self._blas_limit():
            x = self.embed[ids.reshape(-1)]  # [batch * tokens, hidden]: one GEMM per projection
            for i, layer in enumerate(self.layers):
                qkv = self._rms_norm(x, layer.ln1) @ layer.wqkv
                if layer.bqkv is not None:
                    qkv = qkv + layer.bqkv
                q = qkv[..., :nq].reshape(b, t, c.heads, hd).transpose(0, 2, 1, 3)
                k = qkv[..., nq:nq + nkv].reshape(b, t, c.kv_heads, hd).transpose(0, 2, 1, 3)
                v = qkv[..., nq + nkv:].reshape(b, t, c.kv_heads, hd).transpose(0, 2, 1, 3)
                cache.k[i][:, :, start:end] = self._rope(k, cos, sin)
                cache.v[i][:, :, start:end] = v
                keys, values = cache.k[i][:, :, :end], cache.v[i][:, :, :end]
                if c.kv_heads != c.heads:  # grouped-query: query head h reads kv head h // g
                    g = c.heads // c.kv_heads
                    keys, values = np.repeat(keys, g, axis=1), np.repeat(values, g, axis=1)
                scores = (self._rope(q, cos, sin) @ keys.transpose(0, 1, 3, 2)) * scale
                if mask is not None:
                    scores = scores + mask
                scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
                probs = scores / scores.sum(axis=-1, keepdims=True)
                attn = (probs @ values).transpose(0, 2, 1, 3).reshape(b * t, nq) @ layer.wo
                x = x + (attn if layer.bo is None else attn + layer.bo)
                gate, up = np.split(self._rms_norm(x, layer.ln2) @ layer.wgu, 2, axis=-1)
                # silu(g) = g * sigmoid(g); tanh form needs no exp that could overflow
                silu = gate * (np.float32(0.5) * (np.float32(1.0) + np.tanh(gate * 0.5)))
                x = x + (silu * up) @ layer.wdown
            last = x.reshape(b, t, c.hidden)[:, -1]
            logits: F32 = self._rms_norm(last, self.norm) @ self.lm_head_t
        return logits

    def next_token_logits(self, ids: Sequence[Sequence[int]]) -> F32:
        """Last-position logits ``[len(ids), vocab]`` of each prompt (rows may differ in length)."""
        out = np.empty((len(ids), self.cfg.vocab), np.float32)
        by_len: dict[int, list[int]] = {}
        for row, toks in enumerate(ids):
            by_len.setdefault(len(toks), []).append(row)
        for n, rows in by_len.items():
            batch = np.asarray([ids[r] for r in rows], dtype=np.int64)
            out[rows] = self.forward(batch, self.new_cache(len(rows), n), 0)
        return out

    def greedy(self, prompts: list[list[int]], max_new_tokens: int,
               min_new_tokens: int = 0) -> Iterator[list[int]]:
        """Yield the next token of every row per step (same-length prompts, KV cache); every
        row runs ``max_new_tokens`` steps, so ``min_new_tokens`` needs nothing here."""
        ids = np.asarray(prompts, dtype=np.int64)
        b, t = ids.shape
        cache = self.new_cache(b, t + max_new_tokens)
        logits = self.forward(ids, cache, 0)
        for step in range(max_new_tokens):
            nxt = logits.argmax(axis=-1)
            yield nxt.tolist()
            if step + 1 < max_new_tokens:  # no forward pass for a token never read
                logits = self.forward(nxt[:, None], cache, t + step)


class NumpyOptions(BatchedOptions):
    """Options of the ``numpy`` engine."""

    requires = (("local", "safetensors"), ("local", "tokenizers"), ("local", "threadpoolctl"))


class NumpyEngine(BatchedEngine):
    """Serve ``model`` (``builtin:NAME`` or an HF directory) with the NumPy Llama."""

    Options = NumpyOptions

    def __init__(self, model: str = "builtin:tiny", max_batch: int = 16,
                 batch_window_ms: float = 2.0, threads: int = 1,
                 model_id: str | None = None) -> None:
        if max_batch < 1:
            raise UsageError(f"max_batch must be at least 1, got {max_batch}")
        if threads < 1:
            raise UsageError(f"threads must be at least 1, got {threads}")
        self.threads = threads
        art = resolve_model(model)
        if art.hf_dir is None:
            raise UsageError(f"model '{model}' has no HF-format folder (config.json)")
        self.artifact = art
        self._hf_dir: Path = art.hf_dir
        self.config = LlamaConfig.from_json(json.loads((art.hf_dir / "config.json").read_text()),
                                            art.hf_dir)
        super().__init__(
            model_id=model_id or f"{art.name}-numpy",
            tokenizer_json=art.hf_dir / "tokenizer.json",
            eos_ids=self.config.eos_ids,
            context_length=self.config.max_positions,
            max_batch=max_batch,
            batch_window_ms=batch_window_ms,
        )
        self._model: NumpyLlama | None = None

    def _load(self) -> StepFn:
        model = self._model or NumpyLlama.from_dir(self._hf_dir, self.threads)
        self._model = model
        return model.greedy

    def _unload(self) -> None:
        self._model = None

    def next_token_logits(self, prompts: Sequence[str]) -> F32:
        """Last-position logits ``[len(prompts), vocab]``; loads the weights if not started."""
        if self._model is None:
            self._model = NumpyLlama.from_dir(self._hf_dir, self.threads)
        return self._model.next_token_logits([self.encode(p) for p in prompts])
