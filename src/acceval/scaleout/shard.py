"""Splitting one load point over several load generators, and merging what they ran.

Each load generator runs the ordinary :func:`~acceval.loadgen.runner.run_point` on its share:

- closed loop: the concurrency is split (4 over 3 generators: 2, 1, 1), each generator with
  its own slice of the tasks, so the point's total requests and each task's attempts are what
  one process would send;
- open loop: the point's schedule is drawn once, as one process would draw it, and dealt out
  round robin (generator k sends arrivals k, k + n, k + 2n, ...), so the merged sends follow the
  same arrival process at the same rate.

Request ids interleave (generator k of n issues ``first + k``, ``first + k + n``, ...), so they
stay unique across generators and join with a server's own log. What comes back is raw: the
records themselves, the raw dispatch lags and each generator's own counts, merged here by
summing counts and pooling the lags, never by averaging percentiles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, StoppedBy, lag_stats, point_schedule
from acceval.results.records import Record


@dataclass(frozen=True)
class Shard:
    """One load generator's share of one point."""

    client: int                      # k, 0-based
    clients: int                     # n generators sharing the point
    spec: PointSpec                  # its share: level, requests, warm-up, in-flight cap
    prompts: tuple[int, ...]         # indices into the target's prompts
    schedule_ns: npt.NDArray[np.int64] | None   # open loop: its arrivals (ns from the start)
    first_request_id: int
    request_id_step: int


def _split(total: int, weights: list[int]) -> list[int]:
    """``total`` in whole parts proportional to ``weights`` (largest remainders first)."""
    w = sum(weights)
    exact = [total * x / w for x in weights]
    parts = [int(e) for e in exact]
    order = sorted(range(len(weights)), key=lambda i: (parts[i] - exact[i], i))
    for i in order[:total - sum(parts)]:
        parts[i] += 1
    return parts


def split_point(spec: PointSpec, n_prompts: int, clients: int, *, first_request_id: int,
                schedule_ns: npt.NDArray[np.int64] | None = None,
                prompts: Sequence[Prompt] = ()) -> tuple[list[Shard], dict[str, Any]]:
    """The shares of ``clients`` load generators, and the point's seed provenance.

    Fewer generators are used when the point has less to share: a closed loop of
    concurrency 2 uses at most 2."""
    if clients < 1 or n_prompts < 1:
        raise ValueError("split_point needs at least one client and one prompt")
    seeds: dict[str, Any] = {}
    offsets: npt.NDArray[np.int64] | None = None
    if spec.family.loop == "open":
        if schedule_ns is not None:
            offsets = np.asarray(schedule_ns, dtype=np.int64)
            seeds["arrivals"] = "given schedule"
        else:
            offsets, seeds["arrivals"] = point_schedule(spec, prompts)
        n = clients
    else:
        n = min(clients, int(spec.level))
    if n == 1:
        return [Shard(0, 1, spec, tuple(range(n_prompts)), offsets, first_request_id, 1)], seeds
    owned = [tuple(range(k, n_prompts, n)) if n_prompts >= n else (k % n_prompts,)
             for k in range(n)]
    sizes = [len(p) for p in owned]
    min_requests = [max(1, m) for m in _split(spec.min_requests, sizes)]
    warmup = _split(spec.warmup_requests, [1] * n)
    levels = _split(int(spec.level), [1] * n) if spec.family.loop == "closed" else None
    cap = -(-spec.max_in_flight // n)
    shards = []
    for k in range(n):
        level = float(levels[k]) if levels is not None else spec.level / n
        share = dataclasses.replace(spec, level=level, min_requests=min_requests[k],
                                    warmup_requests=warmup[k], max_in_flight=max(1, cap))
        shards.append(Shard(k, n, share, owned[k],
                            None if offsets is None else offsets[k::n].copy(),
                            first_request_id + k, n))
    return shards, seeds


_STOP_ORDER: dict[str, int] = {"min_satisfied": 0, "max_duration": 1, "interrupted": 2,
                               "client_lost": 3}


@dataclass
class Streamed:
    """What one generator streamed back, counted as its records arrive: a generator lost
    mid-point sends no summary, and the point must count what the records keep."""

    sent: int = 0
    completed: int = 0
    errors: int = 0
    warmup: int = 0

    def add(self, rec: Record) -> None:
        self.sent += 1
        self.warmup += int(rec.warmup)
        if rec.error_kind is None:
            self.completed += 1
        else:
            self.errors += 1


def merge_runs(spec: PointSpec, runs: list[PointRun], lags_ns: list[int],
               seeds: dict[str, Any], *, lost: int = 0,
               streamed: list[Streamed] | None = None) -> PointRun:
    """One point's run from its generators' runs (``lost`` of them did not finish: the
    point is then ``client_lost``, and ``streamed`` counts what each lost one sent before,
    whose records are kept). Counts add up, the dispatch lags are pooled raw, and the
    event-loop self-check keeps the most loaded generator's lags (any overloaded client
    makes the point's latencies describe the client)."""
    extra = streamed or []
    if not runs:
        raise ValueError("merge_runs needs at least one generator's run")
    stopped: StoppedBy = max((r.stopped_by for r in runs), key=lambda s: _STOP_ORDER[s])
    if lost:
        stopped = "client_lost"
    lag50, lag99, lagmax = lag_stats(lags_ns)
    loops = [r.loop_lag_ms for r in runs if r.loop_lag_ms is not None]
    worst = max(loops, key=lambda d: (d.p99 if d.p99 is not None else -1.0), default=None)
    # A rate level is the point's rate; a shape's is its schedule's, the shares' rates added
    # (unknown when a share was lost).
    rates = [r.requested_rate_rps for r in runs]
    rate: float | None = None
    if spec.family.loop == "open":
        rate = spec.level if spec.family.rate_levels else (
            None if lost or None in rates else float(sum(x or 0.0 for x in rates)))
    return PointRun(
        spec=spec, requested_rate_rps=rate,
        started_ns=min(r.started_ns for r in runs), ended_ns=max(r.ended_ns for r in runs),
        sent=sum(r.sent for r in runs) + sum(x.sent for x in extra),
        completed=sum(r.completed for r in runs) + sum(x.completed for x in extra),
        errors=sum(r.errors for r in runs) + sum(x.errors for x in extra), stopped_by=stopped,
        seeds={**seeds, "load_generators": len(runs) + lost},
        warmup=sum(r.warmup for r in runs) + sum(x.warmup for x in extra),
        held_by_cap=sum(r.held_by_cap for r in runs),
        lag_p50_ms=lag50, lag_p99_ms=lag99, lag_max_ms=lagmax, loop_lag_ms=worst)


__all__ = ["Shard", "Streamed", "merge_runs", "split_point"]
