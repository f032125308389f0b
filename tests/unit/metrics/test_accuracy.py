import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from metrics_fixtures import hand_table, req, table

from acceval.metrics import (
    Accuracy,
    PassAt1,
    accuracy,
    expected_attempts_per_correct,
    pass_at_1,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [  # Wilson 95 % intervals, z = 1.96 (published reference values)
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_wilson_reference_values(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert got == pytest.approx((lo, hi), abs=5e-4)


def test_wilson_rejects_bad_input():
    with pytest.raises(ValueError, match="n > 0"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(3, 2)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.floats(0.5, 4.0))
def test_wilson_contains_estimate_and_stays_in_unit_interval(kn, z):
    k, n = kn
    lo, hi = wilson_interval(k, n, z)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


@given(st.integers(2, 2_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_narrows_with_more_data(kn):
    k, n = kn
    lo1, hi1 = wilson_interval(k, n)
    lo4, hi4 = wilson_interval(4 * k, 4 * n)
    assert hi4 - lo4 < hi1 - lo1


def test_accuracy_counts_errors_and_unchecked_as_not_correct():
    a = accuracy(hand_table())
    assert (a.n, a.correct, a.unchecked) == (3, 1, 1)   # warmup row excluded
    assert a.accuracy == pytest.approx(1 / 3)
    assert (a.ci_low, a.ci_high) == pytest.approx(wilson_interval(1, 3))


def test_accuracy_of_nothing_is_none():
    a = accuracy(table(req(0, sent_ms=0, chunks_ms=[1], tokens=1, warmup=True, correct=True)))
    assert a == Accuracy(n=0, correct=0, unchecked=0, accuracy=None, ci_low=None, ci_high=None)


def test_pass_at_1_averages_per_task_first():
    # t1: attempts True, False -> 0.5; t2: one errored attempt -> 0. Mean over tasks: 0.25.
    p = pass_at_1(hand_table())
    assert (p.tasks, p.attempts) == (2, 3)
    assert p.pass_at_1 == pytest.approx(0.25)
    assert p.expected_attempts_per_correct == pytest.approx(4.0)
    assert p.ci_low <= 0.25 <= p.ci_high


def test_pass_at_1_weights_tasks_not_attempts():
    t = table(
        *[req(i, sent_ms=0, chunks_ms=[1], tokens=1, correct=True, task="easy", attempt=i)
          for i in range(9)],
        req(9, sent_ms=0, chunks_ms=[1], tokens=1, correct=False, task="hard"),
    )
    assert pass_at_1(t).pass_at_1 == pytest.approx(0.5)
    assert accuracy(t).accuracy == pytest.approx(0.9)


def test_null_task_ids_are_separate_tasks():
    recs = [req(i, sent_ms=0, chunks_ms=[1], tokens=1, correct=i == 0) for i in range(3)]
    for r in recs:
        r.task_id = None
    assert pass_at_1(table(*recs)).tasks == 3


def test_expected_attempts():
    assert expected_attempts_per_correct(0.25) == 4.0
    assert expected_attempts_per_correct(0.0) == math.inf
    assert expected_attempts_per_correct(None) is None


def test_pass_at_1_zero_round_trips_infinity_through_json():
    t = table(req(0, sent_ms=0, chunks_ms=[1], tokens=1, correct=False))
    p = pass_at_1(t)
    assert p.expected_attempts_per_correct == math.inf
    assert PassAt1.model_validate_json(p.model_dump_json()) == p


def test_pass_at_1_of_nothing():
    p = pass_at_1(table())
    assert p.tasks == 0 and p.pass_at_1 is None and p.expected_attempts_per_correct is None


def _scored_run(tmp_path, outputs: list[tuple[str, str | None, str | None]]):
    """Records built the way a run builds them: JSONL tasks, ``score``, then the records table.
    ``outputs``: (task id, output text, error kind) per request."""
    import json

    from acceval.tasks import read_tasks_jsonl, score

    lines = [{"id": f"q{i}", "prompt": f"{i}+{i}=", "reference": str(2 * i),
              "checker": {"type": "numeric"}} for i in range(6)]
    lines.append({"id": "load", "prompt": "Say hello", "checker": None})
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    tasks = {t.id: t for t in read_tasks_jsonl(path)}
    recs = []
    for i, (task_id, text, error) in enumerate(outputs):
        r = req(i, sent_ms=i, chunks_ms=[i + 1], tokens=1, task=task_id, error=error)
        res = score(tasks[task_id], text, "stop", error)
        if res is not None:
            r.correct = res.correct
        recs.append(r)
    return table(*recs)


def test_load_only_tasks_leave_the_accuracy_denominator(tmp_path):
    # Five right answers, one wrong, one answered load-only task: 5/6, not 5/7.
    outputs = [(f"q{i}", str(2 * i), None) for i in range(5)]
    outputs += [("q5", "wrong", None), ("load", "hello", None)]
    t = _scored_run(tmp_path, outputs)
    a = accuracy(t)
    assert (a.n, a.correct, a.unscored, a.unchecked) == (6, 5, 1, 0)
    assert a.accuracy == pytest.approx(5 / 6)
    assert (a.ci_low, a.ci_high) == pytest.approx(wilson_interval(5, 6))
    p = pass_at_1(t)
    assert (p.tasks, p.attempts) == (6, 6) and p.pass_at_1 == pytest.approx(5 / 6)


def test_errors_stay_in_the_denominator_even_without_a_verdict(tmp_path):
    outputs = [("q0", "0", None), ("q1", None, "timeout"), ("load", None, "http")]
    a = accuracy(_scored_run(tmp_path, outputs))
    # q1 is scored False by the checker; the failed load-only request has no verdict but an
    # error never leaves the denominator.
    assert (a.n, a.correct, a.unscored, a.unchecked) == (3, 1, 0, 1)


def test_point_summary_reports_the_unscored_requests(tmp_path):
    from acceval.metrics import summarize_point
    from acceval.study import SLO

    outputs = [("q0", "0", None), ("load", "hi", None), ("load", "hi", None)]
    s = summarize_point(_scored_run(tmp_path, outputs), slo=SLO(), requested_rate_rps=None)
    assert s.accuracy is not None
    assert (s.accuracy.n, s.accuracy.unscored, s.accuracy.accuracy) == (1, 2, 1.0)


def test_accuracy_written_before_unscored_existed_still_reads():
    old = '{"n": 7, "correct": 5, "unchecked": 1, "accuracy": 0.714, "ci_low": 0.3, "ci_high": 0.9}'
    assert Accuracy.model_validate_json(old).unscored == 0


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", None]), st.booleans()),
                min_size=1, max_size=40))
def test_pass_at_1_is_the_mean_over_tasks_of_each_tasks_share_correct(rows):
    recs = [req(i, sent_ms=0, chunks_ms=[1], tokens=1, correct=ok, task=task or "x",
                attempt=i) for i, (task, ok) in enumerate(rows)]
    for r, (task, _) in zip(recs, rows, strict=True):
        r.task_id = task
    groups: dict[object, list[bool]] = {}
    for i, (task, ok) in enumerate(rows):  # a null task id is its own task
        groups.setdefault(task if task is not None else ("null", i), []).append(ok)
    p = pass_at_1(table(*recs))
    assert p.tasks == len(groups) and p.attempts == len(rows)
    assert p.pass_at_1 == pytest.approx(
        sum(sum(g) / len(g) for g in groups.values()) / len(groups))
