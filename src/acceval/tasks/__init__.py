"""Task sets and checkers: what is asked, the verifiable answer, and whether a reply is correct.

The denominator of cost per *correct* task lives here. Public names are re-exported from the
private modules below; ``tests/unit/tasks/test_api.py`` pins them.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
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

# The checkers, generators and loaders load when a name is used, not when a study's
# ``acceval.tasks.spec`` is read.
__getattr__ = exports(__name__, {
    "CheckerOptionError": "acceval.tasks._checkers", "ChoiceChecker": "acceval.tasks._checkers",
    "ContainsChecker": "acceval.tasks._checkers", "ExactChecker": "acceval.tasks._checkers",
    "NumericChecker": "acceval.tasks._checkers", "RegexChecker": "acceval.tasks._checkers",
    "GENERATORS": "acceval.tasks._generators", "JsonChecker": "acceval.tasks._json_checker",
    "read_tasks_jsonl": "acceval.tasks._jsonl", "write_answers_jsonl": "acceval.tasks._jsonl",
    "TaskSets": "acceval.tasks._load", "generate": "acceval.tasks._load",
    "generator_names": "acceval.tasks._load", "load_tasks": "acceval.tasks._load",
    "text_tasks": "acceval.tasks._load", "BUILTIN_CHECKERS": "acceval.tasks._registry",
    "ENTRY_POINT_GROUP": "acceval.tasks._registry", "CheckerFactory": "acceval.tasks._registry",
    "checker_names": "acceval.tasks._registry", "make_checker": "acceval.tasks._registry",
    "REASONS": "acceval.tasks._task", "Checker": "acceval.tasks._task",
    "CheckResult": "acceval.tasks._task", "Reason": "acceval.tasks._task",
    "Task": "acceval.tasks._task", "score": "acceval.tasks._task",
    "to_prompt": "acceval.tasks._task"})

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
