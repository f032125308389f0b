from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest

from acceval.errors import StudyError
from acceval.tasks import GENERATORS, generate, generator_names


def _key(tasks: list[Any]) -> list[tuple[str, str | None, tuple[tuple[str, str], ...], str]]:
    return [(t.id, t.prompt, t.messages, t.reference) for t in tasks]


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_deterministic_prefix_stable_and_self_consistent(name: str) -> None:
    a = generate(name, count=40, seed=7)
    assert _key(a) == _key(generate(name, count=40, seed=7))
    assert _key(a[:10]) == _key(generate(name, count=10, seed=7))
    assert _key(a) != _key(generate(name, count=40, seed=8))
    assert len({t.id for t in a}) == 40
    for t in a:
        assert t.messages == (("user", t.prompt),)
        assert t.checker is not None
        assert t.checker.check(t.reference).correct, t
        assert "difficulty" in t.meta


# --- arithmetic ---------------------------------------------------------------------------------

_COMPACT = re.compile(r"^(\d+)([+*-])(\d+)=$")


def test_arithmetic_compact_is_the_tiny_model_format() -> None:
    for t in generate("arithmetic", count=200, seed=1):
        m = _COMPACT.match(t.prompt or "")
        assert m, t.prompt
        a, op, b = m.groups()
        assert op == "+" and len(a) == len(b) == 3
        assert t.reference == str(int(a) + int(b))
        assert not t.reference.startswith("0") or t.reference == "0"
        assert t.checker is not None and t.checker.check(t.reference.zfill(4)).correct
        assert not t.checker.check(str(int(t.reference) + 1).zfill(4)).correct


def test_arithmetic_zero_padding_exact_text() -> None:
    t = next(t for t in generate("arithmetic", count=500, seed=3) if t.meta["a"] < 100)
    a, b = t.meta["a"], t.meta["b"]
    assert t.prompt == f"{a:03d}+{b:03d}="


@pytest.mark.parametrize("style", ["compact", "prose"])
def test_arithmetic_shared_prefix_examples(style: str) -> None:
    """Every prompt starts with the same solved examples, one a line, in the tasks' own
    format; the tasks after them are those drawn without the option, for any seed."""
    opts: dict[str, Any] = {"style": style, "ops": ["+", "-"]}
    plain = generate("arithmetic", count=50, seed=4, options=opts)
    shared = generate("arithmetic", count=50, seed=4,
                      options={**opts, "shared_prefix_examples": 3})
    other_seed = generate("arithmetic", count=5, seed=5,
                          options={**opts, "shared_prefix_examples": 3})
    prefix = shared[0].prompt[: len(shared[0].prompt) - len(plain[0].prompt)]  # type: ignore[index]
    lines = prefix.splitlines(keepends=True)
    assert len(lines) == 3 and all(line.endswith("\n") for line in lines)
    for line in lines:  # each example is solved right
        if style == "compact":
            a, op, b, r = re.match(r"^(\d{3})([+-])(\d{3})=(-?\d+)\n$", line).groups()  # type: ignore[union-attr]
        else:
            a, op, b, r = re.match(r"^(\d+) ([+-]) (\d+) = (-?\d+)\n$", line).groups()  # type: ignore[union-attr]
        assert int(r) == (int(a) + int(b) if op == "+" else int(a) - int(b))
        if style == "compact" and op == "+":
            assert len(r) == 4   # the tiny model's zero-padded answer
    for p, s in zip(plain, shared, strict=True):
        assert s.prompt == prefix + p.prompt and s.messages == (("user", s.prompt),)
        assert s.reference == p.reference and s.checker.check(s.reference).correct  # type: ignore[union-attr]
    assert all(t.prompt.startswith(prefix) for t in other_seed)  # type: ignore[union-attr]


