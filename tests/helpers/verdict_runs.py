"""Runs for the verdict's rules, built through the real path.

Each target's load points are synthetic records (``Record`` → ``records_to_table``) plus the
run log the runner writes; the RunResult is what :func:`acceval.analysis.analyze` makes of
them. A point can be made slow (misses the SLO), late (the load generator fell behind: its
sends trail the schedule) or short (few requests, as after a kill).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from acceval.analysis import analyze
from acceval.results.records import Record, records_to_table
from acceval.results.runlog import EndpointLog, LocalServerInfo, PointLog, RunLog, TargetLog
from acceval.results.store import RECORDS_FILE
from acceval.run_result import RunResult
from acceval.study import Study

MS = 1_000_000


@dataclass(frozen=True)
class Point:
    rate_rps: float = 10.0
    n: int = 60
    ttft_ms: float = 20.0
    late_ms: float = 0.0      # each send trails its schedule by this much (degraded when > 10)
    accuracy: float = 1.0


@dataclass(frozen=True)
class Spec:
    name: str
    usd_per_hour: float = 1.0
    points: tuple[Point, ...] = (Point(),)
    extra: tuple[tuple[str, Any], ...] = ()  # more study fields of this target
    startup_s: float | None = None  # a local server's measured start-up, as the runner logs
    failure: str | None = None  # the target could not be measured, as the runner logs it


def study(specs: list[Spec], **extra: Any) -> Study:
    rates = sorted({p.rate_rps for s in specs for p in s.points})
    return Study.model_validate({
        "name": "verdict", "seed": 1,
        "tasks": {"source": "builtin:arithmetic", "count": 20, "seed": 1},
        "targets": [{"name": s.name,
                     "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                     "price": {"usd_per_hour": s.usd_per_hour}, **dict(s.extra)}
                    for s in specs],
        "load": [{"poisson_rps": rates}],
        "slo": {"ttft_ms": 100},
        "quality": {"min_accuracy": 0.8},
        **extra,
    })


def _records(name: str, index: int, p: Point, rng: np.random.Generator,
             first_id: int) -> list[Record]:
    out = []
    gap = int(1e9 / p.rate_rps)
    for i in range(p.n):
        sched = i * gap
        sent = sched + int(p.late_ms * MS)
        first = sent + int(p.ttft_ms * MS)
        correct = bool(rng.random() < p.accuracy)
        out.append(Record(
            target=name, load_index=index, load_label=f"poisson {p.rate_rps:g} rps",
            request_id=first_id + i, task_id=f"t{i % 20}", scheduled_ns=sched, sent_ns=sent,
            first_byte_ns=first, first_token_ns=first, done_ns=first + 5 * MS,
            chunk_ns=[first, first + 5 * MS], prompt_tokens=10, output_tokens=2,
            tokens_from="usage", output_text="42" if correct else "41", finish_reason="stop",
            http_status=200, correct=correct, check_reason="match" if correct else "wrong"))
    return out


def build(run_dir: Path, specs: list[Spec], **study_extra: Any) -> RunResult:
    """Write the run folder (records.parquet, result.json) and return its analysed result."""
    run_dir.mkdir(parents=True, exist_ok=True)
    s = study(specs, **study_extra)
    rates = sorted({p.rate_rps for sp in specs for p in sp.points})
    rng = np.random.default_rng(7)
    recs: list[Record] = []
    log = RunLog(run_id=run_dir.name, created_utc="2026-01-01T00:00:00+00:00")
    for sp in specs:
        tl = TargetLog(name=sp.name,
                       endpoint=EndpointLog(base_url="http://127.0.0.1:9/v1", model="m"))
        if sp.failure is not None:
            tl.failure = sp.failure
            log.targets.append(tl)
            continue
        if sp.startup_s is not None:
            tl.local_server = LocalServerInfo(engine="mock", model=None, precision=None,
                                              pid=None, startup_s=sp.startup_s)
        for p in sp.points:
            index = rates.index(p.rate_rps)
            rows = _records(sp.name, index, p, rng, len(recs))
            recs += rows
            tl.points.append(PointLog(
                index=index, label=rows[0].load_label, kind="poisson", level=p.rate_rps,
                requested_rate_rps=p.rate_rps, started_ns=rows[0].sent_ns or 0,
                ended_ns=rows[-1].done_ns or 0, sent=p.n, completed=p.n, errors=0,
                stopped_by="count"))
        log.targets.append(tl)
    table = records_to_table(recs)
    pq.write_table(table, run_dir / RECORDS_FILE)
    result = analyze(s, log, table, None, base_dir=run_dir)
    result.save(run_dir)
    return result
