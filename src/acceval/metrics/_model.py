"""The base of every metrics model that goes into the result JSON."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class MetricModel(BaseModel):
    """Frozen, strict about fields, and JSON round-trippable.

    ``ser_json_inf_nan="strings"`` writes ``inf`` as ``"Infinity"``: the one infinite value we
    emit (expected attempts per correct answer at zero accuracy) must survive a round trip
    instead of turning into ``null``, which would read back as "missing".
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")
