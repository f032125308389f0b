"""acceval's MLPerf Training score against mlperf-logging's own scorer, to the millisecond.

The oracle is ``mlperf_logging.result_summarizer._compute_strong_score_standalone`` (the
function behind ``compute_score``, whose CLI crashes in 4.1.68): it runs the compliance
checker on every ``result_*.txt`` of a benchmark folder, takes ``run_stop - run_start`` of
each compliant file and applies the olympic mean with the benchmark's drops. The files are
generated in the real format (tests/helpers/mllog_files.py) with initialization time, an
aborted run, four benchmarks, UNet3D's 40 files with failures, and a BERT set where counting
the initialization would change which runs are dropped.
"""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path
from types import ModuleType

import pytest
from mlperf_logging.benchmark_meta import get_result_file_counts

from acceval.economics.spec import StudyCosts
from acceval.training.analyze import platform_result
from acceval.training.mlperf import RULES
from acceval.training.spec import Training
from helpers.mllog_files import RULESET, result_file


def _oracle() -> ModuleType:
    """mlperf-logging's scorer, imported when a test runs (about 2 s for each collecting
    worker when it was imported with the file)."""
    from mlperf_logging.result_summarizer import result_summarizer

    return result_summarizer


def _oracle_ms(folder: Path, benchmark: str) -> tuple[float | None, dict[str, float]]:
    with contextlib.redirect_stdout(io.StringIO()):
        per_file, _, score, _, _ = _oracle()._compute_strong_score_standalone(
            benchmark, "sys-a", False, str(folder), "training", RULESET,
            return_full_scores=True)
    ms = {Path(f).name: minutes * 60_000 for f, minutes in per_file.items()}
    return (None if score is None else score * 60_000), ms


def _acceval(folder: Path, name: str = "sys-a", target: dict[str, float] | None = None):
    spec = Training.model_validate({
        **({"target": target} if target else {}),
        "platforms": [{"name": name, "logs": {"dir": str(folder)}}]})
    return platform_result(spec, spec.platforms[0], base_dir=folder, run_dir=None,
                           study_costs=StudyCosts(), catalog=None)


def _folder(tmp: Path, benchmark: str, runs: list[tuple[int, int, list[float], str]]) -> Path:
    d = tmp / benchmark
    d.mkdir()
    for i, (init_ms, run_ms, evals, status) in enumerate(runs):
        result_file(d / f"result_{i}.txt", benchmark, init_ms=init_ms, run_ms=run_ms,
                    evals=evals, status=status, t0_ms=1_700_000_000_000 + i * 10_000_000)
    return d


def _sets() -> dict[str, list[tuple[int, int, list[float], str]]]:
    rng = random.Random(26)
    # BERT: run 0 is the fastest by run_start..run_stop but, with its long initialization
    # counted, it would be the slowest: MLPerf drops it as the fastest.
    bert = [(60_000 + rng.randrange(1000), 1_000_000 + 10_000 * i + rng.randrange(1000),
             [0.70, 0.7205], "success") for i in range(10)]
    bert[0] = (400_123, 990_457, [0.70, 0.7201], "success")
    # ResNet: one run aborted below the target (MLPerf drops it as the slowest).
    resnet = [(30_000 + rng.randrange(5000), 2_000_000 + rng.randrange(200_000),
               [0.70, 0.7595], "success") for _ in range(5)]
    resnet[3] = (31_234, 1_500_321, [0.70, 0.741], "aborted")
    # UNet3D: 40 files, 3 that never reach the DICE target (up to 4 are allowed).
    unet = [(120_000 + rng.randrange(60_000), 2_500_000 + rng.randrange(900_000),
             [0.85, 0.9085], "success") for _ in range(40)]
    for i in (5, 17, 33):
        unet[i] = (150_000, 3_000_000 + i, [0.85, 0.90], "aborted")
    # Llama-2-70B LoRA: eval_accuracy is an eval loss (<= 0.925).
    lora = [(300_000 + rng.randrange(90_000), 1_400_000 + rng.randrange(100_000),
             [0.95, 0.9245], "success") for _ in range(10)]
    return {"bert": bert, "resnet": resnet, "unet3d": unet, "llama2_70b_lora": lora}


