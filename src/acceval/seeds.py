"""What a seed in a study file may be: a whole number from 0 to 2**32 - 1.

Every dimension derives its own generator from a seed (``numpy.random.SeedSequence``, which
refuses negative numbers, or ``random.Random``); the range is the one both take the same way,
and the one every store of a run (JSON, Parquet, the runs catalog) holds exactly.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

SEED_MAX = 2**32 - 1

Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
"""A seed field: 0..2**32 - 1."""

__all__ = ["SEED_MAX", "Seed"]
