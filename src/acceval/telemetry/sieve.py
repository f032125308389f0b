"""Keeps, of a ``/metrics`` text, only the lines of families acceval maps, before any parsing.

A vLLM page is ~50 KB, mostly histogram buckets and HTTP, process and Python families that
acceval does not read; parsing it whole with prometheus-client takes 10-13 ms of the
interpreter (45 ms on a loaded 2-core host), held by the scrape thread while the load
generator stamps requests. The sieve looks at each line's metric name only (a split, no
parse): comment lines of kept families and their samples go on to the parser, the rest is
dropped and its family names reported as unmapped. Bucket lines are dropped too: acceval
reads a histogram's ``_sum`` and ``_count`` (its mean over a window), never its buckets.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")

_SUFFIXES = ("_total", "_sum", "_count", "_bucket")


def _base(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _wanted(name: str, known: Container[str]) -> bool:
    return name in known or _base(name) in known


@dataclass(slots=True)
class Sieved:
    text: str                                           # the kept lines, for the parser
    unmapped: list[str] = field(default_factory=list)   # the dropped families' names
    bad_line: str | None = None                         # a line that is not the format


def sieve(text: str, known: Container[str]) -> Sieved:
    """The lines of ``text`` whose metric ``known`` names, and the other families' names in
    order of appearance. A sample line is kept when its name, or its name without a
    ``_total``/``_sum``/``_count`` suffix, is known; ``_bucket`` and ``_created`` samples
    never are (``_created`` says when a series began, not what it counts). A family is named
    as its ``# TYPE`` line names it (a counter without ``_total``, as prometheus-client
    does), a sample without one by its own name."""
    kept: list[str] = []
    dropped: dict[str, None] = {}
    bad: str | None = None
    family = "\0"  # the last # TYPE family not known, and its comment lines (pending)
    pending: list[str] = []
    for line in text.splitlines():
        if not line:
            continue
        if line[0] == "#":
            parts = line.split(None, 3)
            if len(parts) < 3 or parts[1] not in ("HELP", "TYPE"):
                continue
            name = parts[2]
            if name.endswith("_created"):
                continue
            if _wanted(name, known):
                kept.append(line)
                continue
            if name != family:
                family, pending = name, []
            pending.append(line)
            if parts[1] == "TYPE":
                counter = len(parts) > 3 and parts[3].strip() == "counter"
                dropped[name.removesuffix("_total") if counter else name] = None
            continue
        end = _name_end(line)
        name = line[:end]
        if bad is None and not _sample_shaped(line, end):
            bad = line  # the parser would refuse it; a dropped line is checked here
        if name.endswith(("_bucket", "_created")):
            continue
        if not _wanted(name, known):
            if not name.startswith(family):
                dropped[name] = None
            continue
        if pending and name.startswith(family):
            # A known sample of a family whose own name is not known (TGI maps a
            # histogram's _sum): the family is read, with its TYPE line.
            kept.extend(pending)
            pending = []
            dropped.pop(family.removesuffix("_total"), None)
            dropped.pop(family, None)
        kept.append(line)
    return Sieved("\n".join(kept) + "\n", list(dropped), bad)


def _sample_shaped(line: str, end: int) -> bool:
    """A metric name, labels or not, then a number: what the parser would accept."""
    if end == len(line) or not _NAME.match(line[:end]):
        return False
    rest = line[line.rfind("}") + 1:] if line[end] == "{" else line[end:]
    value = rest.split(None, 1)
    try:
        float(value[0])
    except (IndexError, ValueError):
        return False
    return True


def _name_end(line: str) -> int:
    """Where a sample line's metric name ends: at its labels or its value."""
    brace, space = line.find("{"), line.find(" ")
    ends = [i for i in (brace, space) if i >= 0]
    return min(ends) if ends else len(line)


__all__ = ["Sieved", "sieve"]
