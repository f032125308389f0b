"""How far real systems land from the roofline: published serving measurements (a small,
sourced, dated table, ``acceval/data/calibration/published.yaml``) set beside the planner's
bound for the same cell give "published systems reach X–Y % of this bound", and the plan's
bound times that band is its planned range. Where no published cell is close to a plan's
(model, chip, precision, context), it says so (docs/planning.md)."""

from __future__ import annotations

import functools
import math
from importlib import resources
from typing import Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field

from acceval.claims.roofline import (
    TENSOR,
    Bytes,
    Chip,
    Shape,
    decode_step,
    prefill_step,
    serving_output_tps,
)
from acceval.claims.spec import PRECISION_BYTES, ModelShape
from acceval.results.section import Section


class PublishedCell(Section):
    """One published serving measurement beside the planner's bound for the same cell."""

    id: str
    source: str
    date: str | None = None
    software: str | None = None
    model: str
    hardware: str
    chips: int
    weights: str
    batch: int
    input_tokens: int
    output_tokens: int
    published_tps_chip: float            # as published (output tokens/s per chip)
    bound_tps_chip: float | None = None  # planned serving bound for the same cell
    share: float | None = None           # published / planned
    note: str | None = None


class Calibration(Section):
    """How far published systems land from the bound at a context like this plan's: the
    band of their shares, and the plan's bound times that band (still planned)."""

    cells: list[PublishedCell] = Field(default_factory=list)  # the close cells used
    low: float | None = None
    high: float | None = None
    planned_low_tps_chip: float | None = None
    planned_high_tps_chip: float | None = None
    note: str = ""   # how close the cells are, or why none is


class Context(Protocol):
    """What calibration needs of a planned context (a PlanContextResult is one)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def chips(self) -> int: ...
    @property
    def serving_tps_chip(self) -> float | None: ...

#: A published cell is close to a plan's context when it is the same chip and weight
#: precision, the model is within this factor of parameters, and the whole sequence
#: (input + output) within this factor of the plan's.
PARAMETER_FACTOR = 1.5
LENGTH_FACTOR = 4.0


class Cell(BaseModel):
    """One published measurement, as the table gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    source: str
    date: str | None = None
    software: str | None = None
    note: str | None = None
    model: ModelShape
    hardware: str
    chips: int = Field(ge=1)
    weights: str
    kv_cache: str
    compute: str
    batch: int = Field(ge=1)
    input_tokens: int = Field(ge=1)
    output_tokens: int = Field(ge=1)
    output_tps_per_chip: float = Field(gt=0)


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cells: list[Cell]


@functools.cache
def published() -> tuple[Cell, ...]:
    """The shipped table."""
    text = (resources.files("acceval") / "data" / "calibration" / "published.yaml").read_text(
        encoding="utf-8")
    return tuple(Table.model_validate(yaml.safe_load(text)).cells)


def _shape(m: ModelShape) -> Shape:
    heads = m.heads
    return Shape(m.name, m.parameters, m.layers, m.hidden, heads, m.kv_heads or heads,
                 m.head_dim or m.hidden // heads, m.vocab)


def cell_bound(cell: Cell, chip: Chip) -> float | None:
    """The planner's serving bound per chip for the published cell: its batch's prefills,
    then its decode steps, on ``cell.chips`` chips (tensor parallel)."""
    shape = _shape(cell.model)
    b = Bytes(PRECISION_BYTES[cell.weights], PRECISION_BYTES[cell.kv_cache],
              4.0 if cell.compute == "fp32" else 2.0)
    dec = decode_step(shape, b, chip, cell.chips, cell.batch, cell.input_tokens,
                      cell.output_tokens, 0.0, TENSOR)
    pre = prefill_step(shape, b, chip, cell.chips, cell.input_tokens, 0.0, TENSOR)
    if dec is None or pre is None:
        return None
    return serving_output_tps(cell.batch, cell.output_tokens, pre, dec) / cell.chips


def _row(cell: Cell, chip: Chip) -> PublishedCell:
    bound = cell_bound(cell, chip)
    return PublishedCell(
        id=cell.id, source=cell.source, date=cell.date, software=cell.software,
        model=cell.model.name, hardware=cell.hardware, chips=cell.chips,
        weights=cell.weights, batch=cell.batch, input_tokens=cell.input_tokens,
        output_tokens=cell.output_tokens, published_tps_chip=cell.output_tps_per_chip,
        bound_tps_chip=bound, share=cell.output_tps_per_chip / bound if bound else None,
        note=cell.note)


def _distance(cell: Cell, parameters: float, tokens: int) -> tuple[float, float]:
    return (abs(math.log(cell.model.parameters / parameters)),
            abs(math.log((cell.input_tokens + cell.output_tokens) / tokens)))


def calibrate(ctx: Context, *, hardware: str | None, weights: str,
              parameters: float, chip: Chip, cells: tuple[Cell, ...] | None = None
              ) -> Calibration:
    """The band of published shares for cells close to this context, and the context's
    serving bound times that band; or why no published cell is close."""
    table = published() if cells is None else cells
    tokens = ctx.input_tokens + ctx.output_tokens
    same = [c for c in table if c.hardware == hardware and c.weights == weights]
    if not same:
        return Calibration(note=f"no published cell for {hardware or 'this hardware'} at "
                           f"{weights} weights: no calibration")
    close = [c for c in same if _distance(c, parameters, tokens)[0] <= math.log(PARAMETER_FACTOR)
             and _distance(c, parameters, tokens)[1] <= math.log(LENGTH_FACTOR)]
    if not close:
        near = min(same, key=lambda c: sum(_distance(c, parameters, tokens)))
        return Calibration(note=(
            f"no published cell is close: the nearest ({near.model.name}, "
            f"{near.input_tokens}/{near.output_tokens} tokens, {near.chips} chip(s)) has "
            f"{(near.input_tokens + near.output_tokens) / tokens:.2g}x this context's "
            f"sequence and {near.model.parameters / parameters:.2g}x its parameters "
            f"(close means within {LENGTH_FACTOR:g}x and {PARAMETER_FACTOR:g}x)"))
    rows = [_row(c, chip) for c in close]
    shares = [r.share for r in rows if r.share is not None]
    if not shares:
        return Calibration(cells=rows, note="the planner has no bound for the close cells")
    low, high = min(shares), max(shares)
    bound = ctx.serving_tps_chip
    chips = sorted({r.chips for r in rows})
    note = (f"{len(rows)} published cell(s) within {LENGTH_FACTOR:g}x of this sequence "
            f"length, on {'/'.join(map(str, chips))} chip(s); this plan uses {ctx.chips}")
    return Calibration(cells=rows, low=low, high=high,
                       planned_low_tps_chip=bound * low if bound else None,
                       planned_high_tps_chip=bound * high if bound else None, note=note)


__all__ = ["LENGTH_FACTOR", "PARAMETER_FACTOR", "Calibration", "Cell", "PublishedCell",
           "calibrate", "cell_bound", "published"]
