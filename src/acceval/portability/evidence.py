"""Evidence: what every portability claim rests on, and the verdict vocabulary.

A ledger entry, a level verdict or an exit-test answer carries one :class:`Evidence`: a file
that was read, a command that was run, a measurement from this run, a URL or document quote,
or ``declared`` (the user said so in the study file; nothing here checked it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from acceval.results.section import Section


class EvidenceResult(Section):
    kind: str
    detail: str
    quote: str | None = None



EvidenceKind = Literal["file", "command", "measurement", "url", "declared"]
Verdict = Literal["pass", "fail", "not assessed"]


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: EvidenceKind
    detail: str                 # the path, command line, what was measured, or the URL
    quote: str | None = None    # a short excerpt of the document, when there is one

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "quote": self.quote}


def declared(note: str = "study file") -> Evidence:
    return Evidence("declared", note)


def from_reference(ref: str | None, quote: str | None = None) -> Evidence | None:
    """Evidence for a URL or a document path the user cited; None when nothing was cited."""
    if not ref:
        return None
    kind: EvidenceKind = "url" if ref.startswith(("http://", "https://")) else "file"
    return Evidence(kind, ref, quote)
