"""Timestamped traces as tasks: the mooncake JSONL format that vLLM bench, AIPerf and GuideLLM
replay.

One request per line::

    {"timestamp": 27482, "input_length": 655, "output_length": 52, "hash_ids": [46, 47]}

``timestamp`` is the send time in milliseconds from the trace's start, ``input_length`` and
``output_length`` are token counts, and each of ``hash_ids`` names a block of
:data:`BLOCK_TOKENS` prompt tokens: requests that share a hash id share that block's text,
so a server's prefix cache sees the trace's reuse. Prompts are cut to ``input_length`` exactly
under ``tasks.tokenizer`` (the last block is partial when the length says so, and a length
beyond the blocks is filled with text of its own); each task asks for ``output_length`` tokens
with ``ignore_eos``. The load family ``trace_speed`` sends each task at its timestamp.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from acceval.errors import StudyError
from acceval.input_files import JSONL_MAX_BYTES, read_text
from acceval.tasks._synthetic import TextTokenizer, exact_text
from acceval.tasks._task import Task

#: Tokens per hash block, as in the Mooncake traces.
BLOCK_TOKENS = 512
_FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")


def _line(data: Any, where: str) -> tuple[float, int, int, list[int]]:
    if not isinstance(data, dict):
        raise StudyError(f"{where}: not a trace line", [(where, "expected a JSON object", "")])
    problems = [(f"{where}:{k}", "unknown field", f"allowed: {', '.join(_FIELDS)}")
                for k in data if k not in _FIELDS]
    ts, n_in, n_out = data.get("timestamp"), data.get("input_length"), data.get("output_length")
    hashes = data.get("hash_ids", [])
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not 0 <= ts < 1e12:
        problems.append((f"{where}:timestamp", "expected milliseconds >= 0", ""))
    for key, v in (("input_length", n_in), ("output_length", n_out)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1_000_000:
            problems.append((f"{where}:{key}", "expected a token count 1..1,000,000", ""))
    if not isinstance(hashes, list) or any(isinstance(h, bool) or not isinstance(h, int)
                                           for h in hashes):
        problems.append((f"{where}:hash_ids", "expected a list of integers", ""))
    if problems:
        raise StudyError(f"{where}: {len(problems)} problem(s) in the trace", problems)
    assert isinstance(ts, int | float) and isinstance(n_in, int) and isinstance(n_out, int)
    return float(ts), n_in, n_out, list(hashes)


class _Blocks:
    """The text of each hash block, made once, the first time a request uses it."""

    def __init__(self, tok: TextTokenizer, rng: np.random.Generator) -> None:
        self.tok, self.rng = tok, rng
        self.text: dict[int, str] = {}

    def prompt(self, hashes: list[int], n: int, where: str) -> str:
        full = n // BLOCK_TOKENS
        parts: list[str] = []
        for h in hashes[:full]:
            if h not in self.text:
                self.text[h] = exact_text(self.tok, BLOCK_TOKENS, self.rng,
                                          after=parts[-1] if parts else "", context=where)
            parts.append(self.text[h])
        missing = n - BLOCK_TOKENS * len(parts)
        head = "".join(parts)
        if missing:
            # The partial last block, or text past the trace's blocks: the request's own.
            head += exact_text(self.tok, missing, self.rng, after=head, context=where)
        if self.tok.count(head) != n and parts:  # a join between blocks merged: redo the tail
            head = "".join(parts[:-1])
            left = n - self.tok.count(head)
            if left > 0:
                head += exact_text(self.tok, left, self.rng, after=head, context=where)
        if self.tok.count(head) != n:
            raise StudyError(f"{where}: cannot make a prompt of exactly {n} tokens", [
                ("tasks.tokenizer", f"the blocks of {where} do not join to {n} tokens under "
                 f"{self.tok.source}", "use the tokenizer of a text model")])
        return head


def read_trace(path: Path, *, limit: int, tok: TextTokenizer, seed: int) -> list[Task]:
    """The first ``limit`` requests of a mooncake trace as tasks, in timestamp order."""
    text = read_text(path, max_bytes=JSONL_MAX_BYTES, where="tasks.source", what="trace file")
    rows = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path.name}:{lineno}"
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise StudyError(f"{where}: not valid JSON ({exc})", [
                (where, "not a JSON object", "one request per line")]) from None
        rows.append((where, *_line(data, where)))
        if len(rows) >= limit:
            break
    if not rows:
        raise StudyError(f"{path}: the trace has no requests")
    rows.sort(key=lambda r: r[1])
    start = rows[0][1]
    blocks = _Blocks(tok, np.random.default_rng(np.random.SeedSequence(seed)))
    tasks = []
    for i, (where, ts, n_in, n_out, hashes) in enumerate(rows):
        prompt = blocks.prompt(hashes, n_in, where)
        tasks.append(Task(id=f"trace-{i}", prompt=prompt, messages=(("user", prompt),),
                          reference="", checker=None, max_tokens=n_out, ignore_eos=True,
                          at_ms=ts - start,
                          meta={"input_tokens": n_in, "output_tokens": n_out,
                                "timestamp_ms": ts, "hash_ids": hashes}))
    return tasks
