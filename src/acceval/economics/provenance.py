"""Provenance: every economic or energy input says where its value came from.

``measured`` values come from this run's records or probes, ``catalog`` values from the
shipped or user hardware/price catalog (with source and date), ``assumption`` values from
the study file or a documented default, ``estimated`` values stand in for a measurement that
was not made (device energy from TDP x time, CPU time x watts per core), and ``derived``
values are computed from others. Missing is ``None``, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Origin = Literal["measured", "catalog", "assumption", "derived", "estimated"]


@dataclass(frozen=True, slots=True)
class Sourced:
    """A number and where it came from."""

    value: float | None
    origin: Origin
    source: str | None = None
    date: str | None = None

    def with_value(self, value: float | None, note: str) -> Sourced:
        """The same input swung to another value (sensitivity); the note says why."""
        return Sourced(value, "assumption", note, None)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "origin": self.origin, "source": self.source,
                "date": self.date}


def measured(value: float | None, source: str = "this run") -> Sourced:
    return Sourced(None if value is None else float(value), "measured", source)


def assumed(value: float | None, source: str = "study file") -> Sourced:
    return Sourced(None if value is None else float(value), "assumption", source)


def from_catalog(value: float | None, source: str, date: str | None) -> Sourced:
    return Sourced(None if value is None else float(value), "catalog", source, date)


MISSING = Sourced(None, "assumption", "not declared")
