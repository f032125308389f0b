"""Interruptions against a local ``acceval serve`` mock: kill and restart on the same port,
freeze (SIGSTOP/SIGCONT), and a user command. Recovery is measured from the records and must
agree with the injected downtime; every request sent is accounted for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from acceval.interruption import Injector, Interruption
from acceval.pipeline import execute
from acceval.results.store import read_records
from acceval.study import study_from_dict

pytestmark = pytest.mark.timing  # live timings: runs alone, in the timing phase


def _study(interruption: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "fault", "seed": 2,
        "tasks": {"source": "builtin:arithmetic", "count": 20, "seed": 1, "max_tokens": 8},
        "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
            "ttft_ms": 2, "itl_ms": 1, "output_tokens": 4}}}],
        "slo": {"ttft_ms": 100, "e2e_ms": 200},
        "interruption": {"target": "m", **interruption},
        **extra,
    }


def test_kill_and_restart_recovers_after_the_downtime(tmp_path: Path) -> None:
    down_s = 1.0
    study = study_from_dict(_study(
        {"at_s": 1.0, "down_s": down_s, "action": "kill_restart", "point": "poisson 60 rps"},
        load=[{"poisson_rps": [60], "min_duration_s": 4.0, "max_duration_s": 4.0}]))
    result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs",
                              progress=False)
    t = result.targets[0]
    assert t.failure is None
    assert [p.label for p in t.points] == ["poisson 60 rps"]  # the clean run stays the curve
    assert t.points[0].summary.errors == 0
    i = t.interruption
    assert i is not None and i.error is None
    assert i.point_label == "poisson 60 rps + kill_restart"

    # Every request sent is accounted for: one record each, completed or classified.
    table = read_records(run_dir)
    sel = table.filter(pc.equal(table["load_index"], i.load_index))
    assert sel.num_rows == i.requests == i.point.sent
    assert i.accounted and i.unfinished == 0
    assert i.ok + i.failed == i.requests
    assert i.failed_after_fault > 0 and "connect" in i.failed_by_kind

    restart_s = i.restart_s
    assert restart_s is not None and restart_s > 0  # the restart's own start-up, measured
    assert down_s <= i.outage_s <= down_s + restart_s + 0.5
    assert down_s <= i.time_to_first_success_s <= down_s + restart_s + 2.0
    assert down_s <= i.slo_recovered_s <= down_s + restart_s + 2.0
    assert i.slo_violation_s is not None and i.slo_violation_s >= down_s * 0.9


def test_freeze_makes_requests_wait_not_fail(tmp_path: Path) -> None:
    down_s = 1.0
    study = study_from_dict(_study(
        {"at_s": 1.0, "down_s": down_s, "action": "freeze"},
        load=[{"poisson_rps": [5], "min_duration_s": 0.3, "max_duration_s": 0.3}],
        demand={"profile": "builtin:flat", "peak_rps": 40,
                "replay": {"compress_to_s": 3.5, "seed": 1}}))
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    t = result.targets[0]
    i = t.interruption
    assert i is not None and i.error is None and i.point_label == "demand replay"
    assert i.accounted and i.failed == 0  # held, then answered after SIGCONT
    assert (i.point.summary.ttft_ms.max or 0) >= down_s * 1000 * 0.8
    assert down_s * 0.8 <= i.slo_recovered_s <= down_s + 2.0


def test_command_action_runs_the_command_and_the_restore(tmp_path: Path) -> None:
    spec = Interruption(target="x", at_s=0.05, down_s=0.2, action="command",
                        command=f"echo down > {tmp_path / 'a'}",
                        restore_command=f"echo up > {tmp_path / 'b'}")

    async def main() -> Any:
        inj = Injector(spec, t0_ns=0)
        inj.start()
        await asyncio.sleep(0.5)
        return await inj.finish()

    ev = asyncio.run(main())
    assert ev.error is None and ev.command_rc == 0 and ev.restore_rc == 0
    assert (tmp_path / "a").read_text() == "down\n" and (tmp_path / "b").read_text() == "up\n"
    assert ev.fault_ns is not None and ev.ready_ns is not None
    assert (ev.restore_ns - ev.fault_ns) / 1e9 >= 0.2
