"""The study-file section the tasks own: ``tasks``, where prompts come from. Validated at the
edge like the rest of the study (``extra="forbid"``, frozen); docs/tasks.md explains it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acceval.seeds import Seed


class Tasks(BaseModel):
    """Where prompts come from."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    source: str = Field(
        "builtin:arithmetic",
        description="builtin:NAME (a generator), jsonl:PATH (your tasks) or text:PROMPT "
        "(one fixed prompt, no checking).",
    )
    count: int = Field(100, ge=1, le=1_000_000, description="Number of tasks to draw "
                       "(at most 1,000,000: every task is held in memory).")
    seed: Seed = Field(0, description="Seed for task generation and sampling order; "
                       "0..2**32-1.")
    max_tokens: int = Field(64, ge=1, le=1_000_000,
                            description="max_tokens sent with each request.")
    attempts: int = Field(1, ge=1, le=1_000,
                          description="Attempts per task (pass@1, cost of pass).")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Generator knobs (difficulty), see docs/tasks.md."
    )
