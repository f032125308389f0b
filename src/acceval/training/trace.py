"""Compute, communication and idle time per step from a PyTorch profiler (Kineto) trace.

The definitions are HolisticTraceAnalysis's (temporal breakdown, communication-computation
overlap), computed here on the trace's events rather than with HTA itself, which reads GPU
kernels only; acceval's built-in workload runs on CPU too. Per profiled step
(``ProfilerStep#N`` on the training thread):

- On a GPU trace (it has ``kernel`` events): *compute* is the union of kernel intervals that
  are not communication (NCCL) or memory (memcpy/memset); *communication* the union of NCCL
  kernels; *idle* the step's time covered by no kernel at all.
- On a CPU trace: *compute* is the union of the training thread's operator intervals, less
  the communication operators; *communication* the union of the collective annotations
  (``gloo:*``, ``nccl:*``, ``c10d::*``) on any thread, where gloo runs its collectives;
  *idle* the step's time covered by neither (Python between operators, waiting).
- *Overlap* is the share of communication time during which compute also ran; *exposed
  communication* is the communication time that overlaps no compute.

Every event not understood (no name, no time) is counted, never dropped in silence.

:func:`read_trace` also reads the AWS Neuron profiler's JSON export
(:mod:`acceval.training.neuron`), picked by the file's content or a declared ``trace_format``;
both produce the same :class:`TraceSplit`. Perfetto protobuf (``.pftrace``) is not read: the
error says how to export JSON instead.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acceval.errors import StudyError
from acceval.input_files import DATA_MAX_BYTES, decode, loads_json, read_bytes, read_gzip
from acceval.training.log import Unread
from acceval.training.spec import TraceFormat

if TYPE_CHECKING:
    from acceval.training.gpu_trace import RankSplit

_COMM = re.compile(r"(^gloo:|^nccl|nccl|^c10d::|all_?reduce|all_?gather|reduce_?scatter|"
                   r"broadcast|all_to_all|record_param_comms)", re.IGNORECASE)
_MEMORY = re.compile(r"(memcpy|memset)", re.IGNORECASE)
STEP_MARK = re.compile(r"^ProfilerStep#(\d+)$")

Interval = tuple[float, float]

#: What to do with a Perfetto protobuf file. The commands are the Neuron docs' (aws-neuron-sdk
#: tools/neuron-explorer/get-started.rst; archive/profiler/neuron-profile-user-guide.rst).
PERFETTO_HELP = (
    "a Perfetto protobuf trace is not read (it would need a protobuf decoder); export the "
    "profile as JSON instead: `neuron-explorer view -d <profile dir> --output-format json` "
    "(Neuron Profiler 2.0: `neuron-profile view -d <profile dir> --output-format json`) and "
    "give trace: system_profile.json or device_profile_model_<id>.json; a single device "
    "profile: `neuron-profile view --output-format json --output-file profile.json -n "
    "file.neff -s profile.ntff`")


@dataclass(frozen=True, slots=True)
class StepSplit:
    step: int
    duration_ms: float
    compute_ms: float
    communication_ms: float
    overlap_ms: float        # communication time during which compute also ran
    memory_ms: float         # GPU memcpy/memset (0 on CPU traces)
    idle_ms: float


@dataclass(slots=True)
class TraceSplit:
    source: str
    kind: str                                 # gpu, cpu, neuron-device or neuron-system
    steps: list[StepSplit] = field(default_factory=list)
    events: int = 0
    unread: Unread = field(default_factory=Unread)
    backend: str | None = None
    world_size: int | None = None
    rank: int | None = None
    whole_span: bool = False                  # no ProfilerStep marks: one window, step 0
    overlap_known: bool = True                # False: the form cannot show compute during comm
    notes: list[str] = field(default_factory=list)  # what the form does not give
    rank_split: RankSplit | None = None       # GPU traces: HTA's window of kernels


def _union(iv: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _length(iv: list[Interval]) -> float:
    return sum(b - a for a, b in iv)


def _intersect(x: list[Interval], y: list[Interval]) -> list[Interval]:
    """Intersection of two unions (each sorted and disjoint)."""
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append((a, b))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def _clip(iv: list[Interval], lo: float, hi: float) -> list[Interval]:
    return [(max(a, lo), min(b, hi)) for a, b in iv if b > lo and a < hi]


def split_step(window: Interval, compute: list[Interval], comm: list[Interval],
               memory: list[Interval] | None = None, *, step: int = 0) -> StepSplit:
    """HTA's temporal breakdown of one step window (times in microseconds)."""
    lo, hi = window
    cu = _union(_clip(compute, lo, hi))
    co = _union(_clip(comm, lo, hi))
    me = _union(_clip(memory or [], lo, hi))
    busy = _union([*cu, *co, *me])
    return StepSplit(step=step, duration_ms=(hi - lo) / 1000.0,
                     compute_ms=_length(cu) / 1000.0, communication_ms=_length(co) / 1000.0,
                     overlap_ms=_length(_intersect(cu, co)) / 1000.0,
                     memory_ms=_length(me) / 1000.0,
                     idle_ms=max(0.0, (hi - lo) - _length(busy)) / 1000.0)


