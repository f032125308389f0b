"""Study-file sections the metrics own: the latency objectives (``slo``) and the quality level
(``quality``) a target's measured numbers are held to.

Validated at the edge like the rest of the study (``extra="forbid"``, frozen). How a point is
judged against the SLO: :mod:`acceval.metrics.point`; the quality gate:
:mod:`acceval.quality`; formulas in docs/metrics.md.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SLO(_Model):
    """Service-level objectives. A request is *good* when it meets every threshold given;
    a load point *meets the SLO* when the chosen percentile of each metric does."""

    ttft_ms: float | None = Field(None, gt=0, description="Time to first token bound.")
    tpot_ms: float | None = Field(None, gt=0, description="Time per output token bound.")
    e2e_ms: float | None = Field(None, gt=0, description="End-to-end latency bound.")
    percentile: float = Field(95.0, gt=0, le=100, description="Percentile held to the bounds.")
    max_error_rate: float = Field(0.01, ge=0, le=1, description="Most errors a point may have.")


class Quality(_Model):
    """The quality level a target must reach for its answers to count."""

    min_accuracy: float | None = Field(None, ge=0, le=1, description="Absolute accuracy floor.")
    relative_to: str | None = Field(
        None, description="Reference target name: accuracy must be >= relative_fraction of it."
    )
    relative_fraction: float = Field(0.99, gt=0, le=1, description="MLPerf-style 99%.")
    min_output_tokens: float | None = Field(
        None, ge=0, description="Floor on mean output tokens per request (MLPerf-style)."
    )
    fail_exit: bool = Field(False, description="`acceval run` exits 3 when a target fails.")
    min_point_requests: int = Field(
        20, ge=1, description="Measured requests a load point needs before the verdict may use "
        "it as an operating point (fewer say too little about its latency and cost)."
    )
