"""Which quality target, and which scoring rule, a training platform is judged by.

A declared ``training.target`` always wins. When a platform's logs are MLPerf ``:::MLLOG``
files naming a known benchmark, that benchmark's rule (result files, drops) scores it, and
its quality target from the training rules applies when none is declared; when a declared
target differs from the rules' the result says so (docs/training.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from acceval.training.log import RunLog
from acceval.training.mlperf import BenchmarkRule, rule_for
from acceval.training.spec import QualityTarget


@dataclass(frozen=True, slots=True)
class Resolved:
    target: QualityTarget | None     # None: no target (failure says why)
    rule: BenchmarkRule | None       # the MLPerf benchmark's rule; None: the generic one
    source: str                      # "declared", or the rule the target came from
    note: str = ""                   # a declared target that differs from the rules'
    failure: str | None = None


def from_rule(rule: BenchmarkRule) -> QualityTarget | None:
    if rule.threshold is None:
        return None
    if rule.metric == "eval_loss":
        return QualityTarget(max_eval_loss=rule.threshold)
    return QualityTarget(min_accuracy=rule.threshold)


def _benchmarks(logs: list[RunLog]) -> list[str]:
    return sorted({log.mlperf.benchmark for log in logs
                   if log.mlperf is not None and log.mlperf.benchmark})


def resolve(declared: QualityTarget | None, logs: list[RunLog]) -> Resolved:
    names = _benchmarks(logs)
    if len(names) > 1:
        return Resolved(declared, None, "declared" if declared else "",
                        failure=f"the logs name different MLPerf benchmarks ({', '.join(names)})"
                        "; give each benchmark its own platform")
    rule = rule_for(names[0]) if names else None
    ruled = from_rule(rule) if rule is not None else None
    if declared is not None:
        note = ""
        if rule is not None and ruled is not None and ruled != declared:
            note = (f"the declared target ({declared.text}) wins over MLPerf {rule.benchmark}'s "
                    f"({rule.quality}); the score is not comparable with published ones")
        return Resolved(declared, rule, "declared", note)
    if rule is None:
        return Resolved(None, None, "", failure=(
            f"the MLPerf benchmark {names[0]!r} is not one this version knows"
            if names else "the logs name no MLPerf benchmark (submission_benchmark)")
            + "; declare training.target")
    if ruled is None:
        return Resolved(None, rule, "", failure=(
            f"MLPerf {rule.benchmark}'s target ({rule.quality}) is not one number; declare "
            "training.target"))
    return Resolved(ruled, rule, f"MLPerf training rules, {rule.benchmark}: {rule.quality}")


__all__ = ["Resolved", "from_rule", "resolve"]
