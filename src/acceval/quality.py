"""The study's quality level, applied to measured accuracy (MLPerf-style gates)."""

from __future__ import annotations

from pydantic import Field

from acceval.metrics import Accuracy
from acceval.metrics.spec import Quality
from acceval.results.section import Section
from acceval.units import number


class Gate(Section):
    """The study's quality level applied to one target."""

    passed: bool | None  # None: no quality level was set, or no correctness information
    required_accuracy: float | None
    reasons: list[str] = Field(default_factory=list)




def evaluate_gate(
    quality: Quality,
    acc: Accuracy | None,
    *,
    reference: Accuracy | None = None,
    mean_output_tokens: float | None = None,
) -> Gate:
    """Whether one target meets the quality level; ``passed`` is None when no level applies."""
    required: list[float] = []
    if quality.min_accuracy is not None:
        required.append(quality.min_accuracy)
    if quality.relative_to is not None and reference is not None and reference.accuracy is not None:
        required.append(quality.relative_fraction * reference.accuracy)
    needs_tokens = quality.min_output_tokens is not None
    if not required and not needs_tokens:
        return Gate(passed=None, required_accuracy=None)
    bar = max(required) if required else None
    reasons: list[str] = []
    if bar is not None:
        if acc is None or acc.accuracy is None:
            unchecked = acc is not None and getattr(acc, "unscored", 0) > 0
            reasons.append("no correctness information (the task set has no checker)"
                           if unchecked else
                           "no correctness information (no answer was measured)")
        elif acc.accuracy < bar:
            reasons.append(f"accuracy {number(100 * acc.accuracy)}% < required "
                           f"{number(100 * bar)}%")
    if needs_tokens:
        floor = quality.min_output_tokens
        if mean_output_tokens is None:
            reasons.append("no output token counts")
        elif floor is not None and mean_output_tokens < floor:
            reasons.append(f"mean output tokens {mean_output_tokens:.1f} < floor {floor:.1f}")
    return Gate(passed=not reasons, required_accuracy=bar, reasons=reasons)
