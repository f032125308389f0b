"""The base every result section stands on: ``Section``, ``SourcedValue`` and one load
point's result (``PointResult``, its repeats, an imported peer's own figures).

Each concept defines its own section on this base, in the concept, and its pure function
returns it (one type: no dataclass twin, no dictionary in between); ``run_result`` composes
them into the :class:`~acceval.run_result.RunResult` that every renderer reads by attribute.
The JSON form is ``result.json``.

Missing is ``None``; an infinite cost (nothing passed) is stored as ``Infinity``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from acceval.metrics import PointSummary
from acceval.metrics.repeats import RepeatInterval


class Section(BaseModel):
    """A result section: strict about fields, and JSON round-trippable. Values derived from
    the fields (``@computed_field`` properties) are written to ``result.json`` for readers of
    the file and recomputed, not read back, when it is loaded."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants", defer_build=True)

    #: Fields older result.json files carry that this version no longer has: read and dropped.
    retired: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _derived_are_recomputed(cls, data: Any) -> Any:
        drop = cls.model_computed_fields.keys() | cls.retired
        if drop and isinstance(data, dict) and drop & data.keys():
            return {k: v for k, v in data.items() if k not in drop}
        return data


#: Where a number came from (docs/economics.md, "Provenance").
Origin = Literal["measured", "catalog", "assumption", "derived", "estimated"]


class SourcedValue(Section):
    """A number and where it came from: measured, catalog, assumption, derived or estimated."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants",
                              defer_build=True)

    value: float | None
    origin: Origin
    source: str | None = None
    date: str | None = None

    def with_value(self, value: float | None, note: str) -> SourcedValue:
        """The same input swung to another value (sensitivity); the note says why."""
        return SourcedValue(value=value, origin="assumption", source=note)


class PeerFigures(Section):
    """What a peer tool (vLLM bench, GuideLLM, AIPerf) computed itself for an imported point,
    under the peer's own names (``mean_ttft_ms``, ``time_to_first_token_ms.p99``). acceval
    recomputes its own summary from the imported requests; these stay beside it, labelled
    peer-computed. ``summary_only``: the file held no per-request data, so these figures are
    all there is for the point (acceval's own summary of it is empty)."""

    tool: str
    version: str | None = None
    file: str
    figures: dict[str, float | None] = Field(default_factory=dict)
    summary_only: bool = False


class PointResult(Section):
    """One load point of one target: what was asked, what the generator did, what it measured."""

    index: int
    label: str
    kind: str
    level: float
    requested_rate_rps: float | None
    stopped_by: str
    sent: int
    completed: int
    started_ns: int
    ended_ns: int
    seeds: dict[str, Any] = Field(default_factory=dict)  # numpy SeedSequence states
    summary: PointSummary
    repeat: int = 0  # 0: the point's first run; n: its n-th repeat (load[].repeats)
    peer: PeerFigures | None = None  # an imported point: the peer tool's own figures
    task_set: int = 0  # the task set it sent (tasks.per_point; the same on every target)

    @property
    def trusted(self) -> bool:
        """The load generator kept its schedule: the point may enter capacity and the verdict."""
        return self.summary.trusted


class RepeatsResult(Section):
    """One load point measured ``repeats`` times: the t-interval of each statistic over the
    repeats' values (docs/metrics.md, "Repeats"). The first run is the point in
    ``TargetResult.points`` (the one capacity, the bill and the verdict use); the others are
    ``points`` here, each a whole load point of its own."""

    label: str  # the first run's label
    index: int  # the first run's load index
    runs: int  # how many runs (first + repeats) measured it
    labels: list[str]
    ttft_p50_ms: RepeatInterval
    ttft_p95_ms: RepeatInterval
    ttft_p99_ms: RepeatInterval
    e2e_p95_ms: RepeatInterval
    request_throughput_rps: RepeatInterval
    output_token_throughput_tps: RepeatInterval
    points: list[PointResult] = Field(default_factory=list)  # the repeats after the first
