"""The training section, from logs through the real ``analyze`` to every format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.report import render
from acceval.run_result import RunResult
from acceval.study import Study
from acceval.training import execute
from helpers import run_fixture

FIXTURES = Path(__file__).parents[2] / "fixtures" / "training"
PRICE = {"usd_per_hour": 3.0, "source": "fixture"}


def _study(training: dict[str, object]) -> Study:
    base = run_fixture.study().model_dump(mode="json")
    return Study.model_validate({**base, "training": training})


def _training(tmp_path: Path) -> dict[str, object]:
    for name in ("steps.jsonl", "steps.csv", "trace-ddp2.json.gz"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    csv_cols = {"step": "iteration", "time_s": "elapsed", "loss": "train_loss",
                "grad_norm": "gnorm", "eval_loss": "val_loss"}
    return {
        "target": {"max_eval_loss": 1.8}, "runs": 3,
        "platforms": [
            {"name": "jsonl-cluster", "price": PRICE, "platform": {"chips": 8},
             "logs": {"runs": [{"path": "steps.jsonl", "trace": "trace-ddp2.json.gz"}] * 3}},
            {"name": "csv-cluster", "price": PRICE, "platform": {"chips": 4},
             "logs": {"format": "csv", "columns": csv_cols,
                      "runs": [{"path": "steps.csv"}] * 3}},
            {"name": "not-run", "builtin": {"processes": 1}},
        ]}


def _result(tmp_path: Path) -> RunResult:
    study = _study(_training(tmp_path))
    return run_fixture.build(tmp_path / "run", with_study=study, base_dir=tmp_path)


def test_analyze_scores_prices_and_ranks_training(tmp_path: Path) -> None:
    tr = _result(tmp_path).training
    assert tr is not None and tr.target == "eval loss <= 1.8"
    j = tr.platform("jsonl-cluster")
    assert j.time_to_target is not None and j.time_to_target.value_s == pytest.approx(2.6)
    assert j.runs[0].restarts.count == 1 and j.runs[0].ingest.unread == 3
    assert j.cost is not None and j.cost.bill.item("compute") is not None
    # 8 chips x $3/h x 2.6 s
    assert j.cost.cost_per_run_usd == pytest.approx(8 * 3.0 * 2.6 / 3600)
    c = tr.platform("csv-cluster")
    assert c.time_to_target is not None and c.time_to_target.value_s == pytest.approx(2.0)
    assert c.cost is not None and c.cost.cost_per_run_usd == pytest.approx(4 * 3.0 * 2.0 / 3600)
    assert j.compute_comm is not None and j.compute_comm.bound is not None
    assert c.compute_comm is None
    assert j.mfu is not None and j.mfu.status == "not assessed"
    assert tr.platform("not-run").failure == "not run (the run ended before it)"
    v = tr.verdict
    assert v is not None and v.status == "winner" and v.winner == "csv-cluster"
    assert [s.platform for s in v.standings if s.qualified] == ["csv-cluster", "jsonl-cluster"]
    assert "not-run" in " ".join(v.lines)


def test_the_training_verdict_adds_lines_and_leaves_the_inference_ranking(
        tmp_path: Path) -> None:
    with_training = _result(tmp_path)
    plain = run_fixture.build(tmp_path / "plain")
    assert with_training.verdict.headline == plain.verdict.headline
    assert with_training.training is not None and with_training.training.verdict is not None
    assert with_training.training.verdict.headline in with_training.verdict.sentences
    assert plain.training is None


def test_every_format_renders_the_section(tmp_path: Path) -> None:
    result = _result(tmp_path)
    html = render(result, "html")
    assert '<section id="training">' in html
    specs = json.loads(html.split('id="acceval-charts">')[1].split("</script>")[0])
    ids = {s["id"] for s in specs}
    assert {"chart-training-curves", "chart-training-ttt", "chart-training-steps",
            "chart-training-goodput"} <= ids
    md = render(result, "md")
    assert "## Training on equal terms" in md
    assert "| cost per run to target |" in md and "| restarts |" in md
    assert "9 of 75 records not understood (jsonl)" in md  # 3 per run, counted
    # Checkpoints cost per training run, as the run itself: a share of a cent-sized run.
    assert "| checkpoints | 3 saves, 0.05 s each, 1.92% of the cost per run | 0 saves |" in md
    again = RunResult.load(tmp_path / "run")
    assert again.training == result.training


def test_a_missing_torch_skips_the_workload_with_a_note(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute, "torch_missing", lambda: "skipped: needs torch (fixture)")
    study = _study({"target": {"max_eval_loss": 1.8},
                    "platforms": [{"name": "cpu", "builtin": {"processes": 1}}]})
    assert study.training is not None
    done = execute.run_training(study.training, tmp_path / "run", tmp_path)
    assert done.platforms["cpu"].status == "skipped"
    result = run_fixture.build(tmp_path / "run", with_study=study, base_dir=tmp_path)
    assert result.training is not None
    assert result.training.platform("cpu").failure == "skipped: needs torch (fixture)"
    assert any("skipped: needs torch" in w for w in result.warnings)
    assert "Training: no platform qualifies" in result.training.verdict.headline  # type: ignore[union-attr]


def test_a_neuron_profile_reaches_the_result_and_the_report(tmp_path: Path) -> None:
    """A Neuron system profile JSON beside a step log, through the real analyze: its split,
    the overlap it cannot measure and what it does not give reach result.json and the
    report."""
    for name in ("steps.jsonl", "neuron-system_profile.json"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    run = {"path": "steps.jsonl", "trace": "neuron-system_profile.json", "trace_format": "neuron"}
    study = _study({"target": {"max_eval_loss": 1.8}, "runs": 3, "platforms": [
        {"name": "trn", "price": PRICE, "platform": {"chips": 16},
         "logs": {"runs": [run] * 3}}]})
    result = run_fixture.build(tmp_path / "run", with_study=study, base_dir=tmp_path)
    assert result.training is not None
    p = result.training.platform("trn")
    cc = p.compute_comm
    assert cc is not None and cc.kind == "neuron-system" and [s.step for s in cc.steps] == [5, 6]
    assert cc.compute_share == pytest.approx(0.55) and cc.overlap_share is None
    assert cc.exposed_communication_share == pytest.approx(0.20) and cc.unread == 4
    assert "overlap is not measured" in cc.note and "4 of 17 trace events" in cc.note
    assert p.provenance["compute vs communication"].startswith("Neuron profiler JSON (system")
    md = render(result, "md")
    assert "overlap with compute not measurable" in md and "overlap is not measured" in md


def test_each_platform_keeps_its_own_provenance_in_the_metrics_table(tmp_path: Path) -> None:
    """A Kineto-traced platform beside a Neuron-traced one: the table's provenance column
    names each platform's source instead of showing the first platform's for both."""
    from acceval.report._training import metric_rows

    for name in ("steps.jsonl", "neuron-system_profile.json", "trace-ddp2.json.gz"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    neuron = {"path": "steps.jsonl", "trace": "neuron-system_profile.json",
              "trace_format": "neuron"}
    kineto = {"path": "steps.jsonl", "trace": "trace-ddp2.json.gz"}
    study = _study({"target": {"max_eval_loss": 1.8}, "runs": 3, "platforms": [
        {"name": "trn", "price": PRICE, "logs": {"runs": [neuron] * 3}},
        {"name": "gpu", "price": PRICE, "logs": {"runs": [kineto] * 3}}]})
    result = run_fixture.build(tmp_path / "run", with_study=study, base_dir=tmp_path)
    assert result.training is not None
    _, rows = metric_rows(result.training)
    (cc,) = [r for r in rows if r[0] == "which resource saturates"]
    trn = result.training.platform("trn").provenance["compute vs communication"]
    gpu = result.training.platform("gpu").provenance["compute vs communication"]
    assert trn != gpu and cc[-1] == f"trn: {trn}; gpu: {gpu}"
    (cost,) = [r for r in rows if r[0] == "cost per run to target"]
    assert ";" not in cost[-1]  # where the platforms agree, one text


def test_gradient_norm_spikes_are_marked_on_the_loss_curve(tmp_path: Path) -> None:
    """A run whose gradient norm jumps at step 25: the curves chart marks it on the loss
    curve (at the loss there, not at the norm's own value), as it marks loss spikes."""
    from acceval.report._training import curves

    lines = [{"t_s": 0.0, "event": "run_start"}]
    for step in range(1, 31):
        lines.append({"t_s": step * 0.1, "step": step, "loss": 3.0 - 0.05 * step,
                      "grad_norm": 50.0 if step == 25 else 1.0 + 0.01 * (step % 3),
                      "tokens": 100, "step_s": 0.1})
        if step % 10 == 0:
            lines.append({"t_s": step * 0.1, "step": step, "eval_loss": 3.0 - 0.05 * step})
    (tmp_path / "gn.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    study = _study({"target": {"max_eval_loss": 1.6}, "runs": 3, "spike_window": 10,
                    "platforms": [{"name": "gn", "price": PRICE,
                                   "logs": {"runs": [{"path": "gn.jsonl"}] * 3}}]})
    result = run_fixture.build(tmp_path / "run", with_study=study, base_dir=tmp_path)
    assert result.training is not None
    run = result.training.platform("gn").runs[0]
    assert [s.step for s in run.stability.grad_norm_spikes] == [25]
    assert run.stability.loss_spikes == []
    figure = curves(result.training).figure
    assert figure is not None
    marks = [d for d in figure["data"] if d["name"] == "gn grad-norm spike"]
    assert len(marks) == 3  # one trace per run
    assert marks[0]["x"] == [pytest.approx(2.5)]
    assert marks[0]["y"] == [pytest.approx(3.0 - 0.05 * 25)]  # the loss at step 25
    assert "50" in marks[0]["text"][0]


def test_checkpoints_are_priced_per_training_run_in_dollars_from_a_cent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PRICE, "usd_per_hour", 30_000.0)
    md = render(_result(tmp_path), "md")
    # 3 saves of 0.05 s over 3 runs on 8 chips at $30,000 an hour: $3.33 a run.
    assert ("| checkpoints | 3 saves, 0.05 s each, $3.33 per training run (1.92% of the cost "
            "per run) |") in md
    assert "per 1B runs" not in md and "per 1B training runs" not in md
