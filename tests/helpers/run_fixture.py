"""A small but complete run folder for report, catalog and compare tests.

Records are synthetic but go through the real path: ``Record`` → ``records_to_table`` →
``records.parquet``, and a run log like the runner's; the real analysis builds the
RunResult through ``acceval.analysis.analyze``, as a run would. Some outputs carry HTML/JS
payloads that must never run in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.analysis import analyze
from acceval.results.records import Record, records_to_table
from acceval.results.runlog import EndpointLog, PointLog, RunLog, TargetLog
from acceval.results.store import RECORDS_FILE
from acceval.run_result import Environment, RunResult
from acceval.study import Study

MS = 1_000_000
PAYLOADS = (
    "<script>window.__acceval_pwned = 1;</script>",
    '<img src=x onerror="window.__acceval_pwned = 2">',
    "</script><script>window.__acceval_pwned = 3;</script><!--",
)

# name: (ttft ms, itl ms, accuracy, usd per chip-hour, error every n)
TARGETS: dict[str, tuple[float, float, float, float, int]] = {
    "fast": (40.0, 8.0, 0.9, 4.0, 0),
    "cheap": (120.0, 25.0, 0.8, 0.9, 13),
}
LOADS = (("concurrency=1", 1.0), ("concurrency=4", 4.0))


def study(description: str = "Fixture <script>window.__acceval_pwned = 4;</script>",
          *, economics: bool = True) -> Study:
    priced = {n: {"price": {"usd_per_hour": TARGETS[n][3], "source": "fixture <quote>"},
                  "energy": {"probe": "none", "device_tdp_w": 35.0, "boundary": "wall",
                             "node_overhead_w": 20.0, "psu_efficiency": 0.94}}
              if economics else {} for n in TARGETS}
    return Study.model_validate({
        "name": "fixture", "description": description, "seed": 3,
        "tasks": {"source": "builtin:arithmetic", "count": 40, "seed": 1},
        "targets": [{"name": n, "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                     "platform": {"hardware": "cpu", "chips": 1}, **priced[n]}
                    for n in TARGETS],
        "load": [{"concurrency": [1, 4]}],
        "slo": {"ttft_ms": 200, "tpot_ms": 30},
        "quality": {"min_accuracy": 0.7},
    })


def records(*, n: int = 40, seed: int = 0, slow: float = 1.0) -> list[Record]:
    rng = np.random.default_rng(seed)
    out: list[Record] = []
    rid = 0
    for name, (ttft, itl, acc, _, err_every) in TARGETS.items():
        t_ns = 0
        for li, (label, level) in enumerate(LOADS):
            for i in range(n):
                sent = t_ns + int(i * 50 * MS / level)
                first = sent + int(rng.gamma(8, ttft * slow * level ** 0.5 / 8) * MS)
                chunks = [first + int(k * itl * slow * MS) for k in range(8)]
                error = err_every and i % err_every == err_every - 1
                # The first answers of each point are wrong and carry a payload, so the
                # report's sample of outputs (wrong answers first) always shows them.
                correct = i >= len(PAYLOADS) and bool(rng.random() < acc)
                text = "42" if correct else PAYLOADS[i] if i < len(PAYLOADS) else "41"
                out.append(Record(
                    target=name, load_index=li, load_label=label, request_id=rid,
                    task_id=f"task{i:03d}", scheduled_ns=sent, sent_ns=sent,
                    first_byte_ns=first - MS, first_token_ns=None if error else first,
                    done_ns=first + 3 * MS if error else chunks[-1],
                    chunk_ns=[] if error else chunks, prompt_tokens=20,
                    output_tokens=None if error else 8, tokens_from=None if error else "usage",
                    output_text=None if error else text,
                    finish_reason=None if error else "stop",
                    http_status=500 if error else 200, error_kind="http" if error else None,
                    error_detail=PAYLOADS[2] if error else None,
                    correct=None if error else correct,
                    check_reason=None if error else ("match" if correct else
                                                     "expected 42, got <b>41</b>"),
                    extracted=None if error else text[:10],
                ))
                rid += 1
            t_ns = out[-1].done_ns or t_ns
            t_ns += 100 * MS
    return out


def build(run_dir: Path, *, economics: bool = True, seed: int = 0, slow: float = 1.0,
          run_id: str | None = None, with_study: Study | None = None,
          base_dir: Path | None = None,
          edit_log: Callable[[RunLog], None] | None = None) -> RunResult:
    """Write records.parquet and result.json into ``run_dir`` and return the RunResult that
    the real ``analyze`` makes of them and of the run log the runner would have written.
    ``with_study`` replaces the fixture study (its targets must be the fixture's);
    ``edit_log`` changes the run log before the analysis (what the runner saw)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    s = with_study or study(economics=economics)
    table = records_to_table(records(seed=seed, slow=slow))
    pq.write_table(table, run_dir / RECORDS_FILE)
    log = RunLog(run_id=run_id or run_dir.name, created_utc="2025-01-02T03:04:05+00:00",
                 finished_utc="2025-01-02T03:05:00+00:00")
    for name in TARGETS:
        sel = table.filter(pc.equal(table["target"], name))
        tl = TargetLog(name=name, fingerprint={"server": "fixture/1.0"},
                       endpoint=EndpointLog(base_url="http://127.0.0.1:9/v1", model="m"))
        for li, (label, level) in enumerate(LOADS):
            rows = sel.filter(pc.equal(sel["load_index"], li)).to_pylist()
            tl.points.append(PointLog(
                index=li, label=label, kind="concurrency", level=level, requested_rate_rps=None,
                stopped_by="count", sent=len(rows), completed=len(rows), errors=0,
                started_ns=min(r["sent_ns"] for r in rows),
                ended_ns=max(r["done_ns"] for r in rows)))
        log.targets.append(tl)
    if edit_log is not None:
        edit_log(log)
    result = analyze(s, log, table, None, base_dir=base_dir or run_dir, run_dir=run_dir)
    # A known machine, so that snapshots do not depend on the one running the tests.
    result.environment = Environment(host="fixture-host", cpu_count=2)
    result.software = {"acceval": "0.1.0", "python": "3.11"}
    result.warnings.append("a warning with <b>markup</b>")
    result.save(run_dir)
    return result
