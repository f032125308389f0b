"""A real run against the mock server with repeats: intervals in the result, compare judging
by them, and the run exported as vLLM bench JSON, imported, exported again unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import acceval
from acceval.interchange import export_vllm, import_files
from acceval.report import render
from acceval.report.compare import compare_runs
from acceval.results.store import read_records
from acceval.run_result import RunResult

STUDY = """\
name: repeats
tasks: {source: "builtin:arithmetic", count: 6, seed: 3}
targets:
  - name: mock
    serve: {engine: mock, options: {ttft_ms: 8, itl_ms: 1, answers: "@tasks"}}
load:
  - {concurrency: [2], repeats: 3}
  - {poisson_rps: [40]}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    root = tmp_path_factory.mktemp("repeats")
    study = root / "study.yaml"
    study.write_text(STUDY)
    return acceval.run(study, out_dir=root / "runs", progress=False)


def test_repeats_give_intervals_and_keep_the_first_run_as_the_point(
        run: tuple[RunResult, Path]) -> None:
    result, _ = run
    t = result.target("mock")
    assert [p.label for p in t.points] == ["concurrency 2", "poisson 40 rps"]
    (rep,) = t.repeats
    assert rep.label == "concurrency 2" and rep.runs == 3
    assert rep.labels[1:] == ["concurrency 2 · repeat 2", "concurrency 2 · repeat 3"]
    assert [p.repeat for p in rep.points] == [1, 2]
    assert len({p.seeds.get("arrivals", p.index) for p in rep.points}) == 2
    i = rep.ttft_p95_ms
    assert i.n == 3 and i.values[0] == t.points[0].summary.ttft_ms.p95
    assert i.low is not None and i.high is not None and i.low <= i.mean <= i.high
    assert rep.request_throughput_rps.n == 3
    assert "## Repeats" in render(result, "md")


# compare leaves out a point either run did not trust, and a busy host leaves points untrusted
# (seen in a loaded run of the parallel phase: no repeat rows at all).
@pytest.mark.timing
def test_compare_uses_the_repeat_intervals(run: tuple[RunResult, Path]) -> None:
    result, run_dir = run
    rows = compare_runs([result, result], [read_records(run_dir)] * 2, n_boot=100)
    repeated = [r for r in rows if r.metric.endswith("(mean of repeats)")]
    assert {r.metric.split()[0] for r in repeated} == {"ttft_p50_ms", "ttft_p95_ms",
                                                         "ttft_p99_ms", "throughput_rps"}
    assert all(r.beyond_noise is False and "no clear difference" in r.rule for r in repeated)
    # The point without repeats keeps the one-run rule.
    single = [r for r in rows if r.load == "poisson 40 rps" and r.metric == "throughput_rps"]
    assert single and single[0].beyond_noise is None


def test_exported_vllm_json_reads_back_unchanged(run: tuple[RunResult, Path],
                                                 tmp_path: Path) -> None:
    _, run_dir = run
    first = export_vllm(run_dir, tmp_path / "a")
    assert len(first) == 4  # two points, two repeats
    imported, imported_dir = import_files(first, "vllm", out_dir=tmp_path / "runs")
    again = export_vllm(imported_dir, tmp_path / "b")
    assert [p.name for p in again] == [p.name for p in first]
    for a, b in zip(first, again, strict=True):
        ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
        changed = {k for k in ja if ja[k] != jb[k]}
        # Means and stds are sums over the requests, which the two runs hold in a different
        # order (completion against send): equal up to the last bits of the float.
        sums = {k for k in changed if k.startswith(("mean_", "std_"))}
        for k in sums:
            assert jb[k] == pytest.approx(ja[k], rel=1e-12), (a.name, k)
        # The import is a run of its own: a new id, and its creation time as the date, which
        # reads the same as the original's when both fell in one second (seen on a fast host).
        assert changed - sums - {"date"} == {"acceval_run_id"}, a.name
        assert jb["date"] >= ja["date"], a.name
        assert ja["ttfts"] and ja["completed"] == len([e for e in ja["errors"] if not e])
    original = {p.label: p.summary for p in run[0].target("mock").points}
    back = {p.label: p.summary for p in imported.target("mock").points}
    for label, s in original.items():
        # Means and stds are sums in another order (above): equal up to the float's last bits.
        for metric in ("ttft_ms", "e2e_ms"):
            a, b = getattr(s, metric).model_dump(), getattr(back[label], metric).model_dump()
            assert b == pytest.approx(a, rel=1e-12), (label, metric)
        assert back[label].request_throughput_rps == s.request_throughput_rps
        # TPOT and ITL too (the mock answers these arithmetic tasks in one chunk: none).
        for name in ("tpot_ms", "itl_ms", "output_tokens"):
            a, b = getattr(s, name), getattr(back[label], name)
            assert b.count == a.count, name
            assert b.p50 == (None if a.p50 is None else pytest.approx(a.p50, rel=1e-12)), name
    for path in first:
        data = json.loads(path.read_text())
        assert data["p50_ttft_ms"] == pytest.approx(data["median_ttft_ms"])
    poisson = json.loads(next(p for p in first if "poisson" in p.name).read_text())
    assert poisson["request_rate"] == 40.0 and poisson["max_concurrency"] is None
