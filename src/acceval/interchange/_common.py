"""What every importer hands the run-folder writer: one :class:`ImportedPoint` per load point
the peer measured, with per-request records in acceval's own schema and the peer's own
figures, plus a count of every field or line the importer did not map."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acceval.errors import UsageError
from acceval.input_files import DATA_MAX_BYTES, loads_json
from acceval.input_files import read_text as bounded_text
from acceval.loadgen.spec import family, load_point
from acceval.results.files import write_text_durable
from acceval.results.records import Record
from acceval.results.runlog import RunLog
from acceval.results.section import PeerFigures

if TYPE_CHECKING:
    from acceval.run_result import RunResult

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000


@dataclass
class ImportedPoint:
    """One load point read from a peer's file (times in ns from the point's first send)."""

    target: str                       # the name the file gives its target (model, label)
    label: str
    kind: str                         # an acceval arrival kind: concurrency, constant, ...
    level: float
    requested_rate_rps: float | None
    peer: PeerFigures
    records: list[Record] = field(default_factory=list)
    base_url: str | None = None
    model: str | None = None
    api: str = "chat"
    stopped_by: str = "imported"
    # The SLO the file's goodput was judged on (acceval's own export says it), as a study's
    # ``slo`` mapping; None: the file does not say.
    slo: dict[str, Any] | None = None


@dataclass
class Unmapped:
    """Field paths (``requests[].info.timings.queued``) and lines the importer did not map,
    with how often each occurred."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, path: str, n: int = 1) -> None:
        self.counts[path] += n

    def rest(self, data: dict[str, Any], mapped: set[str] | frozenset[str], prefix: str) -> None:
        """Count every key of ``data`` outside ``mapped`` that holds a value."""
        for key, value in data.items():
            if key not in mapped and value not in (None, [], {}, ""):
                self.add(f"{prefix}{key}")


def closed_loop(kind: str) -> bool:
    """Whether the arrival kind is a closed loop (its family answers)."""
    return family(kind).loop == "closed"


def label_of(kind: str, level: float, burstiness: float = 1.0) -> str:
    """The label acceval gives a point of this kind and level (its family's own)."""
    fam = family(kind)
    data: dict[str, Any] = {fam.levels_key: [int(level) if fam.whole_levels else level]}
    if burstiness != 1.0:
        data["burstiness"] = burstiness
    return load_point(data).label(level)


def number(value: Any) -> float | None:
    """A finite float, or None (peers write null, "inf" or NaN for missing)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def ns(seconds: float) -> int:
    return round(seconds * NS_PER_S)


def read_text(path: Path, what: str) -> str:
    """A peer tool's file, read within the bounded reader's limits (a regular file of at
    most :data:`~acceval.input_files.DATA_MAX_BYTES`, UTF-8)."""
    return bounded_text(path, max_bytes=DATA_MAX_BYTES, what=what, where=f"import {path.name}")


def loads(text: str) -> Any:
    """JSON with bounded nesting; NaN and infinities (peers write them for "no value") read
    as None, so every number an importer keeps is finite."""
    return loads_json(text, non_finite="none")


def read_json(path: Path, what: str) -> Any:
    text = read_text(path, what)
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: line {exc.lineno}: not JSON ({exc.msg}); is this a {what}? "
                         "(--format names the tool that wrote it)") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}; is this a {what}? (--format names the tool that "
                         "wrote it)") from exc


def need(data: Any, key: str, path: Path, what: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise UsageError(f"{path}: no '{key}' field, so this is not a {what}; check --format")
    return data[key]


_STAMPS = ("scheduled_ns", "sent_ns", "first_byte_ns", "first_token_ns", "done_ns")


def on_one_timeline(records: list[Record], *, closed: bool) -> list[Record]:
    """The records with their stamps from the first send, in send order, numbered from 0;
    a closed loop's have no intended send time (nothing to lag behind)."""
    sent = [r.sent_ns for r in records if r.sent_ns is not None]
    t0 = min(sent) if sent else 0
    for r in records:
        for f in _STAMPS:
            v = getattr(r, f)
            if v is not None:
                setattr(r, f, v - t0)
        r.chunk_ns = [c - t0 for c in r.chunk_ns]
        if closed:
            r.scheduled_ns = None
    records.sort(key=lambda r: (r.sent_ns or 0))
    for i, r in enumerate(records):
        r.request_id = i
    return records


def unmapped_said(unmapped: dict[str, int], what: str = "field value(s)") -> str:
    """``; 12 field value(s) not mapped (a x7, b x5)``, the first eight named; empty when
    everything mapped. The closing words of an import's note."""
    if not unmapped:
        return ""
    top = ", ".join(f"{k} x{v}" for k, v in list(unmapped.items())[:8])
    more = ", ..." if len(unmapped) > 8 else ""
    return f"; {sum(unmapped.values())} {what} not mapped ({top}{more})"


def target_name(raw: str) -> str:
    """A name the study accepts, from what a file calls its target (a model path...)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw.rsplit("/", 1)[-1]).strip("-._")[:100]
    return name or "imported"


def new_run_dir(name: str, root: Path, now: dt.datetime) -> Path:
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    run_dir, n = root / f"{name}-{stamp}", 1
    while run_dir.exists():
        n += 1
        run_dir = root / f"{name}-{stamp}-{n}"
    run_dir.mkdir(parents=True)
    return run_dir


def start_import(name: str, study_yaml: str, out_dir: Path | str) -> tuple[Path, RunLog]:
    """An imported run's folder with its study (``study_yaml``) written, and its log, started
    and finished now (an import measures nothing)."""
    now = dt.datetime.now(dt.UTC)
    run_dir = new_run_dir(name, Path(out_dir), now)
    write_text_durable(run_dir / "study.yaml", study_yaml)
    return run_dir, RunLog(run_id=run_dir.name, created_utc=now.isoformat(),
                           finished_utc=now.isoformat())


def write_report(result: RunResult, run_dir: Path) -> None:
    from acceval.report import write_outputs

    write_outputs(result, run_dir)