def test_arithmetic_shared_prefix_fills_vllm_blocks() -> None:
    """3 compact 3-digit examples: 39 characters (one token each for the tiny model) before
    an 8-token question: two full 16-token blocks for vLLM's prefix cache on GPU, one of
    32 on CPU (the smallest its attention takes), and within the
    tiny model's 64-token context with room for the answer."""
    from tokenizers import Tokenizer

    from acceval.models import models_dir

    tok = Tokenizer.from_file(str(models_dir() / "tiny" / "tokenizer.json"))
    (t,) = generate("arithmetic", count=1, seed=1, options={"shared_prefix_examples": 3})
    (plain,) = generate("arithmetic", count=1, seed=1)
    assert len(tok.encode(plain.prompt or "").ids) == 8
    assert len(tok.encode(t.prompt or "").ids) == 39 + 8


def test_arithmetic_knobs() -> None:
    tasks = generate("arithmetic", count=300, seed=2,
                     options={"digits": 5, "ops": ["+", "-", "*"], "style": "prose"})
    assert {t.meta["op"] for t in tasks} == {"+", "-", "*"}
    for t in tasks:
        a, b, op = t.meta["a"], t.meta["b"], t.meta["op"]
        assert 0 <= a < 10**5 and 0 <= b < 10**5
        assert t.prompt == f"What is {a} {op} {b}? Answer with the number only."
        want = {"+": a + b, "-": a - b, "*": a * b}[op]
        assert t.reference == str(want)
        assert t.checker is not None and t.checker.check(f"{a} {op} {b} = {want}").correct
    assert max(t.meta["a"] for t in tasks) >= 10**4  # operands use the digits
    one = generate("arithmetic", count=100, seed=2, options={"digits": 1})
    assert all(len(t.prompt or "") == 4 for t in one)


# --- sorting ------------------------------------------------------------------------------------

def test_sorting_reference_is_sorted_and_knobs_apply() -> None:
    tasks = generate("sorting", count=50, seed=4,
                     options={"length": 8, "min_value": -50, "max_value": 50,
                              "order": "descending"})
    for t in tasks:
        values = [int(v) for v in (t.prompt or "").split(": ", 1)[1].split(".")[0].split(", ")]
        assert len(values) == 8 and all(-50 <= v <= 50 for v in values)
        assert t.reference == ", ".join(map(str, sorted(values, reverse=True)))
        assert t.checker is not None
        assert t.checker.check(t.reference.replace(", ", ",") + ".").correct
        assert not t.checker.check(", ".join(map(str, sorted(values)))).correct \
            or len(set(values)) == 1


# --- dates --------------------------------------------------------------------------------------

_DATE_Q = re.compile(r"^What date is (\d+) days (after|before) (\d{4}-\d{2}-\d{2})\? "
                     r"Answer YYYY-MM-DD\.$")


def test_dates_reference_matches_python_datetime() -> None:
    tasks = generate("dates", count=200, seed=5,
                     options={"max_days": 400, "direction": "both", "year_min": 2023,
                              "year_max": 2024})
    dirs = set()
    for t in tasks:
        m = _DATE_Q.match(t.prompt or "")
        assert m, t.prompt
        n, direction, start = int(m.group(1)), m.group(2), dt.date.fromisoformat(m.group(3))
        dirs.add(direction)
        assert 1 <= n <= 400 and 2023 <= start.year <= 2024
        sign = 1 if direction == "after" else -1
        assert t.reference == (start + dt.timedelta(days=sign * n)).isoformat()
        assert t.checker is not None
        assert t.checker.check(f"{n} days {direction} {start} is {t.reference}.").correct
    assert dirs == {"after", "before"}
    assert any(t.meta["crosses_month"] for t in tasks)


def test_dates_leap_day() -> None:
    tasks = generate("dates", count=2000, seed=0, options={"max_days": 3, "year_min": 2024,
                                                           "year_max": 2024})
    assert any(t.reference == "2024-02-29" for t in tasks)


# --- json_extract -------------------------------------------------------------------------------

