"""One rank's GPU time split as Holistic Trace Analysis defines it, on a Kineto JSON trace.

HTA 0.5 (``hta.trace_analysis.TraceAnalysis``), which the tests run as the oracle:

- *The kernels*: every GPU event (``args.stream`` >= 0 with a correlation id) launched by a
  CPU event that started before the last ``ProfilerStep`` began (the last, possibly cut,
  iteration is left out; with fewer than two steps every kernel counts).
- *The window* (HTA's ``kernel_time``): from the first kernel's start to the last one's end.
- *Idle*: the window less the union of all kernels. *Compute*: the union of the computation
  kernels (not ``nccl*Kernel``, no ``Memcpy``/``Sync`` in the name, not ``Memset*``).
  *Non-compute*: the window less compute and idle (communication, memory copies, the rest).
- *Communication*: the union of ``nccl*Kernel`` kernels; *overlap*: the share of it during
  which compute also ran (``get_comm_comp_overlap``).

The kernel is kept whole where HTA keeps it: it is not cut at the CPU-side step marks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from acceval.training.trace import STEP_MARK, Interval, _intersect, _length, _union

_COMM = re.compile(r"^nccl.*Kernel")
_MEMORY = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
_NOT_COMPUTE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


@dataclass(frozen=True, slots=True)
class RankSplit:
    """One rank's split over HTA's window (milliseconds)."""

    rank: int | None
    window_ms: float
    compute_ms: float
    non_compute_ms: float
    communication_ms: float
    overlap_ms: float            # communication time during which compute also ran
    memory_ms: float
    idle_ms: float
    first_step: int | None = None
    last_step: int | None = None  # the iterations the window covers

    def share(self, ms: float) -> float | None:
        return ms / self.window_ms if self.window_ms > 0 else None

    @property
    def overlap_share(self) -> float | None:
        return self.overlap_ms / self.communication_ms if self.communication_ms > 0 else None


def _gpu(e: dict[str, Any]) -> tuple[int, int] | None:
    """(stream, correlation) of a GPU event, None for a CPU one."""
    args = e.get("args") or {}
    stream, corr = args.get("stream"), args.get("correlation")
    if not isinstance(stream, int) or isinstance(stream, bool) or stream < 0:
        return None
    return stream, corr if isinstance(corr, int) else -1


def _launched_before_last_step(spans: list[dict[str, Any]]) -> set[int] | None:
    """Correlation ids of CPU events before the last ProfilerStep; None: keep every kernel
    (fewer than two steps, as HTA)."""
    steps = [e for e in spans if _gpu(e) is None and STEP_MARK.match(str(e.get("name")))]
    if len({e["name"] for e in steps}) < 2:
        return None
    last = max(float(e["ts"]) for e in steps)
    out = set()
    for e in spans:
        corr = (e.get("args") or {}).get("correlation")
        if _gpu(e) is None and isinstance(corr, int) and float(e["ts"]) < last:
            out.add(corr)
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and math.isfinite(v)


def hta_split(events: list[Any], rank: int | None = None) -> RankSplit | None:
    """HTA's temporal breakdown and overlap of one rank's trace events (None: no kernel)."""
    spans = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"
             and _finite(e.get("ts")) and _finite(e.get("dur"))]
    keep = _launched_before_last_step(spans)
    kernels: list[tuple[str, float, float]] = []
    for e in spans:
        g = _gpu(e)
        if g is None or g[1] < 0 or (keep is not None and g[1] not in keep):
            continue
        ts = float(e["ts"])
        kernels.append((str(e.get("name") or ""), ts, ts + float(e["dur"])))
    if not kernels:
        return None
    every = _union([(a, b) for _, a, b in kernels])
    window = every[-1][1] - every[0][0]
    idle = window - _length(every)
    compute = _union([(a, b) for n, a, b in kernels if not _NOT_COMPUTE.match(n)
                      and not _COMM.match(n) and not _MEMORY.match(n)])
    comm = _union([(a, b) for n, a, b in kernels if _COMM.match(n)])
    memory: list[Interval] = _union([(a, b) for n, a, b in kernels
                                     if not _COMM.match(n) and _MEMORY.match(n)])
    marks = sorted(int(m.group(1)) for e in spans
                   if _gpu(e) is None and (m := STEP_MARK.match(str(e.get("name")))))
    if keep is not None and marks:
        marks = marks[:-1]
    c = _length(compute)
    return RankSplit(rank=rank, window_ms=window / 1000.0, compute_ms=c / 1000.0,
                     non_compute_ms=(window - c - idle) / 1000.0,
                     communication_ms=_length(comm) / 1000.0,
                     overlap_ms=_length(_intersect(comm, compute)) / 1000.0,
                     memory_ms=_length(memory) / 1000.0, idle_ms=idle / 1000.0,
                     first_step=marks[0] if marks else None,
                     last_step=marks[-1] if marks else None)


__all__ = ["RankSplit", "hta_split"]
