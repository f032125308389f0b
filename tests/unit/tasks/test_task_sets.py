"""Task sets per load point (tasks.per_point): fresh draws per point, the same on every
target, files split into runs of ``count``, and ``same`` for a deliberately warm cache."""

from __future__ import annotations

import json
from pathlib import Path

from acceval.tasks import TaskSets, load_tasks
from acceval.tasks.spec import Tasks


def _jsonl(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "prompt": f"question {i}?",
                                        "reference": str(i), "checker": {"type": "exact"}})
                            + "\n" for i in range(n)))
    return path


def test_fresh_generated_sets_are_new_draws_with_their_own_ids(tmp_path: Path) -> None:
    spec = Tasks(source="builtin:arithmetic", count=50, seed=4)
    drawn: list[list[str]] = []
    sets = TaskSets(spec, base_dir=tmp_path, on_new=lambda ts: drawn.append([t.id for t in ts]))
    assert sets.fresh and sets.note is None
    first = sets.tasks(0)
    assert [t.prompt for t in first] == [t.prompt for t in load_tasks(spec, base_dir=tmp_path)]
    second = sets.tasks(1)
    assert len(second) == 50 and all(t.id.endswith("@1") for t in second)
    assert len({t.prompt for t in second} & {t.prompt for t in first}) < 10  # a new draw
    assert drawn == [[t.id for t in second]]          # announced once, before use
    assert sets.tasks(1) is second and len(drawn) == 1
    again = TaskSets(spec, base_dir=tmp_path).tasks(1)  # another target: the same set
    assert [(t.id, t.prompt, t.reference) for t in again] == \
        [(t.id, t.prompt, t.reference) for t in second]
    assert {t.id for t in sets.known()} == {t.id for t in first} | {t.id for t in second}


def test_same_sends_the_studys_tasks_at_every_point(tmp_path: Path) -> None:
    sets = TaskSets(Tasks(count=20, per_point="same"), base_dir=tmp_path)
    assert not sets.fresh
    assert [sets.set_of(i) for i in range(4)] == [0, 0, 0, 0]
    assert sets.tasks(3) is sets.tasks(0)


def test_a_file_is_split_into_runs_of_count_and_wraps_with_a_note(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", 25)
    sets = TaskSets(Tasks(source=f"jsonl:{path}", count=10), base_dir=tmp_path)
    assert sets.fresh and [sets.set_of(i) for i in range(5)] == [0, 1, 0, 1, 0]
    assert [t.id for t in sets.tasks(1)] == [f"q{i}" for i in range(10, 20)]
    assert [t.id for t in sets.tasks(2)] == [f"q{i}" for i in range(10)]
    assert sets.note is not None and "2 sets of 10" in sets.note
    small = TaskSets(Tasks(source=f"jsonl:{_jsonl(tmp_path / 's.jsonl', 15)}", count=10),
                     base_dir=tmp_path)
    assert not small.fresh and small.note is not None and "holds 15 tasks" in small.note


def test_one_fixed_text_prompt_cannot_be_fresh(tmp_path: Path) -> None:
    sets = TaskSets(Tasks(source="text:hello", count=3), base_dir=tmp_path)
    assert not sets.fresh and sets.set_of(5) == 0
