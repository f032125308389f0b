"""Load generators on a real Ray cluster on this host: a head and a second node with a custom
resource and a label, started with Ray's own cluster utilities."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pyarrow.compute as pc
import pytest

from acceval.errors import StudyError
from acceval.metrics import derive
from acceval.pipeline import execute
from acceval.results.store import PARTS_DIR, read_records
from acceval.study import study_from_dict
from helpers.canary import KEY, Cli, canary_study, echo_server, leaks, records_text
from helpers.cli import mock_target, write_study

# Live timings: runs alone, in the timing phase. Ray is looked up, not imported, when the file
# is collected (importing it costs each collecting worker about 2 s of CPU).
pytestmark = [pytest.mark.timing, pytest.mark.cpu_heavy,
              pytest.mark.skipif(find_spec("ray") is None,
                                 reason="the [ray] extra is part of make test")]


@pytest.fixture(scope="module")
def cluster() -> Any:
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True,
                head_node_args={"num_cpus": 2, "include_dashboard": False})
    east = c.add_node(num_cpus=2, resources={"client-east": 2}, labels={"region": "east"})
    c.wait_for_nodes()
    yield c, east
    c.shutdown()


def _study(execution: dict[str, Any] | None, *, min_duration_s: float = 0) -> dict[str, Any]:
    mock = {"engine": "mock", "options": {"ttft_ms": 15, "itl_ms": 1, "output_tokens": 6}}
    study: dict[str, Any] = {
        "name": "scale",
        "tasks": {"source": "builtin:arithmetic", "count": 12, "max_tokens": 8},
        "targets": [{"name": "a", "serve": mock}, {"name": "b", "serve": mock}],
        "load": [{"concurrency": [3], "warmup_requests": 2, "min_duration_s": min_duration_s},
                 {"poisson_rps": [40], "min_requests": 30}],
    }
    if execution is not None:
        study["execution"] = execution
    return study


def _counts(run_dir: Path) -> Counter[tuple[str, int, bool]]:
    t = read_records(run_dir)
    return Counter(zip(t["target"].to_pylist(), t["load_index"].to_pylist(),
                       t["warmup"].to_pylist(), strict=True))


def test_a_ray_run_has_the_local_runs_records_and_counts(cluster: Any, tmp_path: Path) -> None:
    c, east = cluster
    local = study_from_dict(_study(None))
    placed = study_from_dict(_study({
        "backend": "ray", "address": c.address, "clients": 2,
        "placement": [{"target": "b", "resources": {"client-east": 0.5},
                       "labels": {"region": "east"}, "num_cpus": 0.5}]}))
    r_local, d_local = execute(local, base_dir=tmp_path, out_dir=tmp_path / "l", progress=False)
    r_ray, d_ray = execute(placed, base_dir=tmp_path, out_dir=tmp_path / "r", progress=False)

    assert read_records(d_ray).schema == read_records(d_local).schema
    assert _counts(d_ray) == _counts(d_local)
    records = read_records(d_ray)
    ids = records["request_id"].to_pylist()
    assert len(ids) == len(set(ids))
    # Each task was measured as often as the local run measured it, point by point.
    for t in ("a", "b"):
        for i in (0, 1):
            def tasks(d: Path, t: str = t, i: int = i) -> Counter[str]:
                rows = read_records(d).filter(pc.and_(
                    pc.equal(read_records(d)["target"], t),
                    pc.and_(pc.equal(read_records(d)["load_index"], i),
                            pc.invert(read_records(d)["warmup"]))))
                return Counter(rows["task_id"].to_pylist())
            assert tasks(d_ray) == tasks(d_local)

    log = json.loads((d_ray / "result.json").read_text())["log"]
    assert log["execution"]["backend"] == "ray"
    gens = {t["name"]: t["load_generators"] for t in log["targets"]}
    assert len(gens["a"]) == len(gens["b"]) == 2
    assert {g["node_id"] for g in gens["b"]} == {east.node_id}    # placed by resource+label
    assert len({g["pid"] for g in gens["a"] + gens["b"]}) == 4
    for p in (q for t in log["targets"] for q in t["points"]):
        assert p["stopped_by"] == "min_satisfied"
        assert p["seeds"]["load_generators"] == 2

    # Percentiles come from the merged raw records: the two generators' own rows, put
    # together, give the result's figure exactly (nothing was averaged).
    point = r_ray.target("a").points[1]
    rows = records.filter(pc.and_(pc.equal(records["target"], "a"),
                                  pc.equal(records["load_index"], 1)))
    first = min(rows["request_id"].to_pylist())
    own = [rows.filter(pc.equal(pc.bit_wise_and(pc.subtract(rows["request_id"], first), 1), k))
           for k in (0, 1)]
    assert all(o.num_rows > 0 for o in own)
    pooled = np.concatenate([derive(o).ttft_ms[derive(o).measured] for o in own])
    assert point.summary.ttft_ms.p99 == pytest.approx(float(np.percentile(pooled, 99)))
    assert r_local.target("a").points[1].summary.requests == point.summary.requests
    # The report says where the load came from; a local run's does not.
    assert "Where the load came from" in (d_ray / "report.html").read_text()
    assert "Where the load came from" not in (d_local / "report.html").read_text()


def _kill_first_running_generator(stop: threading.Event, killed: list[int]) -> None:
    while not stop.is_set():
        for proc in psutil.process_iter(["cmdline"]):
            cmd = " ".join(proc.info["cmdline"] or [])
            if "LoadGenerator.run" in cmd:
                time.sleep(1.0)   # well inside the point
                proc.kill()
                killed.append(proc.pid)
                return
        time.sleep(0.05)


def test_a_generator_killed_mid_point_leaves_the_other_target_complete(
        cluster: Any, tmp_path: Path) -> None:
    """The two targets run at the same time; one generator of one of them is killed."""
    c, _ = cluster
    study = study_from_dict(_study({"backend": "ray", "address": c.address, "clients": 2},
                                   min_duration_s=3.0))
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_running_generator, args=(stop, killed))
    killer.start()
    try:
        result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "k",
                                  progress=False)
    finally:
        stop.set()
        killer.join()
    assert killed
    assert result.log.execution is not None and result.log.execution.parallel_targets
    a, b = result.target("a"), result.target("b")
    # The two targets' first points overlapped in time: they were measured together.
    assert a.points[0].started_ns < b.points[0].ended_ns
    assert b.points[0].started_ns < a.points[0].ended_ns
    hit, other = (a, b) if a.failure else (b, a)
    assert hit.failure is not None and "lost during point 'concurrency 3'" in hit.failure
    assert [p.stopped_by for p in hit.points] == ["client_lost"]
    assert hit.points[0].summary.requests > 0          # what it streamed before is kept
    # ... and the point counts it, as the records do (issue 30: "800 sent" beside 1,053
    # records kept and summarised).
    kept = read_records(run_dir).filter(pc.equal(read_records(run_dir)["target"], hit.name))
    assert hit.points[0].sent == kept.num_rows
    assert hit.points[0].completed == kept.num_rows - kept["error_kind"].drop_null().length()
    assert other.failure is None
    assert [p.stopped_by for p in other.points] == ["min_satisfied", "min_satisfied"]
    assert any(w.startswith(f"{hit.name}: point 'concurrency 3' is incomplete: a load "
                            "generator was lost") for w in result.warnings)
    assert (run_dir / "report.html").exists()


def test_demand_replay_and_the_interruption_work_through_ray(cluster: Any,
                                                            tmp_path: Path) -> None:
    """The driver keeps the scenarios: the replay's schedule is dealt out to the generators,
    and the server it kills and restarts is the driver's local one."""
    c, _ = cluster
    study = study_from_dict({
        "name": "replay", "seed": 2,
        "tasks": {"source": "builtin:arithmetic", "count": 12, "max_tokens": 8},
        "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
            "ttft_ms": 2, "itl_ms": 1, "output_tokens": 4}}}],
        "slo": {"ttft_ms": 100, "e2e_ms": 200},
        "load": [{"concurrency": [2], "min_requests": 12}],
        "demand": {"profile": "builtin:flat", "peak_rps": 40,
                   "replay": {"compress_to_s": 3.0, "seed": 1}},
        "interruption": {"target": "m", "at_s": 1.0, "down_s": 0.8,
                         "action": "kill_restart"},
        "execution": {"backend": "ray", "address": c.address, "clients": 2},
    })
    result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "rp",
                              progress=False)
    t = result.target("m")
    assert t.failure is None
    assert t.replay is not None and t.replay.point.sent > 60
    i = t.interruption
    assert i is not None and i.error is None and i.point_label == "demand replay"
    table = read_records(run_dir)
    sel = table.filter(pc.equal(table["load_index"], i.load_index))
    assert sel.num_rows == i.requests == i.point.sent      # every request has its row
    assert i.accounted and i.ok + i.failed == i.requests
    assert i.failed_after_fault > 0 and i.restart_s is not None
    log = next(x for x in result.log.targets if x.name == "m")
    assert log.replay is not None and log.replay.seeds["load_generators"] == 2


