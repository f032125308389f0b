from __future__ import annotations

import json
from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.study import Tasks, study_from_dict
from acceval.tasks import load_tasks, score


def test_builtin_source_uses_count_seed_options(tmp_path: Path) -> None:
    spec = Tasks(source="builtin:arithmetic", count=12, seed=3, options={"digits": 2})
    tasks = load_tasks(spec, base_dir=tmp_path)
    assert len(tasks) == 12 and all(len(t.prompt or "") == 6 for t in tasks)
    again = load_tasks(spec, base_dir=tmp_path)
    assert [t.prompt for t in tasks] == [t.prompt for t in again]


def test_default_spec_is_arithmetic(tmp_path: Path) -> None:
    tasks = load_tasks(Tasks(), base_dir=tmp_path)
    assert len(tasks) == 100 and tasks[0].id == "arithmetic-0"


def test_text_source_is_unchecked(tmp_path: Path) -> None:
    tasks = load_tasks(Tasks(source="text:Tell me a story: once", count=3), base_dir=tmp_path)
    assert [t.prompt for t in tasks] == ["Tell me a story: once"] * 3
    assert len({t.id for t in tasks}) == 3
    assert score(tasks[0], "Once upon a time", "length", None) is None


def test_jsonl_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "sets").mkdir()
    rows = [{"id": f"t{i}", "prompt": f"{i}+1=", "reference": str(i + 1),
             "checker": {"type": "numeric"}} for i in range(5)]
    (tmp_path / "sets" / "mine.jsonl").write_text("\n".join(map(json.dumps, rows)))
    tasks = load_tasks(Tasks(source="jsonl:sets/mine.jsonl", count=3), base_dir=tmp_path)
    assert [t.id for t in tasks] == ["t0", "t1", "t2"]
    assert len(load_tasks(Tasks(source="jsonl:sets/mine.jsonl"), base_dir=tmp_path)) == 5
    absolute = Tasks(source=f"jsonl:{tmp_path / 'sets' / 'mine.jsonl'}", count=2)
    assert len(load_tasks(absolute, base_dir=Path("/nonexistent"))) == 2


def test_from_a_study_dict(tmp_path: Path) -> None:
    study = study_from_dict({
        "name": "s", "tasks": {"source": "builtin:dates", "count": 4, "seed": 1,
                               "options": {"max_days": 10}},
        "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:1/v1",
                                               "model": "m"}}],
    })
    tasks = load_tasks(study.tasks, base_dir=tmp_path)
    assert len(tasks) == 4 and all(abs(t.meta["days"]) <= 10 for t in tasks)


@pytest.mark.parametrize(("source", "options", "field", "needle"), [
    ("builtin:nope", {}, "tasks.source", "builtin:arithmetic"),
    ("csv:x.csv", {}, "tasks.source", "builtin:NAME"),
    ("arithmetic", {}, "tasks.source", "builtin:NAME"),
    ("builtin:", {}, "tasks.source", "builtin:NAME"),
    ("text:hi", {"digits": 3}, "tasks.options", "builtin"),
    ("jsonl:missing.jsonl", {}, "tasks.source", "relative to the study"),
    ("builtin:sorting", {"lenght": 3}, "tasks.options.lenght", "length"),
])
def test_errors(tmp_path: Path, source: str, options: dict[str, object], field: str,
                needle: str) -> None:
    with pytest.raises(StudyError) as err:
        load_tasks(Tasks(source=source, options=options), base_dir=tmp_path)
    assert err.value.problems[0][0] == field
    assert needle in str(err.value)
