from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import (
    ChoiceChecker,
    JsonChecker,
    NumericChecker,
    generate,
    read_tasks_jsonl,
    write_answers_jsonl,
)


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
                    encoding="utf-8")
    return path


GOOD = [
    {"id": "q1", "prompt": "2+2=", "reference": "4", "checker": {"type": "numeric"}},
    {"id": "q2", "messages": [{"role": "system", "content": "Be terse."},
                              {"role": "user", "content": "Pick: A) 1 B) 2"}],
     "reference": "B", "checker": {"type": "choice", "letters": "AB"}},
    {"prompt": "Give {\"x\": 1}", "reference": {"x": 1}, "checker": {"type": "json"},
     "meta": {"difficulty": "easy"}},
    {"id": 7, "messages": [["user", "hello"]], "checker": None},
    "",
    {"id": "q5", "prompt": "3*3=", "reference": 9, "checker": {"type": "numeric"}},
]


def test_good_file(tmp_path: Path) -> None:
    tasks = read_tasks_jsonl(_write(tmp_path / "my.jsonl", GOOD))
    assert [t.id for t in tasks] == ["q1", "q2", "my-3", "7", "q5"]
    q1, q2, q3, q4, q5 = tasks
    assert isinstance(q1.checker, NumericChecker) and q1.messages == (("user", "2+2="),)
    assert q2.prompt is None and q2.messages[0] == ("system", "Be terse.")
    assert isinstance(q2.checker, ChoiceChecker) and q2.checker.check("B").correct
    assert isinstance(q3.checker, JsonChecker) and q3.checker.check('{"x": 1}').correct
    assert q3.meta == {"difficulty": "easy"}
    assert q4.checker is None and q4.reference == ""
    assert q5.reference == "9" and q5.checker is not None and q5.checker.check("9").correct


def test_count_takes_the_first_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", GOOD)
    assert [t.id for t in read_tasks_jsonl(path, limit=2)] == ["q1", "q2"]
    assert len(read_tasks_jsonl(path, limit=1000)) == 5


def test_errors_name_file_line_and_field(tmp_path: Path) -> None:
    rows: list[Any] = [
        {"id": "ok", "prompt": "1+1=", "reference": "2", "checker": {"type": "numeric"}},
        "{not json",
        {"id": "a", "reference": "2", "checker": {"type": "numeric"}},
        {"id": "b", "prompt": "x", "reference": "2", "checker": {"type": "numeric", "tol": 1}},
        {"id": "c", "prompt": "x", "reference": "two", "checker": {"type": "numeric"}},
        {"id": "d", "prompt": "x", "reference": "2"},
        {"id": "e", "prompt": 5, "reference": "2", "checker": {"type": "exact"}, "extra": 1},
        {"id": "ok", "prompt": "again", "reference": "2", "checker": {"type": "exact"}},
        {"id": "f", "messages": [{"role": "user"}], "reference": "2", "checker": None},
        {"id": "g", "prompt": "x", "reference": "2", "checker": {"type": "plugin", "name": "zz"}},
        [1, 2],
    ]
    with pytest.raises(StudyError) as err:
        read_tasks_jsonl(_write(tmp_path / "bad.jsonl", rows))
    paths = [p for p, _, _ in err.value.problems]
    assert paths == [
        "bad.jsonl:2",
        "bad.jsonl:3:prompt",
        "bad.jsonl:4:checker.tol",
        "bad.jsonl:5:checker.reference",
        "bad.jsonl:6:checker",
        "bad.jsonl:7:extra",
        "bad.jsonl:7:prompt",
        "bad.jsonl:8:id",
        "bad.jsonl:9:messages",
        "bad.jsonl:10:checker.name",
        "bad.jsonl:11",
    ]
    text = str(err.value)
    assert "bad.jsonl" in text and "11 problem(s)" in text and "not valid JSON" in text
    assert "duplicate id 'ok' (first on line 1)" in text


def test_problems_are_capped(tmp_path: Path) -> None:
    rows = [{"id": f"x{i}", "prompt": "p", "reference": "r"} for i in range(50)]
    with pytest.raises(StudyError) as err:
        read_tasks_jsonl(_write(tmp_path / "many.jsonl", rows))
    assert len(err.value.problems) == 21
    assert "30 more" in err.value.problems[-1][1]
    assert "50 problem(s)" in str(err.value)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="no such task file"):
        read_tasks_jsonl(tmp_path / "nope.jsonl")
    with pytest.raises(StudyError, match="no tasks"):
        read_tasks_jsonl(_write(tmp_path / "empty.jsonl", ["", "  "]))


def test_answers_file_round_trip(tmp_path: Path) -> None:
    tasks = generate("arithmetic", count=5, seed=1)
    out = tmp_path / "answers.jsonl"
    write_answers_jsonl(tasks, out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5
    for t, row in zip(tasks, rows, strict=True):
        assert row["prompt"] == t.prompt and row["reference"] == t.reference
        assert row["messages"] == [{"role": "user", "content": t.prompt}]
        assert row["id"] == t.id
