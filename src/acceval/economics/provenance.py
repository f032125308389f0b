"""Provenance: every economic or energy input says where its value came from.

``measured`` values come from this run's records or probes, ``catalog`` values from the
shipped or user hardware/price catalog (with source and date), ``assumption`` values from
the study file or a documented default, ``estimated`` values stand in for a measurement that
was not made (device energy from TDP x time, CPU time x watts per core), and ``derived``
values are computed from others. Missing is ``None``, never 0.
"""

from __future__ import annotations

from acceval.results.section import Origin, SourcedValue

__all__ = ["MISSING", "Origin", "SourcedValue", "assumed", "from_catalog", "measured"]


def measured(value: float | None, source: str = "this run") -> SourcedValue:
    return SourcedValue(value=None if value is None else float(value), origin="measured",
                       source=source)


def assumed(value: float | None, source: str = "study file") -> SourcedValue:
    return SourcedValue(value=None if value is None else float(value), origin="assumption",
                       source=source)


def from_catalog(value: float | None, source: str, date: str | None) -> SourcedValue:
    return SourcedValue(value=None if value is None else float(value), origin="catalog",
                       source=source, date=date)


MISSING = SourcedValue(value=None, origin="assumption", source="not declared")
