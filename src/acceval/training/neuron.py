"""Compute, communication and idle time from the AWS Neuron profiler's JSON export.

The Neuron profiler (Neuron Profiler 2.0 ``neuron-profile view --output-format json``, Neuron
Explorer ``neuron-explorer view --output-format json``) writes two documented JSON forms; this
module reads what each documents and produces the :class:`~acceval.training.trace.TraceSplit`
the Kineto reader produces, with the same interval code (HTA's temporal breakdown):

- **System profile** (``system_profile.json``): ``trace_events``, each with ``name``,
  ``timestamp`` and ``duration`` (nanoseconds), ``group``, ``instance_id``, ``lnc_idx``,
  ``process_id``, ``thread_id``; plus ``mem_usage`` and ``cpu_util`` samples. The NeuronCore's
  hardware events give the split of one core: *compute* is ``nc_exec_running`` (the core
  executing a compiled graph) outside collectives, *communication* is ``cc_running`` and
  ``cc_exec_barrier``, *idle* the rest of the window. Windows are the framework's
  ``ProfilerStep#N`` events when the PyTorch profiler's trace was merged in, else the core's
  first to last hardware event. A system profile cannot show whether the engines computed
  during a collective, so overlap is not measured and every collective counts as exposed.
- **Device profile** (``device_profile_model_<id>.json``, or the single-NEFF ``profile.json``):
  ``summary`` (``total_time`` in seconds, ``event_count``) and ``instruction``, each with
  ``timestamp`` and ``duration`` (nanoseconds), ``label`` (the engine's timeline row, e.g.
  ``TensorMatrix``), ``opcode``, ``operands``, ``hlo_name``. *Compute* is the engines'
  instructions, *communication* the ``CC-core`` rows' instructions, *overlap* their
  intersection, over one window (one execution of one graph has no step boundaries).

What a form does not give is written into :attr:`TraceSplit.notes`, which the result and the
report carry. Every event not understood is counted, never dropped. Sources: docs/training.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from acceval.training.trace import STEP_MARK, Interval, TraceSplit, split_step

NS_PER_US = 1000
COMPUTE_EVENTS = frozenset({"nc_exec_running"})
COMM_EVENTS = frozenset({"cc_running", "cc_exec_barrier"})
_CC_ROW = re.compile(r"\bcc[-_ ]?core", re.IGNORECASE)
_CORE_IN_GROUP = re.compile(r"nc[-_:]?0*(\d+)", re.IGNORECASE)
_SYSTEM_KEYS = frozenset({"trace_events", "mem_usage", "cpu_util"})
_DEVICE_KEYS = frozenset({"summary", "instruction"})

Core = tuple[str, int | None]       # (instance_id, NeuronCore index)


@dataclasses.dataclass(frozen=True, slots=True)
class _Event:
    name: str
    start_us: float
    end_us: float
    instance: str
    process: str
    core: int | None


def read_neuron(data: Any, path: Path) -> TraceSplit:
    """The split of a Neuron profiler JSON export, system or device profile by content."""
    if isinstance(data, dict) and "trace_events" in data:
        return _system(data, path)
    if isinstance(data, dict) and "instruction" in data:
        return _device(data, path)
    keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
    raise ValueError(f"{path}: not a Neuron profiler JSON export (a system profile has "
                     f"trace_events, a device profile instruction); it has: {keys or 'nothing'}")


def _ns(v: Any) -> int | float | None:
    """A nanosecond stamp or duration: kept an int when it is one, since epoch stamps
    (about 1.7e18 ns) lose hundreds of nanoseconds as floats."""
    if isinstance(v, bool):
        return None
    if isinstance(v, str):
        try:
            v = int(v)
        except ValueError:
            try:
                v = float(v)
            except ValueError:
                return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return v
    return None


def _interval(e: dict[str, Any]) -> Interval | None:
    """(start, end) in microseconds, the unit of the shared split code."""
    ts, dur = _ns(e.get("timestamp")), _ns(e.get("duration"))
    if ts is None or dur is None or dur < 0:
        return None
    return ts / NS_PER_US, (ts + dur) / NS_PER_US


def _unwrap(raw: Any) -> dict[str, Any] | None:
    """An event object; the docs show events keyed by their kind
    (``{"Framework_Event": {...}}``), so a one-key wrapper is opened."""
    if not isinstance(raw, dict):
        return None
    if len(raw) == 1:
        (inner,) = raw.values()
        if isinstance(inner, dict):
            return inner
    return raw


def _others(data: dict[str, Any], known: frozenset[str], out: TraceSplit) -> None:
    """Top-level parts the documented form does not name: counted, with examples."""
    for key in sorted(set(data) - known):
        value = data[key]
        items = value if isinstance(value, list) else [value]
        for item in items:
            out.events += 1
            out.unread.add(f"{key}: {json.dumps(item, default=str)[:180]}")


def _core(e: dict[str, Any]) -> int | None:
    for key in ("lnc_idx", "nc_idx"):
        try:
            return int(e[key])
        except (KeyError, TypeError, ValueError, OverflowError):
            pass
    m = _CORE_IN_GROUP.search(str(e.get("group") or ""))
    return int(m.group(1)) if m else None


def _event_list(data: dict[str, Any], key: str, path: Path) -> list[Any]:
    events = data[key]
    if not isinstance(events, list):
        raise ValueError(f"{path}: {key} is not a list of events")
    return events


def _system(data: dict[str, Any], path: Path) -> TraceSplit:
    events = _event_list(data, "trace_events", path)
    out = TraceSplit(source=str(path), kind="neuron-system", overlap_known=False)
    hw: list[_Event] = []
    marks: list[tuple[int, _Event]] = []
    for raw in events:
        out.events += 1
        e = _unwrap(raw)
        iv = _interval(e) if e is not None else None
        if e is None or iv is None or not e.get("name"):
            out.unread.add(json.dumps(raw, default=str)[:200])
            continue
        ev = _Event(str(e["name"]), iv[0], iv[1], str(e.get("instance_id") or ""),
                    str(e.get("process_id") or ""), _core(e))
        if ev.name in COMPUTE_EVENTS or ev.name in COMM_EVENTS:
            hw.append(ev)
        elif m := STEP_MARK.match(ev.name):
            marks.append((int(m.group(1)), ev))
        # Runtime API calls, framework operators, sync points: understood, not time split.
    _others(data, _SYSTEM_KEYS, out)
    cores = sorted({(e.instance, e.core) for e in hw}, key=lambda c: (c[0], c[1] is None,
                                                                       c[1] or 0))
    if not cores:
        out.notes.append("Neuron system profile: no nc_exec_running or cc_running event "
                         "(were hardware events filtered out at capture?)")
        return out
    chosen = cores[0]
    mine = [e for e in hw if (e.instance, e.core) == chosen]
    compute = [(e.start_us, e.end_us) for e in mine if e.name in COMPUTE_EVENTS]
    comm = [(e.start_us, e.end_us) for e in mine if e.name in COMM_EVENTS]
    windows = _windows(marks, mine)
    if not windows:
        windows = [(0, min(e.start_us for e in mine), max(e.end_us for e in mine))]
        out.whole_span = True
    # Compute is the core's graph execution outside collectives; whether its engines also
    # computed during a collective is not in a system profile.
    out.steps = [dataclasses.replace(s, compute_ms=s.compute_ms - s.overlap_ms, overlap_ms=0.0)
                 for s in (split_step((a, b), compute, comm, step=n) for n, a, b in windows)]
    where = f"NeuronCore {chosen[1] if chosen[1] is not None else '?'}" + (
        f" of {chosen[0]}" if chosen[0] else "")
    out.notes += [
        f"Neuron system profile JSON, {where} ({len(cores)} core(s) in the profile; one core "
        "is split, as HTA splits one rank)",
        "windows: " + ("the framework's ProfilerStep#N events" if not out.whole_span else
                       "no ProfilerStep#N framework event, so the core's first to last "
                       "hardware event is one window"),
        "compute = nc_exec_running outside collectives, communication = cc_running and "
        "cc_exec_barrier: a system profile does not show whether the engines computed during "
        "a collective, so overlap is not measured and all collective time counts as exposed "
        "(an upper bound)",
        "data loading is not marked in the profile (its share comes from the step log)",
    ]
    return out


def _windows(marks: list[tuple[int, _Event]], mine: list[_Event]) -> list[tuple[int, float,
                                                                            float]]:
    """The step windows of the chosen core's process: its instance's ``ProfilerStep#N``
    framework events (the first of each number, when several processes logged it)."""
    inst = mine[0].instance
    procs = {e.process for e in mine if e.process}
    same = [(n, e) for n, e in marks if not inst or not e.instance or e.instance == inst]
    if procs and any(e.process in procs for _, e in same):
        same = [(n, e) for n, e in same if e.process in procs]
    seen: dict[int, tuple[int, float, float]] = {}
    for n, e in same:
        seen.setdefault(n, (n, e.start_us, e.end_us))
    return sorted(seen.values())


def _device(data: dict[str, Any], path: Path) -> TraceSplit:
    instr = _event_list(data, "instruction", path)
    out = TraceSplit(source=str(path), kind="neuron-device", whole_span=True)
    compute: list[Interval] = []
    comm: list[Interval] = []
    rows: Counter[str] = Counter()
    for e in instr:
        out.events += 1
        iv = _interval(e) if isinstance(e, dict) else None
        label = e.get("label") if isinstance(e, dict) else None
        if iv is None or not label:
            out.unread.add(json.dumps(e, default=str)[:200])
            continue
        is_cc = bool(_CC_ROW.search(str(label)))
        if not is_cc:
            rows[str(label)] += 1
        (comm if is_cc else compute).append(iv)
    _others(data, _DEVICE_KEYS, out)
    total_s = _total_time(data.get("summary"))
    if compute or comm:
        spans = compute + comm
        window = (min(a for a, _ in spans), max(b for _, b in spans))
        out.steps = [split_step(window, compute, comm, step=0)]
    on_device = f"; summary total_time {total_s:g} s" if total_s is not None else ""
    out.notes += [
        "Neuron device profile JSON: one execution of one compiled graph on one NeuronCore, "
        "with no step boundaries, so the window is its first instruction to its last"
        f"{on_device}",
        f"compute = the engines' instructions ({', '.join(sorted(rows)) or 'none'}); "
        "communication = CC-core instructions only: the documented JSON lists "
        "no DMA transfers, so collectives' data movement is not seen (a lower bound)",
        "host time (data loading, framework, runtime calls) is outside a device profile",
    ]
    return out


def _total_time(summary: Any) -> float | None:
    first = summary[0] if isinstance(summary, list) and summary else summary
    try:
        value = float(first["total_time"])
    except (KeyError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


__all__ = ["COMM_EVENTS", "COMPUTE_EVENTS", "NS_PER_US", "read_neuron"]
