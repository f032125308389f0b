"""Train the tiny arithmetic model that ships with acceval (CPU, seeded, reproducible).

The model is a small Llama-architecture decoder with a character-level tokenizer. It learns the
built-in arithmetic task: the prompt ``f"{a:03d}+{b:03d}="`` continues with the zero-padded sum
of width 4 (``"0168"``) and then EOS. Operand pairs are split by a fixed hash into train and
held-out sets; the held-out pairs are never seen in training and measure the accuracy.

Run (needs the ``[torch]`` extra; one thread is fastest on a small shared CPU)::

    .venv/bin/python tools/train_tiny.py --name tiny --layers 4 --hidden 128 --steps 6000 \
        --out build/models/tiny

It writes an HF-format folder (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json, generation_config.json), ``heldout.tsv`` (the fixed evaluation set
shipped with the model) and ``train_report.json`` (seed, versions, timings, accuracy).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import tokenizers
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

DIGITS = 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
# Byte-level alphabet: printable ASCII maps to itself; space is "Ġ" and newline "Ċ".
CHARS = [*"0123456789", "+", "=", "Ġ", "Ċ"]
HELDOUT_MODULUS = 20  # 1 pair in 20 is held out (5 %)
N_EVAL_SHIPPED = 1000


def is_heldout(a: int, b: int) -> bool:
    """The fixed train/held-out split over operand pairs (Knuth multiplicative hash)."""
    return ((a * 1000 + b) * 2654435761 % 2**32) % HELDOUT_MODULUS == 0


def build_tokenizer() -> Tokenizer:
    # A BPE model with no merges over a byte-level pre-tokenizer is a character tokenizer
    # that every runtime (tokenizers, transformers, onnxruntime-extensions) understands.
    vocab = {tok: i for i, tok in enumerate([*SPECIALS, *CHARS])}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIALS)
    return tok


#: The user turns' text, concatenated, nothing added: the model was trained on bare prompts.
CHAT_TEMPLATE = ("{% for message in messages %}{% if message['role'] == 'user' %}"
                 "{{ message['content'] }}{% endif %}{% endfor %}")


def tokenizer_config() -> dict[str, object]:
    return {
        "tokenizer_class": "GPT2Tokenizer",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "pad_token": "<pad>",
        "unk_token": "<unk>",
        "add_bos_token": False,
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 64,
        # vLLM (and transformers' apply_chat_template) refuse /v1/chat/completions without
        # one; this is the local engines' render_chat: the user turns' text, concatenated.
        "chat_template": CHAT_TEMPLATE,
    }


def split_pairs() -> tuple[np.ndarray, np.ndarray]:
    n = 10**DIGITS
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a, b = a.ravel(), b.ravel()
    held = ((a * 1000 + b) * 2654435761 % 2**32) % HELDOUT_MODULUS == 0
    pairs = np.stack([a, b], axis=1)
    return pairs[~held], pairs[held]


def encode_pairs(pairs: np.ndarray, char_id: dict[str, int]) -> torch.Tensor:
    """Rows of token ids: prompt (8 chars) + answer (4 chars) + EOS; no BOS, no padding."""
    rows = []
    for a, b in pairs.tolist():
        text = f"{a:0{DIGITS}d}+{b:0{DIGITS}d}={a + b:0{DIGITS + 1}d}"
        rows.append([char_id[c] for c in text] + [EOS_ID])
    return torch.tensor(rows, dtype=torch.long)


@torch.no_grad()
def exact_match(model: LlamaForCausalLM, ids: torch.Tensor, prompt_len: int) -> float:
    """Greedy-decode the answer for each row and compare with the reference (answer + EOS)."""
    model.eval()
    correct = 0
    for chunk in ids.split(500):
        seq = chunk[:, :prompt_len]
        for _ in range(chunk.shape[1] - prompt_len):
            logits = model(input_ids=seq).logits[:, -1, :]
            seq = torch.cat([seq, logits.argmax(-1, keepdim=True)], dim=1)
        correct += int((seq == chunk).all(dim=1).sum())
    model.train()
    return correct / ids.shape[0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--intermediate", type=int, default=0, help="default 4 * hidden")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=1000)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)  # model init only; data sampling has its own generator
    rng = np.random.default_rng(args.seed)

    tok = build_tokenizer()
    char_id = {c: tok.token_to_id(c) for c in CHARS}
    train_pairs, held_pairs = split_pairs()
    prompt_len = 2 * DIGITS + 2
    eval_rng = np.random.default_rng(args.seed + 1)
    held_eval = held_pairs[eval_rng.permutation(len(held_pairs))]
    shipped = held_eval[:N_EVAL_SHIPPED]
    monitor = encode_pairs(held_eval[:2000], char_id)
    final_eval = encode_pairs(held_eval[:10000], char_id)

    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=args.hidden,
        intermediate_size=args.intermediate or 4 * args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads,
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        pad_token_id=PAD_ID,
    )
    model = LlamaForCausalLM(config)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 50)

    def lr_at(step: int) -> float:
        # Linear warm-up, then cosine decay to 10 % of the peak.
        if step < warmup:
            return args.lr * (step + 1) / warmup
        frac = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    history: list[dict[str, float]] = []
    t0 = time.perf_counter()
    model.train()
    for step in range(args.steps):
        batch = encode_pairs(train_pairs[rng.integers(0, len(train_pairs), args.batch)], char_id)
        labels = batch.clone()
        labels[:, :prompt_len] = -100  # learn only the answer and EOS; operands are random
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        loss = model(input_ids=batch, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            acc = exact_match(model, monitor, prompt_len)
            elapsed = time.perf_counter() - t0
            history.append({"step": step + 1, "loss": loss.item(), "heldout_em": acc,
                            "elapsed_s": round(elapsed, 1)})
            print(json.dumps(history[-1]), flush=True)
    train_s = time.perf_counter() - t0
    final_acc = exact_match(model, final_eval, prompt_len)

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    GenerationConfig(
        bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID,
        do_sample=False, max_new_tokens=8,
    ).save_pretrained(out)
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config(), indent=2) + "\n")
    with (out / "heldout.tsv").open("w") as f:
        for a, b in shipped.tolist():
            f.write(f"{a:0{DIGITS}d}+{b:0{DIGITS}d}=\t{a + b:0{DIGITS + 1}d}\n")
    report = {
        "name": args.name,
        "script": "tools/train_tiny.py",
        "argv": sys.argv[1:],
        "seed": args.seed,
        "threads": args.threads,
        "params": n_params,
        "architecture": {"layers": args.layers, "hidden": args.hidden,
                         "intermediate": config.intermediate_size, "heads": args.heads,
                         "vocab": config.vocab_size},
        "data": {"digits": DIGITS, "format": "{a:03d}+{b:03d}={a+b:04d}</s>",
                 "heldout_rule": "((a*1000+b)*2654435761 mod 2^32) mod 20 == 0",
                 "train_pairs": len(train_pairs), "heldout_pairs": len(held_pairs),
                 "samples_seen": args.steps * args.batch},
        "optimizer": {"name": "AdamW", "lr": args.lr, "batch": args.batch,
                      "steps": args.steps, "schedule": "warmup 2% + cosine to 10%",
                      "weight_decay": 0.01, "clip": 1.0},
        "train_s": round(train_s, 1),
        "heldout_em_fp32_torch": final_acc,
        "heldout_em_n": int(final_eval.shape[0]),
        "history": history,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__, "numpy": np.__version__},
        "machine": {"platform": platform.platform(), "cpu": platform.processor() or None},
    }
    (out / "train_report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({"final_heldout_em": final_acc, "train_s": round(train_s, 1)}), flush=True)


if __name__ == "__main__":
    main()
