import acceval.tasks


def test_public_names_are_pinned() -> None:
    assert sorted(acceval.tasks.__all__) == sorted([
        "BUILTIN_CHECKERS", "ENTRY_POINT_GROUP", "GENERATORS", "REASONS", "CheckResult",
        "Checker", "CheckerFactory", "CheckerOptionError", "ChoiceChecker", "ContainsChecker",
        "ExactChecker", "JsonChecker", "NumericChecker", "Reason", "RegexChecker", "Task",
        "TaskSets",
        "checker_names", "generate", "generator_names", "load_tasks", "make_checker",
        "read_tasks_jsonl", "score", "text_tasks", "to_prompt", "write_answers_jsonl",
    ])
    for name in acceval.tasks.__all__:
        assert hasattr(acceval.tasks, name)
