"""Fail before the load: each problem a run would hit late is named first, with its path."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from acceval.checks import check_runnable
from acceval.errors import StudyError
from acceval.study import study_from_dict


def _mock(name: str = "a", **serve: Any) -> dict[str, Any]:
    return {"name": name, "serve": {"engine": "mock", **serve}}


def _study(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "checks",
        "tasks": {"source": "builtin:arithmetic", "count": 5},
        "targets": [_mock()],
        "load": [{"concurrency": [1, 2]}],
    }
    data.update(over)
    return data


def _problems(tmp_path: Path, data: dict[str, Any], **kw: Any) -> dict[str, tuple[str, str]]:
    with pytest.raises(StudyError) as info:
        check_runnable(study_from_dict(data), base_dir=tmp_path, **kw)
    return {path: (msg, hint) for path, msg, hint in info.value.problems}


def test_a_good_study_passes_and_returns_its_tasks(tmp_path: Path) -> None:
    ready = check_runnable(study_from_dict(_study()), base_dir=tmp_path)
    assert len(ready.tasks) == 5 and ready.notes == []


def test_unknown_catalog_price_id(tmp_path: Path) -> None:
    data = _study(targets=[{**_mock(), "price": {"catalog": "aws-p5e-48xlarge-cbb"}}])
    msg, hint = _problems(tmp_path, data)["targets[0].price.catalog"]
    assert "no price 'aws-p5e-48xlarge-cbb'" in msg
    assert "did you mean 'aws-p5e-48xlarge-cb'" in hint


def test_price_that_contradicts_its_catalog_entry(tmp_path: Path) -> None:
    data = _study(targets=[{**_mock(), "price": {"catalog": "aws-p5e-48xlarge-cb",
                                                  "pricing": "spot"}}])
    assert "contradicts" in _problems(tmp_path, data)["targets[0].price"][0]


def test_missing_user_catalog_file(tmp_path: Path) -> None:
    data = _study(costs={"catalog": "mine.yaml"})
    assert "does not exist" in _problems(tmp_path, data)["costs.catalog"][0]


def test_malformed_demand_csv(tmp_path: Path) -> None:
    (tmp_path / "day.csv").write_text("hour,rps\n0,1\n1,lots\n", encoding="utf-8")
    data = _study(demand={"profile": "csv:day.csv"})
    msg, _ = _problems(tmp_path, data)["demand.profile"]
    assert "line 3, column 2" in msg and "'lots' is not a number" in msg


def test_missing_demand_csv(tmp_path: Path) -> None:
    data = _study(demand={"profile": "csv:nowhere.csv"})
    assert "cannot read" in _problems(tmp_path, data)["demand.profile"][0]


def test_demand_replay_with_no_rate(tmp_path: Path) -> None:
    rows = "".join(f"{h},0\n" for h in range(24))
    (tmp_path / "idle.csv").write_text("hour,rps\n" + rows, encoding="utf-8")
    data = _study(demand={"profile": "csv:idle.csv", "replay": {"compress_to_s": 5}})
    assert "rate is 0" in _problems(tmp_path, data)["demand.replay"][0]


def test_missing_task_file(tmp_path: Path) -> None:
    data = _study(tasks={"source": "jsonl:nowhere.jsonl"})
    assert "does not exist" in _problems(tmp_path, data)["tasks.source"][0]


def test_chat_only_tasks_for_a_completions_endpoint(tmp_path: Path) -> None:
    row = {"id": "t1", "messages": [{"role": "user", "content": "2+2?"}], "reference": "4",
           "checker": {"type": "exact"}}
    (tmp_path / "chat.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    target = {"name": "remote", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    data = _study(tasks={"source": "jsonl:chat.jsonl"}, targets=[target])
    msg, _ = _problems(tmp_path, data)["targets[0].endpoint.api"]
    assert "only chat messages" in msg


def test_engine_name_typo(tmp_path: Path) -> None:
    data = _study(targets=[{"name": "a", "serve": {"engine": "mokc"}}])
    msg, hint = _problems(tmp_path, data)["targets[0].serve.engine"]
    assert "unknown engine 'mokc'" in msg
    assert "did you mean 'mock'" in hint and "installed engines: mock" in hint


def test_unknown_and_bad_engine_options(tmp_path: Path) -> None:
    data = _study(targets=[_mock(options={"ttft": 5, "itl_ms": -1}, model="builtin:tiny")])
    probs = _problems(tmp_path, data)
    assert "did you mean 'ttft_ms'" in probs["targets[0].serve.options.ttft"][1]
    assert "greater than or equal to 0" in probs["targets[0].serve.options.itl_ms"][0]
    assert "has no option 'model'" in probs["targets[0].serve.model"][0]


def test_engine_model_and_precision_fields(tmp_path: Path) -> None:
    data = _study(targets=[{"name": "a", "serve": {"engine": "ortgenai",
                                                   "model": "builtin:tiny",
                                                   "precision": "int3"}}])
    assert "targets[0].serve.precision" in _problems(tmp_path, data)


def test_interruption_point_that_names_no_load_point(tmp_path: Path) -> None:
    data = _study(interruption={"target": "a", "at_s": 1, "down_s": 1,
                                "point": "concurrency 3"})
    msg, _ = _problems(tmp_path, data)["interruption.point"]
    assert "'concurrency 1'" in msg and "'concurrency 2'" in msg


def test_interruption_point_by_label_or_index_passes(tmp_path: Path) -> None:
    for point in ("concurrency 2", 1):
        data = _study(interruption={"target": "a", "at_s": 1, "down_s": 1, "point": point})
        check_runnable(study_from_dict(data), base_dir=tmp_path)


def test_missing_report_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "plotly" else real(name, *a))
    msg, hint = _problems(tmp_path, _study())["output"]
    assert "plotly" in msg and hint == "pip install 'acceval[report]'"


def test_output_folder_that_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")
    probs = _problems(tmp_path, _study(output={"dir": "taken/runs"}))
    assert "is a file" in probs["output.dir"][0]
    probs = _problems(tmp_path, _study(), out_dir=tmp_path / "taken")
    assert "is a file" in probs["--out"][0]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    data = _study(tasks={"source": "jsonl:nowhere.jsonl"},
                  targets=[{"name": "a", "serve": {"engine": "mokc"},
                            "price": {"catalog": "nope"}}],
                  demand={"profile": "csv:nowhere.csv"})
    assert {"tasks.source", "targets[0].serve.engine", "targets[0].price.catalog",
            "demand.profile"} <= set(_problems(tmp_path, data))


def test_unset_key_variable_is_a_note(tmp_path: Path) -> None:
    target = {"name": "remote", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                             "api_key_env": "ACCEVAL_CHECKS_UNSET"}}
    ready = check_runnable(study_from_dict(_study(targets=[target])), base_dir=tmp_path)
    assert any("ACCEVAL_CHECKS_UNSET" in n for n in ready.notes)
