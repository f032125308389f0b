"""Evidence: what every portability claim rests on, and the verdict vocabulary.

A ledger entry, a level verdict or an exit-test answer carries one :class:`Evidence`: a file
that was read, a command that was run, a measurement from this run, a URL or document quote,
or ``declared`` (the user said so in the study file; nothing here checked it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from acceval.results.section import Section

EvidenceKind = Literal["file", "command", "measurement", "url", "declared"]
Verdict = Literal["pass", "fail", "not assessed"]


class Evidence(Section):
    """What a portability finding rests on: a file, a command, a measurement, a URL or the
    study's own declaration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EvidenceKind
    detail: str                 # the path, command line, what was measured, or the URL
    quote: str | None = None    # a short excerpt of the document, when there is one


def declared(note: str = "study file") -> Evidence:
    return Evidence(kind="declared", detail=note)


def from_reference(ref: str | None, quote: str | None = None) -> Evidence | None:
    """Evidence for a URL or a document path the user cited; None when nothing was cited."""
    if not ref:
        return None
    kind: EvidenceKind = "url" if ref.startswith(("http://", "https://")) else "file"
    return Evidence(kind=kind, detail=ref, quote=quote)
