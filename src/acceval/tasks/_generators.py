"""Built-in seeded task generators with difficulty knobs.

Each generator owns its options model (validated, ``extra="forbid"``) and draws from one
``random.Random(seed)`` in a fixed order, task after task, so the first N tasks of a larger
count are the same N tasks (and Python keeps ``Random`` streams stable across versions).
Every task carries a reference computed here and a checker bound to it.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from acceval.tasks._checkers import ChoiceChecker, ExactChecker, NumericChecker, RegexChecker
from acceval.tasks._json_checker import JsonChecker
from acceval.tasks._task import Task


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _task(task_id: str, text: str, reference: str, checker: Any, **meta: Any) -> Task:
    return Task(id=task_id, prompt=text, messages=(("user", text),), reference=reference,
                checker=checker, meta=meta)


# --- arithmetic ---------------------------------------------------------------------------------

Op = Literal["+", "-", "*"]
_APPLY: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


class ArithmeticOptions(_Options):
    digits: int = Field(3, ge=1, le=18, description="Digits per operand; operands in [0, 10^d).")
    ops: tuple[Op, ...] = Field(("+",), min_length=1,
                          description="Operators drawn uniformly.")
    style: Literal["compact", "prose"] = Field(
        "compact", description="compact: '042+317=' (what the built-in tiny model knows); "
        "prose: a question asking for the number only.")
    shared_prefix_examples: int = Field(
        0, ge=0, le=64, description="Worked examples put before every prompt, one a line, the "
        "same for every task and seed (like a system prompt): a shared prefix a server's prefix "
        "cache can hold. 3 compact 3-digit examples are 39 tokens: two of vLLM's 16-token GPU "
        "blocks, or one 32-token block (its CPU default is 128: serve with --block-size 32).")


#: The shared examples come from their own stream, so the tasks are the same with or without
#: them and every seed shares one prefix.
_PREFIX_SEED = 0


def _solved(op: str, a: int, b: int, d: int, style: str) -> str:
    if style == "prose":
        return f"{a} {op} {b} = {_APPLY[op](a, b)}\n"
    r = _APPLY[op](a, b)
    # The tiny model's own answer format: a sum zero-padded to d + 1 digits.
    answer = f"{r:0{d + 1}d}" if op == "+" else str(r)
    return f"{a:0{d}d}{op}{b:0{d}d}={answer}\n"


def _shared_prefix(o: ArithmeticOptions) -> str:
    rng, hi = random.Random(_PREFIX_SEED), 10 ** o.digits
    return "".join(_solved(o.ops[rng.randrange(len(o.ops))], rng.randrange(hi),
                           rng.randrange(hi), o.digits, o.style)
                   for _ in range(o.shared_prefix_examples))


def arithmetic(rng: random.Random, count: int, o: ArithmeticOptions) -> list[Task]:
    d, hi = o.digits, 10 ** o.digits
    prefix = _shared_prefix(o)
    tasks = []
    for i in range(count):
        op = o.ops[rng.randrange(len(o.ops))]
        a, b = rng.randrange(hi), rng.randrange(hi)
        ref = str(_APPLY[op](a, b))
        if o.style == "compact":
            # Exactly the tiny model's training format; it answers zero-padded ("0168").
            text = f"{a:0{d}d}{op}{b:0{d}d}="
            checker = NumericChecker(ref, pick="first")
        else:
            text = f"What is {a} {op} {b}? Answer with the number only."
            checker = NumericChecker(ref, pick="last")
        tasks.append(_task(f"arithmetic-{i}", prefix + text, ref, checker,
                           difficulty=d, op=op, a=a, b=b))
    return tasks


# --- sorting ------------------------------------------------------------------------------------

class SortingOptions(_Options):
    length: int = Field(5, ge=2, le=100, description="How many numbers to sort.")
    min_value: int = Field(0, description="Smallest value (inclusive).")
    max_value: int = Field(99, description="Largest value (inclusive).")
    order: Literal["ascending", "descending"] = Field("ascending", description="Sort order.")

    @model_validator(mode="after")
    def _range(self) -> SortingOptions:
        if self.min_value > self.max_value:
            raise ValueError("min_value is larger than max_value")
        return self


def sorting(rng: random.Random, count: int, o: SortingOptions) -> list[Task]:
    tasks = []
    for i in range(count):
        values = [rng.randint(o.min_value, o.max_value) for _ in range(o.length)]
        ref = ", ".join(str(v) for v in sorted(values, reverse=o.order == "descending"))
        text = (f"Sort these numbers in {o.order} order: {', '.join(map(str, values))}. "
                "Answer with the sorted numbers separated by commas and nothing else.")
        checker = ExactChecker(ref, ignore_whitespace=True, strip_punctuation=True)
        tasks.append(_task(f"sorting-{i}", text, ref, checker,
                           difficulty=o.length, values=values))
    return tasks


# --- dates --------------------------------------------------------------------------------------

class DatesOptions(_Options):
    max_days: int = Field(60, ge=1, le=36500, description="Offsets drawn from 1..max_days.")
    direction: Literal["after", "before", "both"] = Field("after", description="Add, subtract "
                                                          "or either.")
    year_min: int = Field(2000, ge=1900, le=2100, description="Earliest start year.")
    year_max: int = Field(2030, ge=1900, le=2100, description="Latest start year.")

    @model_validator(mode="after")
    def _range(self) -> DatesOptions:
        if self.year_min > self.year_max:
            raise ValueError("year_min is larger than year_max")
        return self


def dates(rng: random.Random, count: int, o: DatesOptions) -> list[Task]:
    first = dt.date(o.year_min, 1, 1).toordinal()
    last = dt.date(o.year_max, 12, 31).toordinal()
    tasks = []
    for i in range(count):
        start = dt.date.fromordinal(rng.randint(first, last))
        days = rng.randint(1, o.max_days)
        after = o.direction == "after" or (o.direction == "both" and rng.random() < 0.5)
        answer = start + dt.timedelta(days=days if after else -days)
        ref = answer.isoformat()
        text = (f"What date is {days} days {'after' if after else 'before'} "
                f"{start.isoformat()}? Answer YYYY-MM-DD.")
        # The last date in the output is the answer; the question's own date may be echoed.
        checker = RegexChecker(ref, pattern=r"(\d{4}-\d{2}-\d{2})", match="last")
        tasks.append(_task(f"dates-{i}", text, ref, checker, difficulty=days,
                           start=start.isoformat(), days=days if after else -days,
                           crosses_month=(start.year, start.month) != (answer.year, answer.month)))
    return tasks


# --- json_extract -------------------------------------------------------------------------------

_FIRST = ["Maria", "John", "Aiko", "Lars", "Fatima", "Pedro", "Chen", "Olga", "Kwame", "Sofia"]
_LAST = ["Lopez", "Smith", "Tanaka", "Berg", "Haddad", "Silva", "Wang", "Ivanova", "Mensah",
         "Rossi"]
_CITIES = ["Lisbon", "Osaka", "Nairobi", "Toronto", "Madrid", "Oslo", "Lima", "Hanoi", "Dublin"]
_ITEMS = ["blue widget", "steel bolt", "paper notebook", "USB cable", "coffee mug", "desk lamp"]

_PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                   "city": {"type": "string"}},
    "required": ["name", "age", "city"],
}
_ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "item": {"type": "string"},
                   "quantity": {"type": "integer"}, "unit_price_usd": {"type": "number"}},
    "required": ["order_id", "item", "quantity", "unit_price_usd"],
}


class JsonExtractOptions(_Options):
    kind: Literal["person", "order", "mixed"] = Field("mixed", description="Which texts.")
    distractors: int = Field(0, ge=0, le=5, description="Extra sentences with similar but "
                                                        "irrelevant facts (harder).")


def _person(rng: random.Random, distractors: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    age, city = rng.randint(18, 90), rng.choice(_CITIES)
    parts = [f"{name} is {age} years old and lives in {city}."]
    for _ in range(distractors):
        other = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        parts.append(f"A friend, {other}, is {rng.randint(18, 90)} and works in "
                     f"{rng.choice(_CITIES)}.")
    text = " ".join(parts) + "\nExtract name, age (integer) and city of the first person."
    return text, {"name": name, "age": age, "city": city}, _PERSON_SCHEMA


def _order(rng: random.Random, distractors: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    order_id = f"A-{rng.randint(1000, 99999)}"
    item, qty = rng.choice(_ITEMS), rng.randint(1, 50)
    price = rng.randint(100, 99999) / 100
    parts = [f"Order {order_id}: {qty} units of {item} at {price:.2f} USD each."]
    for _ in range(distractors):
        parts.append(f"Shipping for a previous order of {rng.randint(1, 50)} units cost "
                     f"{rng.randint(100, 9999) / 100:.2f} USD.")
    text = (" ".join(parts) + "\nExtract order_id, item, quantity (integer) and unit_price_usd "
            "(number) of the order.")
    return text, {"order_id": order_id, "item": item, "quantity": qty,
                  "unit_price_usd": price}, _ORDER_SCHEMA


def json_extract(rng: random.Random, count: int, o: JsonExtractOptions) -> list[Task]:
    tasks = []
    for i in range(count):
        kind = o.kind if o.kind != "mixed" else ("person", "order")[rng.randrange(2)]
        body, want, schema = (_person if kind == "person" else _order)(rng, o.distractors)
        text = f"{body} Answer with one JSON object only."
        ref = json.dumps(want, sort_keys=True)
        checker = JsonChecker(ref, schema=schema)
        tasks.append(_task(f"json_extract-{i}", text, ref, checker, difficulty=o.distractors,
                           kind=kind))
    return tasks


# --- choice -------------------------------------------------------------------------------------

class ChoiceOptions(_Options):
    kinds: tuple[Literal["sum", "max", "min"], ...] = Field(
        ("sum", "max"), min_length=1,
        description="Question kinds: sum (what is a + b?), max / min (which is largest?).")
    n_choices: int = Field(4, ge=2, le=5, description="Options per question (letters A..E).")
    digits: int = Field(2, ge=1, le=9, description="Digits of the numbers involved.")


def _distinct(rng: random.Random, n: int, draw: Callable[[], int], avoid: int) -> list[int]:
    out: list[int] = []
    while len(out) < n:
        v = draw()
        if v != avoid and v not in out:
            out.append(v)
    return out


def choice(rng: random.Random, count: int, o: ChoiceOptions) -> list[Task]:
    letters = "ABCDE"[: o.n_choices]
    lo, hi = 10 ** (o.digits - 1) if o.digits > 1 else 0, 10 ** o.digits - 1
    tasks = []
    for i in range(count):
        kind = o.kinds[rng.randrange(len(o.kinds))]
        if kind == "sum":
            a, b = rng.randint(lo, hi), rng.randint(lo, hi)
            right = a + b
            spread = max(3, 10 ** (o.digits - 1))

            def near(r: int = right, s: int = spread) -> int:
                return r + rng.randint(-s, s)

            wrong = _distinct(rng, o.n_choices - 1, near, right)
            question = f"What is {a} + {b}?"
            values = [right, *wrong]
            rng.shuffle(values)
        else:
            # Wide enough range for n distinct values even with digits=1.
            values = _distinct(rng, o.n_choices, lambda: rng.randint(lo, hi), avoid=-1)
            right = max(values) if kind == "max" else min(values)
            question = f"Which number is the {'largest' if kind == 'max' else 'smallest'}?"
        ref = letters[values.index(right)]
        lines = [question, *(f"{c}) {v}" for c, v in zip(letters, values, strict=True)),
                 "Answer with the letter only."]
        text = "\n".join(lines)
        tasks.append(_task(f"choice-{i}", text, ref, ChoiceChecker(ref, letters=letters),
                           difficulty=o.digits, kind=kind))
    return tasks


# --- the table ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Generator:
    """A built-in generator: its options model and its draw function."""

    name: str
    options: type[_Options]
    draw: Callable[[random.Random, int, Any], list[Task]]
    summary: str


GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("arithmetic", ArithmeticOptions, arithmetic, "a+b (or -, *) with d-digit operands"),
    Generator("sorting", SortingOptions, sorting, "sort a list of integers"),
    Generator("dates", DatesOptions, dates, "date arithmetic: N days after/before a date"),
    Generator("json_extract", JsonExtractOptions, json_extract,
              "extract fields of a person or an order into JSON"),
    Generator("choice", ChoiceOptions, choice, "multiple choice on sums and comparisons"),
)}