@pytest.mark.parametrize("benchmark", ["bert", "resnet", "unet3d", "llama2_70b_lora"])
def test_the_score_equals_mlperf_loggings_to_the_millisecond(tmp_path: Path,
                                                              benchmark: str) -> None:
    runs = _sets()[benchmark]
    folder = _folder(tmp_path, benchmark, runs)
    want_ms, per_file = _oracle_ms(folder, benchmark)
    got = _acceval(folder)
    assert got.failure is None
    ttt = got.time_to_target
    assert ttt is not None and ttt.value_s is not None and want_ms is not None
    assert ttt.value_s * 1000 == pytest.approx(want_ms, abs=1e-3)   # well within 1 ms
    assert round(ttt.value_s * 1000) == round(want_ms)
    # Each converged run's time is MLPerf's, to the millisecond.
    for r in got.runs:
        name = Path(r.ingest.source).name
        if r.reached:
            assert r.time_to_target_s is not None
            assert r.time_to_target_s * 1000 == pytest.approx(per_file[name], abs=1e-6)
        else:
            assert name not in per_file   # the checker rejected it too
    assert ttt.benchmark == benchmark and ttt.result_files == RULES[benchmark].result_files


def test_init_time_is_shown_beside_and_would_change_the_drops(tmp_path: Path) -> None:
    runs = _sets()["bert"]
    got = _acceval(_folder(tmp_path, "bert", runs))
    ttt = got.time_to_target
    assert ttt is not None
    assert 0 in ttt.dropped                      # the fastest by run_start..run_stop
    with_init = [(i + r) for i, r, _, _ in runs]
    assert with_init.index(max(with_init)) == 0  # the slowest if init were counted
    assert got.runs[0].init_s == pytest.approx(400.123)
    assert ttt.init_mean_s is not None and ttt.init_mean_s > 60


def test_unet3d_drops_four_at_each_end_and_allows_four_failures(tmp_path: Path) -> None:
    runs = _sets()["unet3d"]
    got = _acceval(_folder(tmp_path, "unet3d", runs))
    ttt = got.time_to_target
    assert ttt is not None and ttt.valid and ttt.max_dropped == 4
    assert len(ttt.scored) == 40 - 4 - 4 and ttt.converged == 37
    bad = tmp_path / "bad"
    bad.mkdir()
    five = list(runs)
    for i in (1, 2, 3, 4, 5):
        five[i] = (150_000, 3_000_000, [0.85, 0.90], "aborted")
    sub = _folder(bad, "unet3d", five)
    want_ms, _ = _oracle_ms(sub, "unet3d")
    got5 = _acceval(sub).time_to_target
    assert want_ms is None                       # mlperf-logging: too many failures
    assert got5 is not None and not got5.valid and got5.value_s is None
    assert "more than 4" in got5.reason


def test_an_aborted_run_that_crossed_the_target_does_not_converge(tmp_path: Path) -> None:
    """MLPerf's rule: only run_stop status success converges (mlperf-logging 4.1.68's
    checker only requires a status, so this is where acceval is stricter)."""
    runs = _sets()["resnet"]
    runs[1] = (30_000, 1_900_000, [0.70, 0.7600], "aborted")
    got = _acceval(_folder(tmp_path, "resnet", runs))
    r1 = got.runs[1]
    assert not r1.reached and r1.run_status == "aborted"
    assert "counts only status success" in r1.note
    assert got.time_to_target is not None and not got.time_to_target.valid  # 2 failures


def test_a_declared_target_wins_and_says_it_differs(tmp_path: Path) -> None:
    got = _acceval(_folder(tmp_path, "bert", _sets()["bert"]),
                   target={"min_accuracy": 0.75})
    assert got.target == "accuracy >= 0.75" and got.target_source == "declared"
    assert "wins over MLPerf bert's (masked-LM accuracy >= 0.720)" in got.target_note
    assert got.time_to_target is not None and not got.time_to_target.valid


def test_the_rule_table_is_mlperf_loggings() -> None:
    """Result files per benchmark and the quality targets are the package's."""
    counts = get_result_file_counts("training")
    assert {k: r.result_files for k, r in RULES.items()} == counts
    checker = Path(_oracle().__file__).parents[1] / "compliance_checker"
    for name, rule in RULES.items():
        if rule.threshold is None:
            continue
        files = sorted(checker.glob(f"training_*/closed_{name}.yaml"))
        assert files, name
        text = files[-1].read_text()
        op = "<=" if rule.metric == "eval_loss" else ">="
        assert f"{op} {rule.threshold:g}" in text.replace("0.7590", "0.759") \
            .replace("0.720", "0.72").replace("0.340", "0.34"), name


def test_a_relative_logs_dir_is_read_from_the_study_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folder(tmp_path, "resnet", _sets()["resnet"])
    monkeypatch.chdir(tmp_path.parent)
    spec = Training.model_validate({"platforms": [{"name": "s", "logs": {"dir": "resnet"}}]})
    got = platform_result(spec, spec.platforms[0], base_dir=Path(tmp_path.name), run_dir=None,
                          study_costs=StudyCosts(), catalog=None)
    assert got.failure is None and len(got.runs) == 5
