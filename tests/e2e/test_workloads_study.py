"""The peer-workloads example end to end: synthetic multi-turn tasks, a burst and a ramp on
two served mocks, analysed and rendered; per-turn metrics and "not assessed" accuracy show."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc

import acceval
from acceval.results.store import read_records

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "peer-workloads.yaml"


def test_the_peer_workloads_example_runs_and_reports_per_turn(tmp_path: Path) -> None:
    study = tmp_path / EXAMPLE.name
    shutil.copy(EXAMPLE, study)
    result, run_dir = acceval.run(study)
    records = read_records(run_dir)
    labels = [p.label for p in result.targets[0].points]
    assert labels == ["concurrency 4", "burst 24", "ramp 2 → 30 rps"]
    for t in result.targets:
        conc, burst, ramp = t.points
        # Every conversation has three turns; the burst sent 24 first turns at once.
        assert conc.summary.turns is not None and [x.turn for x in conc.summary.turns] == [0, 1, 2]
        assert burst.requested_rate_rps is None and burst.sent == 72
        assert ramp.requested_rate_rps is not None and ramp.sent >= 3
        means = [x.prompt_tokens_mean for x in conc.summary.turns]
        assert means[0] < means[1] < means[2]  # type: ignore[operator]
        assert t.accuracy is None  # no checker: not assessed, never correct
    mine = records.filter(pc.equal(records["target"], "fast"))
    assert set(mine["turn"].to_pylist()) == {0, 1, 2}
    ok = mine.filter(pc.is_null(mine["error_kind"]))
    assert ok.num_rows == mine.num_rows
    # ignore_eos on the mock: every answer has the output length its task asked for.
    assert set(ok["finish_reason"].to_pylist()) == {"length"}
    md = acceval.render(result, "md")
    assert "## Multi-turn conversations: latency per turn" in md
    assert "not assessed (" in md
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'id="turns"' in page and "not assessed (" in page


def test_a_mooncake_trace_study_replays_its_timestamps(tmp_path: Path) -> None:
    import json

    import yaml

    trace = [{"timestamp": ms, "input_length": n, "output_length": 3, "hash_ids": h}
             for ms, n, h in ((0, 600, [0, 1]), (100, 520, [0]), (100, 30, []), (400, 40, []))]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in trace))
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({
        "name": "trace", "tasks": {"source": "mooncake:trace.jsonl", "tokenizer": "builtin:tiny"},
        "targets": [{"name": "m", "serve": {"engine": "mock"}}],
        "load": [{"trace_speed": [2]}]}))
    result, run_dir = acceval.run(tmp_path / "study.yaml")
    (point,) = result.targets[0].points
    assert point.label == "trace ×2" and point.sent == 4 and point.completed == 4
    assert point.seeds["arrivals"] == "task timestamps"
    assert point.summary.schedule_lag_ms.count == 4
    rec = read_records(run_dir).sort_by("request_id")
    offsets = [(s - point.started_ns) / 1e6 for s in rec["scheduled_ns"].to_pylist()]
    assert offsets == [0.0, 50.0, 50.0, 200.0]
    assert rec["output_tokens"].to_pylist() == [3] * 4   # ignore_eos: the trace's lengths
