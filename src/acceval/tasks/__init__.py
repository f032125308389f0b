"""Task sets and checkers: what is asked, the verifiable answer, and whether a reply is correct.

The denominator of cost per *correct* task lives here. Public names are re-exported from the
private modules below; ``tests/unit/tasks/test_api.py`` pins them.
"""

from acceval.tasks._checkers import (
    CheckerOptionError,
    ChoiceChecker,
    ContainsChecker,
    ExactChecker,
    NumericChecker,
    RegexChecker,
)
from acceval.tasks._generators import GENERATORS
from acceval.tasks._json_checker import JsonChecker
from acceval.tasks._jsonl import read_tasks_jsonl, write_answers_jsonl
from acceval.tasks._load import TaskSets, generate, generator_names, load_tasks, text_tasks
from acceval.tasks._registry import (
    BUILTIN_CHECKERS,
    ENTRY_POINT_GROUP,
    CheckerFactory,
    checker_names,
    make_checker,
)
from acceval.tasks._task import REASONS, Checker, CheckResult, Reason, Task, score, to_prompt

__all__ = [
    "BUILTIN_CHECKERS",
    "ENTRY_POINT_GROUP",
    "GENERATORS",
    "REASONS",
    "CheckResult",
    "Checker",
    "CheckerFactory",
    "CheckerOptionError",
    "ChoiceChecker",
    "ContainsChecker",
    "ExactChecker",
    "JsonChecker",
    "NumericChecker",
    "Reason",
    "RegexChecker",
    "Task",
    "TaskSets",
    "checker_names",
    "generate",
    "generator_names",
    "load_tasks",
    "make_checker",
    "read_tasks_jsonl",
    "score",
    "text_tasks",
    "to_prompt",
    "write_answers_jsonl",
]
