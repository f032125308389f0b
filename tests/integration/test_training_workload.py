"""The built-in training workload, for real: two data-parallel processes over gloo, a rank
killed at a step, a restart from the last checkpoint, and the metrics that find it all."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

from acceval.economics import load_catalog
from acceval.economics.spec import StudyCosts
from acceval.training.analyze import training_section
from acceval.training.execute import read_execution, run_training
from acceval.training.spec import Training

# Looked up, not imported: torch and transformers load in the workload's own processes, and
# importing them here would cost every worker that collects this file about 3 s of CPU.
pytestmark = pytest.mark.skipif(find_spec("torch") is None or find_spec("transformers") is None,
                                reason="the [torch] and [training] extras are part of make test")

KILL_AT, CHECKPOINT_EVERY = 13, 5


def test_the_interrupted_run_restarts_and_the_metrics_find_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The run folder is given relative to the working folder, as `acceval demo` gives it.
    monkeypatch.chdir(tmp_path.parent)
    rel = Path(tmp_path.name)
    spec = Training.model_validate({
        "target": {"max_eval_loss": 1.8}, "runs": 1, "seed": 3,
        "platforms": [{
            "name": "ddp2",
            "builtin": {"processes": 2, "max_steps": 60, "eval_every": 5,
                        "checkpoint_every": CHECKPOINT_EVERY, "profile_steps": [3, 4],
                        "eval_sequences": 128,
                        "kill": {"run": 0, "rank": 1, "at_step": KILL_AT}},
            "platform": {"chips": 1},
            "price": {"usd_per_hour": 0.10},
            "energy": {"probe": "cpu", "watts_per_core": 15},
        }],
    })
    run_training(spec, rel, rel)
    ex = read_execution(tmp_path)
    assert ex is not None and ex.platforms["ddp2"].status == "ok", ex
    res = training_section(spec, base_dir=tmp_path, run_dir=tmp_path,
                           study_costs=StudyCosts(), catalog=load_catalog(None))
    (p,) = res.platforms
    assert p.failure is None
    (run,) = p.runs
    assert run.ingest.unread == 0
    (it,) = run.restarts.interruptions
    last_ck = (KILL_AT - 1) // CHECKPOINT_EVERY * CHECKPOINT_EVERY
    assert it.checkpoint_step == last_ck
    assert it.reached_step == KILL_AT - 1
    assert it.lost_steps == KILL_AT - 1 - last_ck
    assert it.lost_s > 0
    assert it.time_to_resume_s is not None and it.time_to_resume_s > 0
    assert it.time_to_recover_s is not None and it.time_to_recover_s >= it.time_to_resume_s
    assert run.restarts.checkpoint_restores == 1
    assert run.reached and run.step_to_target is not None and run.step_to_target > KILL_AT
    g = run.goodput
    assert g is not None and g.badput_s["lost_work"] == pytest.approx(it.lost_s)
    assert 0 < (g.goodput or 0) < 1
    # Real communication happened, and both ranks' traces show it.
    cc = p.compute_comm
    assert cc is not None and cc.backend == "gloo" and cc.world_size == 2
    assert [s.step for s in cc.steps] == [3, 4]
    assert (cc.communication_share or 0) > 0 and cc.bound is not None
    assert sorted(r.rank for r in cc.ranks) == [0, 1]
    assert all(r.communication_ms > 0 and r.window_ms > 0 for r in cc.ranks)
    assert cc.slowest_rank == max(cc.ranks, key=lambda r: r.window_ms).rank
    rdir = tmp_path / "training" / "ddp2" / "run-0"
    assert sorted(f.name for f in rdir.glob("trace-rank*.json.gz")) == [
        "trace-rank0.json.gz", "trace-rank1.json.gz"]
    assert run.cpu_s is not None and run.energy_j is not None and run.energy_j > 0
    # One run is not an MLPerf score: no cost, and the reason says so.
    assert p.time_to_target is not None and not p.time_to_target.valid
    assert "at least 3" in p.time_to_target.reason and p.cost is None
    _hta_has_no_answer_on_cpu(rdir, tmp_path / "hta")


def _hta_has_no_answer_on_cpu(rdir: Path, folder: Path) -> None:
    """HTA reads GPU kernels only: on these CPU traces it finds none and fails, so on CPU
    acceval's split (HTA's definitions on operators) has no HTA figure to meet; the HTA
    comparison runs on a real GPU trace (tests/unit/training/test_hta_oracle.py)."""
    import shutil
    import warnings

    from hta.trace_analysis import TraceAnalysis

    folder.mkdir()
    for f in rdir.glob("trace-rank*.json.gz"):
        shutil.copy(f, folder / f.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = TraceAnalysis(trace_dir=str(folder))
        assert sorted(ta.t.get_ranks()) == [0, 1]       # it reads both ranks' files
        with pytest.raises(IndexError):                 # and has no kernel to split
            ta.get_temporal_breakdown(visualize=False)