def test_ctrl_c_mid_point_stops_the_generators_and_keeps_what_they_streamed(
        cluster: Any, tmp_path: Path) -> None:
    """The generators run one call at a time, so a point left mid-way cannot wait for a
    graceful close: the run ends them at once, and its records up to then are kept."""
    c, _ = cluster
    study = {"name": "ctrlc",
             "tasks": {"source": "builtin:arithmetic", "count": 5000, "seed": 1, "max_tokens": 8},
             "targets": [mock_target("m", ttft_ms=5, itl_ms=1, output_tokens=4)],
             "load": [{"concurrency": [4], "min_duration_s": 60, "max_duration_s": 90}]}
    path = write_study(tmp_path / "s.yaml", study)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acceval", "run", str(path), "--out", str(runs), "--no-progress",
         "--ray", c.address, "--clients", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while (time.monotonic() < deadline and proc.poll() is None
               and len(list(runs.glob(f"*/{PARTS_DIR}/part-*.parquet"))) < 2):
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1]
        assert _generators(), "no load generator was running"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        while _generators() and time.monotonic() - sent < 30:
            time.sleep(0.1)
        gone = time.monotonic() - sent
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 1 and "interrupted" in err and "Traceback" not in err, err
    assert not _generators(), "a load generator outlived the run"
    # A graceful close would wait 5 s behind the point the generators are still running.
    assert gone < 4.0, f"the generators sent load for {gone:.1f} s after Ctrl-C"
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    (point,) = result["targets"][0]["points"]
    assert result["interrupted"] is True and point["stopped_by"] == "interrupted"
    measured = read_records(run_dir).filter(pc.invert(read_records(run_dir)["warmup"]))
    assert point["summary"]["requests"] == measured.num_rows > 0


