"""The study-file section the tasks own: ``tasks``, where prompts come from. Validated at the
edge like the rest of the study (``extra="forbid"``, frozen); docs/tasks.md explains it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from acceval.seeds import Seed

#: Longest prompt or answer a synthetic task may ask for, in tokens.
MAX_LENGTH_TOKENS = 1_000_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _fixed_length(v: Any) -> Any:
    # `input_tokens: 1024` is the common case: a fixed length.
    if isinstance(v, int) and not isinstance(v, bool):
        return {"dist": "fixed", "mean": v}
    return v


class TokenLengths(_Model):
    """A token-length distribution, drawn once per task with the task seed: a number (fixed),
    or {dist: uniform, min, max} or {dist: normal, mean, stddev[, min, max]} (rounded, and
    clipped to [min, max], min defaulting to 1)."""

    dist: Literal["fixed", "uniform", "normal"] = Field(
        "fixed", description="fixed (mean), uniform (min..max, inclusive) or normal.")
    mean: int | None = Field(None, ge=1, le=MAX_LENGTH_TOKENS,
                             description="fixed: the length; normal: the mean.")
    stddev: float = Field(0.0, ge=0, description="normal: the standard deviation, in tokens.")
    min: int | None = Field(None, ge=1, le=MAX_LENGTH_TOKENS,
                            description="uniform: the smallest length; normal: clip below.")
    max: int | None = Field(None, ge=1, le=MAX_LENGTH_TOKENS,
                            description="uniform: the largest length; normal: clip above.")

    @model_validator(mode="after")
    def _complete(self) -> TokenLengths:
        if self.dist in ("fixed", "normal") and self.mean is None:
            raise ValueError(f"a {self.dist} length needs `mean`")
        if self.dist == "uniform" and (self.min is None or self.max is None):
            raise ValueError("a uniform length needs `min` and `max`")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("min is larger than max")
        return self

    @property
    def largest(self) -> int:
        """The longest length this distribution can draw."""
        if self.dist == "fixed":
            assert self.mean is not None
            return self.mean
        if self.max is not None:
            return self.max
        assert self.mean is not None
        return int(self.mean + 6 * self.stddev) + 1


Lengths = Annotated[TokenLengths, BeforeValidator(_fixed_length)]


class Synthetic(_Model):
    """Prompts of exact token lengths under ``tasks.tokenizer`` (random text, no checker), the
    peers' `random` data set: `input_tokens` and `output_tokens` per task, an optional shared
    prefix, and several turns per conversation."""

    input_tokens: Lengths = Field(description="Prompt length in tokens (of the text, see "
                                  "docs/tasks.md for what a chat template adds).")
    output_tokens: Lengths = Field(description="Requested output length: max_tokens of each "
                                   "request (and with ignore_eos, what the server generates).")
    ignore_eos: bool = Field(True, description="Send ignore_eos, so that the server generates "
                             "exactly output_tokens.")
    prefix_tokens: int = Field(0, ge=0, le=MAX_LENGTH_TOKENS, description="A prefix of this "
                               "many tokens shared by the prompts of a group, before their own "
                               "input_tokens (a prefix-cache workload).")
    prefix_groups: int = Field(1, ge=1, le=1_000_000, description="Distinct shared prefixes; "
                               "task i uses prefix i mod prefix_groups.")
    turns: int = Field(1, ge=1, le=1_000, description="User turns per conversation: each later "
                       "turn is a new input_tokens message sent with the history and the "
                       "target's earlier answers.")


class Tasks(_Model):
    """Where prompts come from."""

    source: str = Field(
        "builtin:arithmetic",
        description="builtin:NAME (a generator), jsonl:PATH (your tasks), text:PROMPT "
        "(one fixed prompt, no checking), synthetic (exact-length prompts, see `synthetic`), "
        "sharegpt:PATH (ShareGPT or OpenAI-messages conversations, JSON or JSONL) or "
        "mooncake:PATH (a timestamped trace, replayed with load `trace_speed`).",
    )
    count: int = Field(100, ge=1, le=1_000_000, description="Number of tasks to draw "
                       "(at most 1,000,000: every task is held in memory).")
    seed: Seed = Field(0, description="Seed for task generation and sampling order; "
                       "0..2**32-1.")
    max_tokens: int = Field(64, ge=1, le=1_000_000,
                            description="max_tokens sent with each request (unless the task "
                            "asks for its own output length: synthetic, mooncake).")
    attempts: int = Field(1, ge=1, le=1_000,
                          description="Attempts per task (pass@1, cost of pass).")
    per_point: Literal["fresh", "same"] = Field(
        "fresh", description="fresh: each load point sends tasks of its own (drawn anew with "
        "a seed of the point's, or the next `count` of a file), the same on every target, so "
        "that no server's prefix cache holds a point's prompts from an earlier point; same: "
        "every point sends the same tasks (a warm cache is then part of what is measured).")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Generator knobs (difficulty), see docs/tasks.md."
    )
    tokenizer: str | None = Field(
        None, description="The target's tokenizer: builtin:NAME (a shipped model's) or the path "
        "of a Hugging Face tokenizer.json (relative to the study file). Synthetic and mooncake "
        "prompts are cut to exact lengths under it.")
    synthetic: Synthetic | None = Field(
        None, description="Lengths of the `synthetic` source's prompts and answers.")
    multi_turn: bool = Field(
        False, description="sharegpt: replay every user turn of a conversation, each with the "
        "history and the target's own earlier answers (default: the first user turn only).")

    @model_validator(mode="after")
    def _sections(self) -> Tasks:
        scheme = self.source.partition(":")[0].strip()
        if scheme == "synthetic" and self.synthetic is None:
            raise ValueError("source synthetic needs a `synthetic` section, e.g. "
                             "{input_tokens: 1024, output_tokens: 128}")
        if self.synthetic is not None and scheme != "synthetic":
            raise ValueError("`synthetic` applies to source: synthetic only; remove it or set "
                             "the source")
        if scheme in ("synthetic", "mooncake") and self.tokenizer is None:
            raise ValueError(f"source {scheme} needs `tokenizer` (builtin:NAME or a "
                             "tokenizer.json path) to make prompts of exact token lengths")
        if self.multi_turn and scheme != "sharegpt":
            raise ValueError("multi_turn applies to sharegpt sources; a synthetic conversation "
                             "sets synthetic.turns")
        return self
