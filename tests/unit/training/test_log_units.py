"""Units and emptiness are explicit: times in s, ms or Unix s/ms and accuracy as a fraction or
a percent are detected where the values tell and declared where not; impossible readings are
study errors naming file and line; a log with no data is its own outcome, found by validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.training.checks import log_problems
from acceval.training.ingest import read_log
from acceval.training.spec import Columns, Training, Units

T0 = 1_750_000_000.0


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(t: list[float], acc: list[float]) -> list[dict[str, object]]:
    return [{"step": 10 * (i + 1), "t_s": ti, "loss": 2.0 - i / 10, "eval_accuracy": a}
            for i, (ti, a) in enumerate(zip(t, acc, strict=True))]


def test_unix_milliseconds_are_detected(tmp_path: Path) -> None:
    ms = [T0 * 1000 + d for d in (0.0, 1500.0, 4000.0)]
    log = read_log(_jsonl(tmp_path / "a.jsonl", _rows(ms, [0.1, 0.2, 0.3])), None, Columns())
    assert [e.t_s for e in log.evals] == pytest.approx([0.0, 1.5, 4.0])


def test_unix_seconds_are_detected(tmp_path: Path) -> None:
    s = [T0 + d for d in (0.0, 1.5, 4.0)]
    log = read_log(_jsonl(tmp_path / "a.jsonl", _rows(s, [0.1, 0.2, 0.3])), None, Columns())
    assert [e.t_s for e in log.evals] == pytest.approx([0.0, 1.5, 4.0])


def test_milliseconds_since_the_start_are_declared(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", _rows([500.0, 1500.0, 4000.0], [0.1, 0.2, 0.3]))
    assert [e.t_s for e in read_log(path, None, Columns()).evals] == [500.0, 1500.0, 4000.0]
    log = read_log(path, None, Columns(), units=Units(time="ms"))
    assert [e.t_s for e in log.evals] == pytest.approx([0.5, 1.5, 4.0])


def test_a_percent_accuracy_is_detected_and_can_be_declared(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", _rows([1.0, 2.0, 3.0], [40.0, 70.0, 95.5]))
    assert [e.accuracy for e in read_log(path, None, Columns()).evals] == \
        pytest.approx([0.40, 0.70, 0.955])
    # Below 1 everywhere: only a declaration tells a percent (0.5 % .. 0.9 %) from a fraction.
    low = _jsonl(tmp_path / "b.jsonl", _rows([1.0, 2.0, 3.0], [0.5, 0.7, 0.9]))
    assert [e.accuracy for e in read_log(low, None, Columns(),
                                          units=Units(accuracy="percent")).evals] == \
        pytest.approx([0.005, 0.007, 0.009])


def test_an_accuracy_above_its_range_names_the_file_and_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", _rows([1.0, 2.0, 3.0], [0.4, 1.7, 0.9]))
    with pytest.raises(StudyError) as err:
        read_log(path, None, Columns(), units=Units(accuracy="fraction"))
    assert f"{path}, line 2" in str(err.value) and "above 1" in str(err.value)
    assert "fraction (0-1) or a percent" in err.value.problems[0][2]
    with pytest.raises(StudyError, match="above 100"):
        read_log(_jsonl(tmp_path / "b.jsonl", _rows([1.0, 2.0], [40.0, 170.0])), None,
                 Columns())


def test_a_negative_duration_names_the_line(tmp_path: Path) -> None:
    rows = [{"step": 1, "t_s": 1.0, "loss": 2.0, "step_s": 0.5},
            {"step": 2, "t_s": 2.0, "loss": 1.9, "step_s": -0.5}]
    with pytest.raises(StudyError, match=r"line 2: step_s -0.5 is a negative duration"):
        read_log(_jsonl(tmp_path / "a.jsonl", rows), None, Columns())


def test_mixed_clocks_are_an_error(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", _rows([1.0, T0, T0 + 1], [0.1, 0.2, 0.3]))
    with pytest.raises(StudyError, match="mix two clocks"):
        read_log(path, None, Columns())


def _spec(runs: list[dict[str, object]]) -> Training:
    return Training.model_validate({"target": {"min_accuracy": 0.5}, "platforms": [
        {"name": "p", "logs": {"runs": runs}}]})


def test_no_data_is_found_before_any_load_and_says_which(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02PK\x03\x04" * 50)
    _jsonl(tmp_path / "unmapped.jsonl", [{"iteration": 1, "val": 0.3}] * 3)
    _jsonl(tmp_path / "good.jsonl", _rows([1.0, 2.0], [0.3, 0.6]))
    runs: list[dict[str, object]] = [{"path": n} for n in (
        "empty.jsonl", "binary.jsonl", "unmapped.jsonl", "good.jsonl", "missing.jsonl")]
    problems = log_problems(_spec(runs), tmp_path)
    text = {where: msg for where, msg, _ in problems}
    assert "empty: no records" in text["training.platforms[0].logs.runs[0].path"]
    assert "binary, not a text log" in text["training.platforms[0].logs.runs[1].path"]
    assert "nothing mapped" in text["training.platforms[0].logs.runs[2].path"]
    assert "training.platforms[0].logs.runs[3].path" not in text
    assert "does not exist" in text["training.platforms[0].logs.runs[4].path"]
    assert all(msg.startswith("no data") for w, msg in text.items() if not w.endswith("[4].path"))


def test_an_optional_log_with_no_data_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    _jsonl(tmp_path / "good.jsonl", _rows([1.0, 2.0], [0.3, 0.6]))
    spec = _spec([{"path": "empty.jsonl", "optional": True}, {"path": "good.jsonl"}])
    assert log_problems(spec, tmp_path) == []


def test_an_impossible_reading_is_a_validate_problem(tmp_path: Path) -> None:
    _jsonl(tmp_path / "a.jsonl", _rows([1.0, 2.0], [0.3, 170.0]))
    (where, msg, fix), = log_problems(_spec([{"path": "a.jsonl"}]), tmp_path)
    assert "line 2" in where and "above 100" in msg and fix


def test_without_a_declared_target_the_logs_must_name_a_benchmark(tmp_path: Path) -> None:
    _jsonl(tmp_path / "good.jsonl", _rows([1.0, 2.0], [0.3, 0.6]))
    spec = Training.model_validate({"platforms": [
        {"name": "p", "logs": {"runs": [{"path": "good.jsonl"}]}}]})
    (where, msg, fix), = log_problems(spec, tmp_path)
    assert where == "training.target" and "name no MLPerf benchmark" in msg
    assert "declare training.target" in fix