def load_json(path: Path) -> Any:
    """The parsed JSON of a ``.json`` or ``.json.gz`` trace, read within the bounded
    reader's limits (a regular file; at most :data:`~acceval.input_files.DATA_MAX_BYTES`,
    compressed and expanded; nesting checked; a number that is not finite is left for the
    reader, which skips its event); every failure names the file."""
    if path.suffix.lower() in (".pftrace", ".perfetto-trace"):
        raise ValueError(f"{path}: {PERFETTO_HELP}")
    try:
        data = (read_gzip(path, max_bytes=DATA_MAX_BYTES, what="trace")
                if path.name.endswith(".gz")
                else read_bytes(path, max_bytes=DATA_MAX_BYTES, what="trace"))
        text = decode(data, path, what="trace")
    except StudyError as exc:
        if "not UTF-8" in str(exc):
            raise ValueError(f"{path}: binary, not JSON (a Perfetto .pftrace?); "
                             f"{PERFETTO_HELP}") from None
        raise ValueError(str(exc)) from None
    try:
        # Non-finite numbers are kept: every reader of a trace checks each stamp itself
        # (a float hook per number cost a tenth of a trace's reading).
        return loads_json(text, non_finite="keep")
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def detect_format(data: Any) -> TraceFormat | None:
    """Kineto's trace-event form has ``traceEvents`` (or is a bare array); the Neuron
    profiler's system profile has ``trace_events``, its device profile ``instruction``."""
    if isinstance(data, list) or (isinstance(data, dict) and "traceEvents" in data):
        return "kineto"
    if isinstance(data, dict) and ("trace_events" in data or "instruction" in data):
        return "neuron"
    return None


def read_trace(path: Path, fmt: TraceFormat | None = None) -> TraceSplit:
    """The per-step split of a profiler trace: Kineto JSON, or the Neuron profiler's JSON
    export; ``fmt`` None detects the form from the content."""
    data = load_json(path)
    form = fmt or detect_format(data)
    if form == "neuron":
        # Imported here: the Neuron reader builds on this module's interval code.
        from acceval.training.neuron import read_neuron
        return read_neuron(data, path)
    if form is None:
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: neither a Kineto trace (traceEvents) nor a Neuron profiler "
                         f"JSON (trace_events, or instruction); it has: {keys or 'nothing'}")
    if isinstance(data, list):  # the bare-array form of the trace-event format
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise ValueError(f"{path}: not a trace-event JSON (no traceEvents list)")
    return _read_kineto(data, path)


def _count(v: Any) -> int | None:
    """A rank or a world size as the trace gives it: a whole number, or not known."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _read_kineto(data: dict[str, Any], path: Path) -> TraceSplit:
    """The per-step split of a Kineto JSON trace (``.json`` or ``.json.gz``)."""
    info = data.get("distributedInfo")
    info = info if isinstance(info, dict) else {}
    backend = info.get("backend")
    out = TraceSplit(source=str(path), kind="cpu",
                     backend=backend if isinstance(backend, str) else None,
                     world_size=_count(info.get("world_size")), rank=_count(info.get("rank")))
    spans: list[tuple[str, str, Any, float, float]] = []
    events = data["traceEvents"]
    out.events += len(events)
    for e in events:
        if not isinstance(e, dict):
            out.unread.add(repr(e))
            continue
        if e.get("ph") != "X":
            continue  # metadata, flows, instants, counters: not time spent
        try:
            name, ts, dur = str(e["name"]), float(e["ts"]), float(e["dur"])
            if not (math.isfinite(ts) and math.isfinite(dur)):
                raise ValueError("a stamp that is not a finite number")
        except (KeyError, TypeError, ValueError, OverflowError):
            out.unread.add(json.dumps(e)[:200])
            continue
        spans.append((name, str(e.get("cat") or ""), e.get("tid"), ts, ts + dur))
    gpu = any(cat == "kernel" for _, cat, _, _, _ in spans)
    out.kind = "gpu" if gpu else "cpu"
    steps = [(int(m.group(1)), tid, a, b) for name, _, tid, a, b in spans
             if (m := STEP_MARK.match(name))]
    if not steps:
        # No step annotations: the whole span of the busiest thread is one window.
        ops = [(tid, a, b) for _, c, tid, a, b in spans if c == "cpu_op"]
        if ops:
            tids = [t for t, _, _ in ops]
            busiest = max(set(tids), key=tids.count)
            mine = [(a, b) for t, a, b in ops if t == busiest]
            steps = [(0, busiest, min(a for a, _ in mine), max(b for _, b in mine))]
            out.whole_span = True
    main = steps[0][1] if steps else None
    # Each distinct name matched once: a trace repeats a few hundred names over 10**4 spans.
    names = {n for n, _, _, _, _ in spans}
    is_comm = {n for n in names if _COMM.search(n)}
    if gpu:
        is_memory = {n for n in names if _MEMORY.search(n)}
        comm = [(a, b) for n, c, _, a, b in spans if c == "kernel" and n in is_comm]
        memory = [(a, b) for n, c, _, a, b in spans if c in ("gpu_memcpy", "gpu_memset")
                  or (c == "kernel" and n in is_memory)]
        compute = [(a, b) for n, c, _, a, b in spans if c == "kernel"
                   and n not in is_comm and n not in is_memory]
    else:
        memory = []
        comm = [(a, b) for n, c, _, a, b in spans
                if c in ("user_annotation", "cpu_op") and n in is_comm
                and not n.startswith("c10d::")]
        compute = [(a, b) for n, c, tid, a, b in spans
                   if c == "cpu_op" and tid == main and n not in is_comm]
    out.steps = [split_step((a, b), compute, comm, memory, step=n)
                 for n, _, a, b in sorted(steps)]
    if gpu:
        # Imported here: the GPU split builds on this module's interval code.
        from acceval.training.gpu_trace import hta_split
        out.rank_split = hta_split(data["traceEvents"], out.rank)
    return out


__all__ = ["PERFETTO_HELP", "STEP_MARK", "StepSplit", "TraceFormat", "TraceSplit", "detect_format",
           "load_json", "read_trace", "split_step"]
