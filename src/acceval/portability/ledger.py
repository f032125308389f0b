"""The migration ledger: what moving a workload to a target cost, each line with evidence.

Code changed (``git diff --numstat`` between two refs, or difflib over two folders), compile
and warm-up time (declared, parsed from a log, or the local server's measured start-up, resolved
into the one ``compile_s`` the bill uses too: :mod:`acceval.economics.compile_time`), the first
requests against the median, operations that ran on another processor
(:mod:`acceval.portability.fallback`), the debugging tools, the adaptation hours and the known
limitations.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import computed_field

from acceval.economics.compile_time import (
    CompileTime,
    declared_compile_s,
    resolve_compile_time,
    startup_compile_s,
)
from acceval.economics.provenance import MISSING, SourcedValue, measured
from acceval.economics.spec import TargetCosts
from acceval.errors import UsageError
from acceval.portability.evidence import (
    Evidence,
    EvidenceKind,
    declared,
    from_reference,
)
from acceval.portability.fallback import FallbackReport, parse_fallback
from acceval.portability.spec import CodeDiff, CompileLog, TargetPortability
from acceval.results.section import Section


class CompiledTarget(Protocol):
    """What the compile time reads from a study target (``acceval.study.Target`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def costs(self) -> TargetCosts: ...
    @property
    def portability(self) -> TargetPortability | None: ...

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree (SHA-1 repos)


class FileChange(Section):
    path: str
    added: int | None    # None for a binary file
    removed: int | None


class CodeChange(Section):
    files: list[FileChange]
    reference_lines: int | None    # text lines in the reference code (the denominator)
    evidence: Evidence

    @computed_field  # type: ignore[prop-decorator]
    @property
    def files_changed(self) -> int:
        return len(self.files)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lines_added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lines_removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unchanged_fraction(self) -> float | None:
        """Share of reference lines kept as they were (the source score of §9)."""
        if not self.reference_lines:
            return None
        return max(0.0, (self.reference_lines - self.lines_removed) / self.reference_lines)



def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-C", str(repo), *args]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise UsageError("git is not installed; use reference_dir/target_dir instead") from None
    except subprocess.CalledProcessError as exc:
        raise UsageError(f"{' '.join(cmd)} failed: {exc.stderr.strip()}") from None
    return out.stdout


def _numstat(text: str) -> list[FileChange]:
    files = []
    for line in text.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            a, r, path = parts
            files.append(FileChange(path=path, added=None if a == "-" else int(a),
                                    removed=None if r == "-" else int(r)))
    return files


def git_code_change(repo: str | Path, base: str, head: str,
                    paths: list[str] | None = None) -> CodeChange:
    """Lines added/removed and files changed between two git refs (``git diff --numstat``)."""
    spec = ["--", *paths] if paths else []
    diff = _git(Path(repo), "diff", "--numstat", base, head, *spec)
    total = _git(Path(repo), "diff", "--numstat", _EMPTY_TREE, base, *spec)
    ref_lines = sum(f.added or 0 for f in _numstat(total))
    cmd = f"git -C {repo} diff --numstat {base} {head}" + (" -- " + " ".join(paths)
                                                           if paths else "")
    return CodeChange(files=tuple(_numstat(diff)), reference_lines=ref_lines,
                      evidence=Evidence(kind="command", detail=cmd))


def _lines(p: Path) -> list[str] | None:
    try:
        return p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def dir_code_change(reference_dir: str | Path, target_dir: str | Path) -> CodeChange:
    """The same counts between two folders, with difflib; binary files count as changed."""
    ra, rb = Path(reference_dir), Path(target_dir)
    for d in (ra, rb):
        if not d.is_dir():
            raise UsageError(f"{d}: not a folder")
    fa, fb = _files(ra), _files(rb)
    changes: list[FileChange] = []
    ref_lines = 0
    for rel in sorted(fa.keys() | fb.keys()):
        a = _lines(fa[rel]) if rel in fa else []
        b = _lines(fb[rel]) if rel in fb else []
        if a is not None:
            ref_lines += len(a) if rel in fa else 0
        if a is None or b is None:  # binary on either side
            if rel not in fa or rel not in fb or fa[rel].read_bytes() != fb[rel].read_bytes():
                changes.append(FileChange(path=rel, added=None, removed=None))
            continue
        added = removed = 0
        for line in difflib.unified_diff(a, b, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        if added or removed:
            changes.append(FileChange(path=rel, added=added, removed=removed))
    return CodeChange(files=tuple(changes), reference_lines=ref_lines,
                      evidence=Evidence(kind="command",
                                        detail=f"difflib.unified_diff over {ra} and {rb}"))


def code_change(spec: CodeDiff, base_dir: Path) -> CodeChange:
    if spec.repo is not None:
        assert spec.base is not None and spec.head is not None
        return git_code_change(base_dir / spec.repo, spec.base, spec.head, spec.paths or None)
    assert spec.reference_dir is not None and spec.target_dir is not None
    return dir_code_change(base_dir / spec.reference_dir, base_dir / spec.target_dir)


class Warmup(Section):
    """First-request latency against the steady state, from the stored records."""

    first_n: int
    first_e2e_ms: float | None
    median_e2e_ms: float | None
    first_ttft_ms: float | None
    median_ttft_ms: float | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def penalty_ms(self) -> float | None:
        if self.first_e2e_ms is None or self.median_e2e_ms is None:
            return None
        return self.first_e2e_ms - self.median_e2e_ms



def warmup_from_records(table: pa.Table, target: str, first_n: int = 1) -> Warmup | None:
    """Mean E2E/TTFT of the first ``first_n`` completed requests (in send order, warm-up rows
    included: the cold start hits whichever request comes first) against the median of the
    rest. None when fewer than ``first_n + 1`` requests completed."""
    sel = table.select(["target", "sent_ns", "first_token_ns", "done_ns", "error_kind"])
    sel = sel.filter(pc.and_(pc.equal(sel["target"], target),
                             pc.and_(pc.is_null(sel["error_kind"]),
                                     pc.and_(pc.is_valid(sel["sent_ns"]),
                                             pc.is_valid(sel["done_ns"])))))
    if sel.num_rows <= first_n:
        return None
    sent = sel["sent_ns"].to_numpy().astype(np.float64)
    e2e = (sel["done_ns"].to_numpy().astype(np.float64) - sent) / 1e6
    first = sel["first_token_ns"].to_numpy(zero_copy_only=False).astype(np.float64)
    ttft = (first - sent) / 1e6  # NaN where no token arrived
    head = first_sent(sent, first_n)
    rest = np.ones(sent.size, dtype=np.bool_)
    rest[head] = False
    head_t, rest_t = ttft[head], ttft[rest]
    head_t, rest_t = head_t[~np.isnan(head_t)], rest_t[~np.isnan(rest_t)]
    return Warmup(first_n=first_n, first_e2e_ms=float(e2e[head].mean()),
                  median_e2e_ms=float(np.median(e2e[rest])),
                  first_ttft_ms=float(head_t.mean()) if head_t.size else None,
                  median_ttft_ms=float(np.median(rest_t)) if rest_t.size else None)


def first_sent(sent: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.int64]:
    """The rows of the ``n`` earliest sends, in send order, a tie going to the earlier row
    (what a stable sort's first ``n`` are), found without sorting them all: a target's
    warm-up reads its first request of hundreds of thousands."""
    n = min(n, sent.size)
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    edge = np.partition(sent, n - 1)[n - 1]
    below = np.flatnonzero(sent < edge)
    at = np.flatnonzero(sent == edge)[:n - below.size]
    head = np.sort(np.concatenate([below, at]))
    return head[np.argsort(sent[head], kind="stable")].astype(np.int64)


def compile_seconds_from_log(spec: CompileLog, base_dir: Path) -> tuple[float | None, Evidence]:
    path = base_dir / spec.path
    if not path.is_file():
        raise UsageError(f"{path}: compile log not found")
    hits = [float(m.group(1)) for m in re.finditer(spec.regex, path.read_text(errors="replace"))]
    return (sum(hits) if hits else None,
            Evidence(kind="file", detail=str(path),
                     quote=f"{len(hits)} match(es) of {spec.regex!r}"))


class DebugTool(Section):
    """A vendor debugging or profiling tool the migration relied on (declared)."""

    name: str
    purpose: str | None = None


#: What a ledger entry holds: a number or a note, or a structured measurement.
LedgerValue = int | float | str | CodeChange | Warmup | FallbackReport | CompileTime | \
    DebugTool | None


class LedgerEntry(Section):
    item: str
    value: LedgerValue
    unit: str | None
    evidence: Evidence


class LedgerResult(Section):
    """The migration ledger as the result stores it."""

    target: str
    reference: str | None
    entries: list[LedgerEntry]
    problems: list[str]

    def entry(self, item: str) -> LedgerEntry | None:
        return next((e for e in self.entries if e.item == item), None)


@dataclass(frozen=True, slots=True)
class MigrationLedger:
    target: str
    reference: str | None
    entries: tuple[LedgerEntry, ...] = ()
    code: CodeChange | None = None
    fallbacks: tuple[FallbackReport, ...] = ()
    adaptation_hours: float | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)  # inputs that could not be read

    def get(self, item: str) -> LedgerEntry | None:
        return next((e for e in self.entries if e.item == item), None)

    def result(self) -> LedgerResult:
        return LedgerResult(target=self.target, reference=self.reference,
                            entries=list(self.entries), problems=list(self.problems))


def _read_log(spec: CompileLog | None, base_dir: Path
              ) -> tuple[float | None, Evidence | None, str | None]:
    """Seconds and evidence from the compile log, or the problem that stopped the reading."""
    if spec is None:
        return None, None, None
    try:
        secs, ev = compile_seconds_from_log(spec, base_dir)
    except UsageError as exc:
        return None, None, f"compile log: {exc}"
    return secs, ev, None


def _log_candidate(secs: float | None, ev: Evidence | None) -> SourcedValue:
    if secs is None or ev is None:
        return MISSING
    return measured(secs, f"compile log {ev.detail} ({ev.quote})")


def compile_time_for(target: CompiledTarget, *, startup_s: float | None = None,
                     base_dir: Path | None = None) -> CompileTime:
    """The compile time of a study target that both its bill and its ledger use: its declared
    values, its compile log (read from ``base_dir``, the study file's folder) and the local
    server's measured start-up, resolved by
    :func:`~acceval.economics.compile_time.resolve_compile_time`. An unreadable log is left
    out, with a note."""
    port = target.portability
    declared, notes = declared_compile_s(target.name, target.costs.compile_s,
                                         port.compile_s if port is not None else None)
    secs, ev, problem = _read_log(port.compile_log if port is not None else None,
                                  base_dir if base_dir is not None else Path())
    return resolve_compile_time(declared=declared, from_log=_log_candidate(secs, ev),
                                measured=startup_compile_s(startup_s),
                                notes=notes + ((problem,) if problem else ()))


def _compile_entry(ct: CompileTime) -> LedgerEntry | None:
    """The ledger's one compile-time line: the value the bill uses, and why."""
    if ct.chosen.value is None:
        return None
    kind: EvidenceKind = ("declared" if ct.basis == "declared" else
                          "file" if ct.basis == "log" else "measurement")
    return LedgerEntry(item="compile_s", value=ct.chosen.value, unit="s",
                       evidence=Evidence(kind=kind,
                                         detail=f"{ct.explanation} The bill uses the same value."))


def build_ledger(target: str, spec: TargetPortability | None, *, reference: str | None,
                 base_dir: Path, startup_s: float | None = None,
                 records: pa.Table | None = None,
                 compile_time: CompileTime | None = None) -> MigrationLedger:
    """Every ledger line this target has evidence for; unreadable inputs become problems.

    ``compile_time`` (from :func:`compile_time_for`) is the compile time the bill uses; the
    ledger's ``compile_s`` line states it, with the start-up and the log beside it. Without it,
    the ledger resolves ``spec``'s own declaration, log and ``startup_s`` by the same rule.
    """
    spec = spec or TargetPortability()
    entries: list[LedgerEntry] = []
    problems: list[str] = []
    code = None
    if spec.code is not None:
        try:
            code = code_change(spec.code, base_dir)
            entries.append(LedgerEntry(item="code_changed", value=code, unit="lines",
                                       evidence=code.evidence))
        except UsageError as exc:
            problems.append(f"code diff: {exc}")
    if startup_s is not None:
        entries.append(LedgerEntry(item="startup_s", value=startup_s, unit="s", evidence=Evidence(
            kind="measurement", detail="local server: process start until /health answered (load, "
            "compile, warm-up)")))
    secs, ev, problem = _read_log(spec.compile_log, base_dir)
    if ev is not None:
        entries.append(LedgerEntry(item="compile_s_from_log", value=secs, unit="s", evidence=ev))
    if problem is not None:
        problems.append(problem)
    if compile_time is None:
        compile_time = resolve_compile_time(
            declared=declared_compile_s(target, None, spec.compile_s)[0],
            from_log=_log_candidate(secs, ev), measured=startup_compile_s(startup_s))
    chosen = _compile_entry(compile_time)
    if chosen is not None:
        entries.append(chosen)
    if records is not None:
        w = warmup_from_records(records, target)
        if w is not None:
            entries.append(LedgerEntry(item="first_request", value=w, unit="ms", evidence=Evidence(
                kind="measurement", detail="records.parquet: first completed request (send order) "
                "against the median of the rest")))
    fallbacks: list[FallbackReport] = []
    for lf in spec.fallback_logs:
        try:
            rep = parse_fallback(base_dir / lf.path, lf.format)
        except UsageError as exc:
            problems.append(f"fallback log: {exc}")
            continue
        fallbacks.append(rep)
        entries.append(LedgerEntry(item="fallback_ops", value=rep, unit="ops",
                                   evidence=Evidence(kind="file", detail=str(base_dir / lf.path))))
    for tool in spec.tools:
        entries.append(LedgerEntry(item="debug_tool", value=DebugTool(name=tool.name,
                                                                      purpose=tool.purpose),
                                   unit=None, evidence=from_reference(tool.evidence) or declared()))
    if spec.adaptation_hours is not None:
        entries.append(LedgerEntry(item="adaptation_hours", value=spec.adaptation_hours, unit="h",
                                   evidence=declared()))
    for lim in spec.limitations:
        entries.append(LedgerEntry(item="limitation", value=lim, unit=None, evidence=declared()))
    return MigrationLedger(target, reference, tuple(entries), code, tuple(fallbacks),
                           spec.adaptation_hours, tuple(problems))
