"""Compile and warm-up seconds per replica start: the one value the bill and the migration
ledger both use, with every other candidate kept beside it.

The rule that picks it (docs/economics.md, "Which compile time is used"):

1. a **declared** value wins: ``targets.*.costs.compile_s``, else
   ``targets.*.portability.compile_s`` (when both are given and differ, ``costs`` wins and a
   note says so);
2. else the **compile log** the study points to (``portability.compile_log``, every match
   summed);
3. else the local server's **measured start-up** (process start until ``/health`` answered).

A declared figure describes the production target (a Neuron compile of 900 s); a local server's
start-up of 0.24 s measures something else, so it never replaces a declaration. The candidates
that were not chosen stay in :class:`CompileTime`, each with its provenance, so the bill and
the ledger show them beside the chosen one. Pure: the caller reads the log
(:func:`acceval.portability.ledger.compile_time_for`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, computed_field

from acceval.economics.provenance import MISSING, SourcedValue, assumed, measured
from acceval.results.section import Section
from acceval.units import number

Basis = Literal["declared", "log", "measured", "missing"]

#: The precedence, as written in every note that explains a choice.
COMPILE_RULE = "declared > compile log > measured start-up"

_LABELS: dict[Basis, str] = {"declared": "declared", "log": "compile log",
                             "measured": "measured start-up", "missing": "missing"}

STARTUP_SOURCE = ("local server start-up: process start until /health answered "
                  "(load, compile, warm-up; this run)")


class CompileTime(Section):
    """The chosen compile seconds per start (``chosen``, the same object as the candidate it
    came from) and every candidate, each ``MISSING`` when it gave nothing."""

    chosen: SourcedValue
    basis: Basis
    declared: SourcedValue = MISSING
    from_log: SourcedValue = MISSING
    measured: SourcedValue = MISSING
    notes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def value(self) -> float | None:
        return self.chosen.value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rule(self) -> str:
        return COMPILE_RULE

    @property
    def beside(self) -> tuple[tuple[str, SourcedValue], ...]:
        """The candidates with a value that were not chosen, by name."""
        named = ((_LABELS["declared"], self.declared), (_LABELS["log"], self.from_log),
                 (_LABELS["measured"], self.measured))
        return tuple((n, s) for n, s in named if s.value is not None and s is not self.chosen)

    @property
    def explanation(self) -> str:
        """One sentence: what was used, what stands beside it, and the rule."""
        if self.chosen.value is None:
            text = "no compile time: declare compile_s, point portability.compile_log at a " \
                   "log, or run a local server (its start-up is measured)"
        else:
            text = (f"{_LABELS[self.basis]} {number(self.chosen.value)} s used "
                    f"({self.chosen.source})")
            if self.beside:
                text += "; beside it: " + ", ".join(f"{n} {number(s.value)} s"
                                                    for n, s in self.beside)
        text += f". Rule: {COMPILE_RULE}."
        return " ".join((text, *self.notes))



def declared_compile_s(target: str, costs_s: float | None,
                       portability_s: float | None) -> tuple[SourcedValue, tuple[str, ...]]:
    """The declared compile seconds of ``target`` and a note when its two declarations differ."""
    notes: tuple[str, ...] = ()
    if costs_s is not None:
        if portability_s is not None and portability_s != costs_s:
            notes = (f"targets.{target}.portability.compile_s ({portability_s:g} s) differs "
                     f"from costs.compile_s ({costs_s:g} s); costs.compile_s is used.",)
        return assumed(costs_s, f"study file: targets.{target}.costs.compile_s"), notes
    if portability_s is not None:
        return assumed(portability_s, f"study file: targets.{target}.portability.compile_s"), ()
    return MISSING, ()


def startup_compile_s(startup_s: float | None) -> SourcedValue:
    """The local server's measured start-up as a compile-time candidate."""
    return MISSING if startup_s is None else measured(startup_s, STARTUP_SOURCE)


def resolve_compile_time(*, declared: SourcedValue = MISSING, from_log: SourcedValue = MISSING,
                         measured: SourcedValue = MISSING, notes: tuple[str, ...] = ()
                         ) -> CompileTime:
    """Apply the rule (module docstring) to the three candidates."""
    basis: Basis
    for basis, s in (("declared", declared), ("log", from_log), ("measured", measured)):
        if s.value is not None:
            return CompileTime(chosen=s, basis=basis, declared=declared, from_log=from_log,
                               measured=measured, notes=notes)
    return CompileTime(chosen=MISSING, basis="missing", declared=declared, from_log=from_log,
                       measured=measured, notes=notes)
