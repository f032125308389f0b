"""Synthetic prompts of exact token lengths under the target's own tokenizer.

Text is random tokens of the tokenizer's vocabulary (special and added tokens excluded),
decoded, encoded again and corrected until the text encodes to exactly the length asked for
(a BPE tokenizer may merge tokens across the joins, or split a decoded one). The check is the
tokenizer's own ``encode`` of the final text without special tokens, so a length is exact by
construction, not by estimate; a text that cannot be fixed in a few rounds is an error naming
the tokenizer.

Randomness: one ``numpy.random.Generator`` per dimension, spawned from ``tasks.seed``: the
lengths, the prefixes, and the prompt text, so changing an output length never changes a
prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acceval.errors import StudyError
from acceval.tasks._task import Task
from acceval.tasks.spec import Synthetic, TokenLengths

# Spawn-key slots of the synthetic source's random dimensions.
_LENGTHS, _PREFIXES, _TEXT = 0, 1, 2
_FIX_ROUNDS = 50


@dataclass(frozen=True, slots=True)
class TextTokenizer:
    """A ``tokenizers.Tokenizer`` and the ids random text is drawn from."""

    tokenizer: Any
    pool: np.ndarray[Any, np.dtype[np.int64]]
    source: str

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer.encode(text, add_special_tokens=False).ids
        return ids

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        text: str = self.tokenizer.decode(list(ids), skip_special_tokens=False)
        return text


def tokenizer_path(spec: str, base_dir: Path) -> Path:
    """The tokenizer.json that ``tasks.tokenizer`` names (``builtin:NAME`` or a path)."""
    if spec.startswith("builtin:"):
        from acceval.errors import UsageError
        from acceval.models import resolve_model

        try:
            art = resolve_model(spec)
        except UsageError as exc:
            raise StudyError("tasks.tokenizer: no such model", [
                ("tasks.tokenizer", str(exc), "give builtin:NAME or a tokenizer.json path")]
            ) from None
        path = (art.hf_dir or art.root) / "tokenizer.json"
    else:
        path = Path(spec).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        if path.is_dir():
            path = path / "tokenizer.json"
    if not path.is_file():
        raise StudyError("tasks.tokenizer: no tokenizer file", [
            ("tasks.tokenizer", f"{path} is not a file",
             "give the model's tokenizer.json (Hugging Face format) or its folder")])
    return path


def load_tokenizer(spec: str, base_dir: Path) -> TextTokenizer:
    path = tokenizer_path(spec, base_dir)
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise StudyError("tasks.tokenizer needs the 'tokenizers' package", [
            ("tasks.tokenizer", "the tokenizers package is not installed",
             "pip install 'acceval[local]'")]) from None
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises its own exception type for a bad file
        raise StudyError("tasks.tokenizer: not a tokenizer file", [
            ("tasks.tokenizer", f"{path} cannot be read as a tokenizer.json ({exc})",
             "give a Hugging Face tokenizer.json")]) from None
    special = {t.content for t in tok.get_added_tokens_decoder().values()}
    ids = sorted(i for s, i in tok.get_vocab().items() if s not in special)
    # A token whose text encodes back to itself alone; the batch calls keep a large
    # vocabulary (128k) to a second or so.
    texts = tok.decode_batch([[i] for i in ids], skip_special_tokens=False)
    again = tok.encode_batch(texts, add_special_tokens=False)
    pool = [i for i, text, enc in zip(ids, texts, again, strict=True)
            if text and enc.ids == [i]]
    if not pool:
        raise StudyError("tasks.tokenizer: no plain tokens", [
            ("tasks.tokenizer", f"{path} has no token that decodes and encodes back to itself",
             "give the tokenizer of a text model")])
    return TextTokenizer(tok, np.asarray(pool, dtype=np.int64), str(path))


def exact_text(tok: TextTokenizer, n: int, rng: np.random.Generator, *,
               after: str = "", context: str = "") -> str:
    """Random text that adds exactly ``n`` tokens after ``after``: ``count(after + text)``
    is ``count(after) + n`` and the tokens of ``after`` stay as they were (a shared prefix
    stays a prefix of the ids). ``context`` names the task in an error."""
    base = tok.encode(after) if after else []
    ids = rng.choice(tok.pool, n).tolist()
    for _ in range(_FIX_ROUNDS):
        text = tok.decode(ids)
        got = tok.encode(after + text)
        if got[: len(base)] == base:
            mine = got[len(base):]
            if len(mine) == n:
                return text
            ids = mine[:n] if len(mine) > n else mine + rng.choice(tok.pool, n - len(mine)).tolist()
        else:  # the text merged into the prefix's last token: start it afresh
            ids = rng.choice(tok.pool, n).tolist()
    raise StudyError(f"synthetic prompts: cannot make {n} tokens of text under {tok.source}"
                     f"{' for ' + context if context else ''}", [
        ("tasks.tokenizer", "random text does not settle at the length asked for",
         "use the tokenizer of a text model, or another tasks.seed")])


def draw_lengths(spec: TokenLengths, count: int, rng: np.random.Generator) -> list[int]:
    """``count`` lengths from ``spec`` (integers >= 1)."""
    if spec.dist == "fixed":
        assert spec.mean is not None
        return [spec.mean] * count
    if spec.dist == "uniform":
        assert spec.min is not None and spec.max is not None
        return [int(v) for v in rng.integers(spec.min, spec.max + 1, count)]
    assert spec.mean is not None
    raw = np.rint(rng.normal(spec.mean, spec.stddev, count))
    low = spec.min if spec.min is not None else 1
    high = spec.max if spec.max is not None else np.inf
    return [int(v) for v in np.clip(raw, low, high)]


def synthetic_tasks(spec: Synthetic, tok: TextTokenizer, *, count: int, seed: int) -> list[Task]:
    """``count`` unchecked tasks: prompt ``i`` is prefix ``i mod prefix_groups`` (when
    ``prefix_tokens``) then its own ``input_tokens``; each asks for its ``output_tokens``."""
    root = np.random.SeedSequence(seed)
    lengths_rng, prefix_rng, text_rng = (np.random.default_rng(s) for s in root.spawn(3))
    ins = draw_lengths(spec.input_tokens, count * spec.turns, lengths_rng)
    outs = draw_lengths(spec.output_tokens, count, lengths_rng)
    prefixes = ([exact_text(tok, spec.prefix_tokens, prefix_rng, context=f"prefix {g}")
                 for g in range(min(spec.prefix_groups, count))] if spec.prefix_tokens else [""])
    tasks = []
    for i in range(count):
        prefix = prefixes[i % len(prefixes)]
        first = prefix + exact_text(tok, ins[i * spec.turns], text_rng, after=prefix,
                                    context=f"synthetic-{i}")
        later = tuple(exact_text(tok, ins[i * spec.turns + k], text_rng,
                                 context=f"synthetic-{i} turn {k}")
                      for k in range(1, spec.turns))
        meta = {"input_tokens": ins[i * spec.turns] + spec.prefix_tokens,
                "output_tokens": outs[i], "prefix_group": i % len(prefixes)}
        tasks.append(Task(id=f"synthetic-{i}", prompt=first, messages=(("user", first),),
                          reference="", checker=None, meta=meta, max_tokens=outs[i],
                          ignore_eos=spec.ignore_eos, turns=later))
    return tasks
