"""The parts of a result that crossed stages as dictionaries are typed now (the study as run,
the seeds, the tasks, each server's fingerprint), and a stored result.json still reads into
them and writes them back as it held them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from acceval.report._fmt import facts_of
from acceval.results.runlog import Fingerprint
from acceval.run_result import RunResult, Seeds, TasksRun
from acceval.study import Study

FIXTURE = Path(__file__).parents[1] / "fixtures" / "demo-quick-run"


def test_a_stored_result_reads_into_the_types_and_writes_them_back(tmp_path: Path) -> None:
    stored = json.loads((FIXTURE / "result.json").read_text(encoding="utf-8"))
    result = RunResult.load(FIXTURE)
    assert isinstance(result.study, Study) and result.study.name == stored["study"]["name"]
    assert result.seeds == Seeds(study=stored["seeds"]["study"], tasks=stored["seeds"]["tasks"])
    assert isinstance(result.tasks, TasksRun) and result.tasks.count == stored["tasks"]["count"]
    assert all(isinstance(t.fingerprint, Fingerprint) for t in result.targets)
    again = json.loads(result.model_dump_json())
    for key in ("study", "seeds", "tasks"):
        assert again[key] == stored[key], key
    assert [t["fingerprint"] for t in again["targets"]] \
        == [t["fingerprint"] for t in stored["targets"]]
    result.save(tmp_path)
    assert RunResult.load(tmp_path).study == result.study


def test_an_empty_stored_fingerprint_reads_as_one_that_says_nothing(tmp_path: Path) -> None:
    shutil.copy(FIXTURE / "result.json", tmp_path / "result.json")
    data = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    data["targets"][0]["fingerprint"] = {}
    (tmp_path / "result.json").write_text(json.dumps(data), encoding="utf-8")
    fp = RunResult.load(tmp_path).targets[0].fingerprint
    assert fp == Fingerprint() and facts_of(fp) == ""


def test_facts_of_reads_the_fields_in_order_of_their_names() -> None:
    fp = Fingerprint(base_url="http://h/v1", models=["m"], version={"version": "1"},
                     errors=[])
    assert facts_of(fp) == "base_url: http://h/v1; models: m; version: version 1"