def test_clients_alone_starts_a_private_ray_for_the_run_and_ends_it(
        cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`acceval run --clients 2`, no cluster named: the run starts a Ray of its own on this
    host, even with another one running here (this module's, which a plain ``ray.init()``
    would join and then refuse its CPUs), sends through two generators, and leaves nothing
    running; Ray's token notice stays off the console.

    The same run is the secret canary's Ray path (issue 30): its target is a server that
    echoes the API key everywhere it can; the actors read the key from their environment
    and stream what the server echoed; every file the run wrote, the private Ray's session
    folder (put under a folder of the test's own by RAY_TMPDIR) and every stream printed
    are searched for the key."""
    monkeypatch.setenv("CANARY_KEY", KEY)
    ray_tmp = Path(tempfile.mkdtemp(prefix="acr-", dir="/tmp"))  # Ray's sockets: short paths
    monkeypatch.setenv("RAY_TMPDIR", str(ray_tmp))
    before = set(_generators())
    cli = Cli(tmp_path)
    try:
        with echo_server() as echo:
            study = canary_study(tmp_path, echo, levels=(2,))
            code = cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress",
                       "--clients", "2")
        assert code in (0, 3), cli.last
        assert "Token authentication" not in cli.last
        (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
        result = json.loads((run_dir / "result.json").read_text())
        assert result["log"]["execution"]["backend"] == "ray"
        assert result["log"]["execution"]["address"] is None          # private
        (t,) = result["log"]["targets"]
        assert len(t["load_generators"]) == 2
        assert len({g["pid"] for g in t["load_generators"]}) == 2
        measured = read_records(run_dir).filter(pc.invert(read_records(run_dir)["warmup"]))
        assert measured.num_rows == result["targets"][0]["points"][0]["summary"]["requests"]
        assert measured.num_rows >= 8
        assert set(_generators()) <= before, "a load generator outlived the run"
        # The echo came through the generators, and was kept redacted.
        assert "[redacted]" in records_text(run_dir)
        assert list(ray_tmp.glob("ray/session_*/logs/*")), "the run's Ray logged elsewhere"
        assert cli("report", str(run_dir), "--format", "md") == 0
        found = leaks(tmp_path) + leaks(ray_tmp) + cli.leaks()
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert found == []


def _generators() -> list[int]:
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if "LoadGenerator" in " ".join(proc.info["cmdline"] or []):
                out.append(proc.pid)
    return out


def test_a_placement_on_an_unknown_target_is_a_study_error() -> None:
    with pytest.raises(StudyError, match=r"execution\.placement names nowhere"):
        study_from_dict(_study({"backend": "ray", "placement": [{"target": "nowhere"}]}))
