"""A small but complete run folder for report, catalog and compare tests.

Records are synthetic but go through the real path: ``Record`` → ``records_to_table`` →
``records.parquet``, then ``summarize_point`` and the real economics functions build the
RunResult. Some outputs carry HTML/JS payloads that must never run in the report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from acceval.economics import (
    Measured,
    build_cost_inputs,
    compute_bill,
    energy_at_boundary,
    energy_outputs,
    frontier,
    sensitivity,
)
from acceval.economics.energy import BoundaryComponents
from acceval.metrics import accuracy, pass_at_1, summarize_point
from acceval.results.records import Record, records_to_table
from acceval.results.result import Gate, PointResult, RunResult, TargetResult
from acceval.results.store import RECORDS_FILE
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


def study(description: str = "Fixture <script>window.__acceval_pwned = 4;</script>") -> Study:
    return Study.model_validate({
        "name": "fixture", "description": description, "seed": 3,
        "tasks": {"source": "builtin:arithmetic", "count": 40, "seed": 1},
        "targets": [{"name": n, "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                     "platform": {"hardware": "cpu", "chips": 1},
                     "price": {"usd_per_hour": TARGETS[n][3], "source": "fixture <quote>"}}
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


def _economics(s: Study, tr: TargetResult) -> tuple[dict[str, Any], list[Any]]:
    spec = next(t for t in s.targets if t.name == tr.name)
    assert spec.price is not None
    cis, bills = [], []
    for p in tr.points:
        sm = p.summary
        assert sm.duration_s is not None and sm.accuracy is not None
        ci = build_cost_inputs(tr.name, chips=1, price=spec.price, load_label=p.label,
                               measured_values=Measured(sm.duration_s, sm.requests,
                                                        sm.accuracy.correct,
                                                        sm.output_tokens_total),
                               costs=spec.costs, study_costs=s.costs)
        cis.append(ci)
        bills.append(compute_bill(ci))
    best = min(bills, key=lambda b: b.cost_per_correct_usd)
    return {"best": best.to_dict(), "points": [b.to_dict() for b in bills]}, cis


def build(run_dir: Path, *, economics: bool = True, seed: int = 0, slow: float = 1.0,
          run_id: str | None = None) -> RunResult:
    """Write records.parquet and result.json into ``run_dir`` and return the RunResult."""
    run_dir.mkdir(parents=True, exist_ok=True)
    s = study()
    table = records_to_table(records(seed=seed, slow=slow))
    pq.write_table(table, run_dir / RECORDS_FILE)
    targets: list[TargetResult] = []
    all_inputs: list[Any] = []
    for name in TARGETS:
        sel = table.filter(pc.equal(table["target"], name))
        points = []
        for li, (label, level) in enumerate(LOADS):
            pt = sel.filter(pc.equal(sel["load_index"], li))
            summary = summarize_point(pt, slo=s.slo, requested_rate_rps=None)
            rows = pt.to_pylist()
            points.append(PointResult(
                index=li, label=label, kind="concurrency", level=level, requested_rate_rps=None,
                stopped_by="count", sent=len(rows), completed=len(rows),
                started_ns=min(r["sent_ns"] for r in rows),
                ended_ns=max(r["done_ns"] for r in rows), summary=summary))
        acc = accuracy(sel)
        tr = TargetResult(
            name=name, endpoint={"base_url": "http://127.0.0.1:9/v1", "model": "m"},
            platform={"hardware": "cpu", "chips": 1}, fingerprint={"server": "fixture/1.0"},
            points=points, accuracy=acc, pass_at_1=pass_at_1(sel),
            gate=Gate(passed=bool(acc.accuracy and acc.accuracy >= 0.7), required_accuracy=0.7))
        if economics:
            tr.economics, cis = _economics(s, tr)
            all_inputs += cis
            best = tr.points[0].summary
            assert best.duration_s is not None and best.accuracy is not None
            est = energy_at_boundary(35.0 * best.duration_s, "device", "wall",
                                     BoundaryComponents(node_overhead_w=20.0,
                                                        psu_efficiency=0.94),
                                     duration_s=best.duration_s, measured_origin="estimated")
            tr.energy = dataclasses.asdict(energy_outputs(
                est, correct=best.accuracy.correct, output_tokens=best.output_tokens_total,
                duration_s=best.duration_s))
        targets.append(tr)
    run_econ = None
    if economics:
        fr = frontier([compute_bill(ci) for ci in all_inputs])
        rep = sensitivity(all_inputs, s.costs.sensitivity)
        run_econ = {"frontier": dataclasses.asdict(fr), "sensitivity": dataclasses.asdict(rep)}
    result = RunResult(
        run_id=run_id or run_dir.name, study_name=s.name, created_utc="2025-01-02T03:04:05+00:00",
        finished_utc="2025-01-02T03:05:00+00:00", study=s.model_dump(mode="json"),
        environment={"host": "fixture-host", "cpu_count": 2},
        software={"acceval": "0.1.0", "python": "3.11"}, seeds={"study": 3, "tasks": 1},
        tasks={"source": "builtin:arithmetic", "count": 40, "attempts": 1},
        targets=targets, economics=run_econ, warnings=["a warning with <b>markup</b>"],
    )
    result.save(run_dir)
    return result
