"""Recovery from an interruption, computed from the interrupted point's records (pure).

Inputs: the point's records, the fault's stamps
(:class:`~acceval.results.runlog.FaultStamps`) and the SLO. Every time is ns since the run
anchor, like the records. Definitions (docs/demand-and-faults.md):

- **accounted**: every request the runner issued has exactly one record, and each record
  either completed or carries an error kind (``sent == ok + failed``, none unfinished);
- **failed**: requests that ended in error at or after the fault, by kind (``connect``:
  refused while down; ``stream_cut``: cut mid-answer by the kill; ``timeout``: hung);
- **time to first success**: from the fault to the completion of the first request sent at
  or after the fault that succeeded;
- **rolling SLO**: every ``step_s`` a window of ``window_s`` seconds of send time is judged:
  it is healthy when it holds at least one request, its error rate is within
  ``max_error_rate`` and the SLO percentile of TTFT and E2E (a failed request counts as
  infinitely slow) is within the bounds. **Recovered** is the start of the first window after
  the fault from which every later non-empty window is healthy (about the send time of the
  last request that still broke the SLO); **time to SLO** is recovered minus the fault; the
  **violation window** runs from the first unhealthy window's newest step after the fault to
  recovered, and ``violation_s`` is its length.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pydantic import Field

from acceval.metrics.spec import SLO
from acceval.results.runlog import FaultStamps
from acceval.results.section import PointResult, Section

if TYPE_CHECKING:  # imported where used: metrics imports the study
    from acceval.metrics.derive import Derived


class Recovery(Section):
    """What the interrupted point's records say about the recovery (definitions above)."""

    requests: int
    ok: int
    failed: int
    unfinished: int
    accounted: bool
    window_s: float
    step_s: float
    failed_after_fault: int | None = None
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    in_flight_at_fault: int | None = None
    sent_after_fault: int | None = None
    time_to_first_success_s: float | None = None
    outage_s: float | None = None
    slo_recovered_s: float | None = None
    slo_violation_start_s: float | None = None
    slo_violation_s: float | None = None


class InterruptionResult(Recovery, FaultStamps):
    """The fault, its point, and the recovery measured from that point's records."""

    point_label: str
    load_index: int
    target: str
    point_started_ns: int
    point_ended_ns: int
    point: PointResult

    @classmethod
    def of(cls, stamps: FaultStamps, rec: Recovery, *, point: PointResult, target: str,
           started_ns: int, ended_ns: int) -> InterruptionResult:
        """The stamps and the recovery side by side, with the point they hit."""
        return cls(**dict(stamps), **dict(rec), point_label=point.label,
                   load_index=point.index, target=target, point_started_ns=started_ns,
                   point_ended_ns=ended_ns, point=point)



_NS = 1e9


def _healthy(ttft: npt.NDArray[np.float64], e2e: npt.NDArray[np.float64],
             ok: npt.NDArray[np.bool_], slo: SLO) -> bool | None:
    if ttft.size == 0:
        return None
    if float((~ok).mean()) > slo.max_error_rate:
        return False
    for values, bound in ((ttft, slo.ttft_ms), (e2e, slo.e2e_ms)):
        if bound is None:
            continue
        v = np.where(ok & ~np.isnan(values), values, np.inf)
        # method="lower" keeps inf out of the interpolation (inf * 0 is nan).
        if float(np.percentile(v, slo.percentile, method="lower")) > bound:
            return False
    return True


def rolling_health(table_or_derived: Any, *, slo: SLO, from_ns: float, to_ns: float,
                   window_s: float = 1.0, step_s: float = 0.1
                   ) -> tuple[npt.NDArray[np.float64], list[bool | None]]:
    """Window ends (ns) from ``from_ns`` to ``to_ns`` every ``step_s``, and each window's
    health (None: no request in it)."""
    # Imported here: the study imports this package, and metrics imports the study.
    from acceval.metrics.derive import derive

    d = table_or_derived if hasattr(table_or_derived, "sent_ns") else derive(table_or_derived)
    keep = d.measured & ~np.isnan(d.sent_ns)
    order = np.argsort(d.sent_ns[keep], kind="stable")
    sent = d.sent_ns[keep][order]
    ttft, e2e, ok = d.ttft_ms[keep][order], d.e2e_ms[keep][order], d.ok[keep][order]
    ends = np.arange(from_ns + step_s * _NS, to_ns + step_s * _NS, step_s * _NS)
    lo = np.searchsorted(sent, ends - window_s * _NS, side="right")
    hi = np.searchsorted(sent, ends, side="right")
    health = [_healthy(ttft[a:b], e2e[a:b], ok[a:b], slo) for a, b in zip(lo, hi, strict=True)]
    return ends, health


def recovery(table: pa.Table | Derived, events: FaultStamps, *, slo: SLO, sent: int | None = None,
             window_s: float = 1.0, step_s: float = 0.1) -> Recovery:
    """Recovery metrics of one interrupted point (``table``: that point's records;
    ``sent``: what the runner says it issued, to check that every request is accounted for)."""
    from acceval.metrics.derive import Derived, derive

    d = table if isinstance(table, Derived) else derive(table)
    n = int(d.n)
    unfinished = int((np.isnan(d.done_ns)).sum())
    base = Recovery(requests=n, ok=int(d.ok.sum()), failed=int((~d.ok).sum()),
                    unfinished=unfinished,
                    accounted=unfinished == 0 and (sent is None or sent == n),
                    window_s=window_s, step_s=step_s)
    fault = events.fault_ns
    if fault is None:
        return base
    f = float(fault)
    after = d.done_ns >= f
    victims = after & ~d.ok
    ok_after = d.ok & (d.sent_ns >= f)
    end = float(np.nanmax(d.sent_ns)) if n else f
    ends, health = rolling_health(d, slo=slo, from_ns=f, to_ns=end, window_s=window_s,
                                  step_s=step_s)
    start_s, recovered_s, violation_s = _violation(ends, health, f, window_s, step_s)
    return base.model_copy(update={
        "failed_after_fault": int(victims.sum()),
        "failed_by_kind": dict(sorted(Counter(
            k for k in d.error_kind[victims].tolist() if k is not None).items())),
        "in_flight_at_fault": int(((d.sent_ns < f) & after).sum()),
        "sent_after_fault": int((d.sent_ns >= f).sum()),
        "time_to_first_success_s": (float((np.nanmin(d.done_ns[ok_after]) - f) / _NS)
                                    if ok_after.any() else None),
        "outage_s": (events.ready_ns - fault) / _NS if events.ready_ns is not None else None,
        "slo_recovered_s": recovered_s, "slo_violation_start_s": start_s,
        "slo_violation_s": violation_s})


def _violation(ends: npt.NDArray[np.float64], health: list[bool | None], f: float,
               window_s: float, step_s: float) -> tuple[float | None, float | None, float | None]:
    """(violation start, recovered, violation length) in s after the fault ``f`` (ns)."""
    bad = [i for i, h in enumerate(health) if h is False]
    if not bad:
        return None, 0.0, 0.0
    last_bad = bad[-1]
    # The first bad window holds a failure the window one step earlier did not.
    start_s = max(0.0, float(ends[bad[0]] - step_s * _NS - f) / _NS)
    if not any(h is not None for h in health[last_bad + 1:]):
        return start_s, None, None
    # The window that ends one step after the last bad one starts here.
    recovered = float(ends[last_bad]) + step_s * _NS - window_s * _NS
    recovered_s = max(0.0, (recovered - f) / _NS)
    return start_s, recovered_s, recovered_s - start_s
