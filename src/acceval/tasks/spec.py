"""The study-file section the tasks own: ``tasks``, where prompts come from. Validated at the
edge like the rest of the study (``extra="forbid"``, frozen); docs/tasks.md explains it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Tasks(BaseModel):
    """Where prompts come from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(
        "builtin:arithmetic",
        description="builtin:NAME (a generator), jsonl:PATH (your tasks) or text:PROMPT "
        "(one fixed prompt, no checking).",
    )
    count: int = Field(100, ge=1, description="Number of tasks to draw.")
    seed: int = Field(0, description="Seed for task generation and sampling order.")
    max_tokens: int = Field(64, ge=1, description="max_tokens sent with each request.")
    attempts: int = Field(1, ge=1, description="Attempts per task (pass@1, cost of pass).")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Generator knobs (difficulty), see docs/tasks.md."
    )