def test_json_extract_reference_facts_are_in_the_text() -> None:
    tasks = generate("json_extract", count=60, seed=6, options={"distractors": 2})
    kinds = set()
    for t in tasks:
        want = json.loads(t.reference)
        kinds.add(t.meta["kind"])
        text = t.prompt or ""
        for v in want.values():
            assert (f"{v:.2f}" if isinstance(v, float) else str(v)) in text
        assert t.checker is not None
        assert t.checker.check(f"```json\n{json.dumps(want)}\n```").correct
        if "age" in want:
            bad = dict(want, age=want["age"] + 1)
            assert t.checker.check(json.dumps(bad)).reason == "wrong"
            assert t.checker.check(json.dumps(dict(want, age=str(want["age"])))).reason \
                == "unparsable"
        assert text.count("\n") == 1 and len(text.split(". ")) >= 3
    assert kinds == {"person", "order"}
    persons = generate("json_extract", count=10, seed=6, options={"kind": "person"})
    assert {t.meta["kind"] for t in persons} == {"person"}


def test_json_extract_distractors_make_longer_texts() -> None:
    plain = generate("json_extract", count=20, seed=1, options={"kind": "order"})
    hard = generate("json_extract", count=20, seed=1,
                    options={"kind": "order", "distractors": 3})
    assert sum(len(t.prompt or "") for t in hard) > sum(len(t.prompt or "") for t in plain) * 1.5


# --- choice -------------------------------------------------------------------------------------

def test_choice_reference_is_the_true_option() -> None:
    tasks = generate("choice", count=200, seed=9,
                     options={"kinds": ["sum", "max", "min"], "n_choices": 5, "digits": 3})
    letters_seen = set()
    for t in tasks:
        lines = (t.prompt or "").split("\n")
        question, options = lines[0], dict(line.split(") ") for line in lines[1:-1])
        assert list(options) == list("ABCDE")
        values = {k: int(v) for k, v in options.items()}
        assert len(set(values.values())) == 5
        if question.startswith("What is"):
            a, b = map(int, re.findall(r"\d+", question))
            truth = [k for k, v in values.items() if v == a + b]
        elif "largest" in question:
            truth = [max(values, key=values.__getitem__)]
        else:
            truth = [min(values, key=values.__getitem__)]
        assert [t.reference] == truth
        letters_seen.add(t.reference)
        assert t.checker is not None
        assert t.checker.check(f"Answer: {t.reference}").correct
    assert letters_seen == set("ABCDE")


def test_choice_small_digits_still_distinct() -> None:
    for t in generate("choice", count=100, seed=1, options={"digits": 1, "n_choices": 5}):
        values = [line.split(") ")[1] for line in (t.prompt or "").split("\n")[1:-1]]
        assert len(set(values)) == 5


# --- errors -------------------------------------------------------------------------------------

def test_unknown_generator_lists_available() -> None:
    with pytest.raises(StudyError) as err:
        generate("arithmetik", count=1, seed=0)
    assert err.value.problems[0][0] == "tasks.source"
    for name in generator_names():
        assert f"builtin:{name}" in err.value.problems[0][2]


@pytest.mark.parametrize(("name", "options", "field"), [
    ("arithmetic", {"digits": 0}, "tasks.options.digits"),
    ("arithmetic", {"ops": ["/"]}, "tasks.options.ops.0"),
    ("arithmetic", {"style": "verbose"}, "tasks.options.style"),
    ("arithmetic", {"digit": 3}, "tasks.options.digit"),
    ("sorting", {"min_value": 10, "max_value": 1}, "tasks.options"),
    ("dates", {"max_days": "lots"}, "tasks.options.max_days"),
    ("choice", {"n_choices": 6}, "tasks.options.n_choices"),
    ("json_extract", {"kind": "invoice"}, "tasks.options.kind"),
])
def test_bad_options_name_tasks_options_field(name: str, options: dict[str, Any],
                                              field: str) -> None:
    with pytest.raises(StudyError) as err:
        generate(name, count=1, seed=0, options=options)
    assert err.value.problems[0][0] == field
