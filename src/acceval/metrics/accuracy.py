"""Accuracy of the answers: the share that is correct, pass@1 over attempts, and intervals.

The denominator is the *scored* requests. A load-only request (its task has no checker, so
``correct`` is null) that was answered has nothing to be right or wrong about: it leaves the
denominator and is counted in ``unscored``. A request that errored always stays in the
denominator as *not correct*, whatever its ``correct`` says: a platform cannot raise its
accuracy by failing requests, and an errored row with no verdict cannot tell whether its task
was checkable.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from acceval.metrics._model import MetricModel
from acceval.metrics.derive import BoolArray, Derived, IntArray, Outcomes, derive


def wilson_interval(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion k/n (z=1.96: 95 %). ``k`` may be fractional
    (pass@1 over attempts). Raises ValueError when n <= 0 or k is outside [0, n]."""
    if n <= 0:
        raise ValueError(f"wilson_interval needs n > 0 (got n={n})")
    if not 0 <= k <= n:
        raise ValueError(f"wilson_interval needs 0 <= k <= n (got k={k}, n={n})")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Rounding can push an end a hair past p̂ or outside [0, 1] at the extremes.
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


class Accuracy(MetricModel):
    """Correct answers among scored measured requests. ``accuracy`` and the 95 % Wilson
    interval are None when n == 0.

    ``unscored`` defaults to 0 so that results written before it existed read back: they left
    nothing out of ``n``.
    """

    n: int                       # scored measured requests (errors included): the denominator
    correct: int
    unchecked: int               # of n, requests with no verdict (errors), counted not correct
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    unscored: int = 0            # answered load-only requests (no checker), left out of n


class PassAt1(MetricModel):
    """Mean over tasks of each task's success rate over its attempts.

    The interval is Wilson's with n = number of tasks; a task's mean success varies no more
    than one Bernoulli draw does, so it is conservative when tasks have several attempts and
    exact in meaning when they have one.
    """

    tasks: int
    attempts: int
    pass_at_1: float | None
    ci_low: float | None
    ci_high: float | None
    expected_attempts_per_correct: float | None  # 1/pass_at_1; inf at 0; None without tasks


def expected_attempts_per_correct(p: float | None) -> float | None:
    """Attempts needed on average per correct answer (geometric mean 1/p); inf when p == 0."""
    if p is None:
        return None
    return math.inf if p <= 0 else 1.0 / p


def scored_mask(d: Derived | Outcomes) -> BoolArray:
    """Measured rows that count in the accuracy denominator: those with a verdict, and every
    errored row (see the module docstring)."""
    return d.measured & (d.correct_known | ~d.ok)


def _accuracy(correct: BoolArray, known: BoolArray, unscored: int) -> Accuracy:
    n = int(correct.size)
    k = int(correct.sum())
    lo, hi = wilson_interval(k, n) if n else (None, None)
    return Accuracy(
        n=n, correct=k, unchecked=int(n - known.sum()),
        accuracy=k / n if n else None, ci_low=lo, ci_high=hi, unscored=unscored,
    )


def _pass_at_1(correct: BoolArray, task_code: IntArray) -> PassAt1:
    attempts = int(correct.size)
    if attempts == 0:
        return PassAt1(tasks=0, attempts=0, pass_at_1=None, ci_low=None, ci_high=None,
                       expected_attempts_per_correct=None)
    # A null task id (code -1) is its own task: one shared group would merge unrelated requests.
    codes = task_code.copy()
    nulls = codes < 0
    codes[nulls] = codes.max(initial=-1) + 1 + np.arange(int(nulls.sum()))
    # Codes index their run's dictionary of task ids, so counting by code is grouping by
    # task (in code order, as a sort would give) without sorting a million codes.
    per_code_n = np.bincount(codes)
    seen = per_code_n > 0
    per_task_ok = np.bincount(codes, weights=correct.astype(np.float64))[seen]
    task_mean = per_task_ok / per_code_n[seen]
    tasks = int(task_mean.size)
    p = float(task_mean.mean())
    lo, hi = wilson_interval(p * tasks, tasks)
    return PassAt1(tasks=tasks, attempts=attempts, pass_at_1=p, ci_low=lo, ci_high=hi,
                   expected_attempts_per_correct=expected_attempts_per_correct(p))


def accuracy(table: pa.Table | Derived | Outcomes) -> Accuracy:
    """Accuracy over the scored measured (non-warmup) rows; answered load-only rows are
    counted in ``unscored``."""
    d = table if isinstance(table, Derived | Outcomes) else derive(table)
    s = scored_mask(d)
    return _accuracy(d.correct[s], d.correct_known[s], int((d.measured & ~s).sum()))


def pass_at_1(table: pa.Table | Derived | Outcomes) -> PassAt1:
    """pass@1 over the scored measured rows (as :func:`accuracy`), grouping attempts by
    ``task_id``."""
    d = table if isinstance(table, Derived | Outcomes) else derive(table)
    s = scored_mask(d)
    return _pass_at_1(d.correct[s], d.task_code[s])


def has_correctness(d: Derived | Outcomes) -> bool:
    """Whether any measured row carries a verdict; without one, accuracy is missing, not 0."""
    return bool(d.correct_known[d.measured].any())
