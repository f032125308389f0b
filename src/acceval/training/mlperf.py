"""MLPerf Training's scoring rules, as MLCommons applies them (docs/training.md).

A run's time to train is ``run_stop - run_start`` (milliseconds in the log), initialization
outside it; a run converges when its ``run_stop`` status is ``success`` and an evaluation
reached the benchmark's quality target. A benchmark's result is the *olympic* mean of its
result files: sort the converged runs, drop ``d`` from the fast end and ``d - f`` from the
slow end (``f`` runs did not converge: they are the slowest), average the rest; more than
``d`` non-converged runs make the result invalid. ``d`` is 1, except UNet3D's 4.

The figures come from the ``mlperf-logging`` package (mlcommons/logging 4.1.68):
``benchmark_meta._ALL_RESULT_FILE_COUNTS`` (result files per benchmark),
``result_summarizer._compute_strong_score_standalone`` (``max_dropped_scores = 4 if
benchmark == "unet3d" else 1``, ``_compute_olympic_average``) and the compliance checker's
``closed_<benchmark>.yaml`` ``ATLEAST_ONE_CHECK`` lines (the quality targets of the training
rules, mlcommons/training_policies). A test compares these tables and the score with that
package, so a new round that changes them fails loudly instead of scoring silently wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Metric = Literal["eval_loss", "eval_accuracy"]


@dataclass(frozen=True, slots=True)
class BenchmarkRule:
    """How MLPerf scores one benchmark: result files, drops, and its quality target."""

    benchmark: str
    result_files: int                 # the result files a submission needs
    max_dropped: int = 1              # dropped at each end; also the non-converged allowance
    metric: Metric | None = None      # what ``eval_accuracy`` holds (a loss for the LLMs)
    threshold: float | None = None    # None: a target this table does not encode
    quality: str = ""                 # the rule in words

    @property
    def text(self) -> str:
        drop = (f"drop the {self.max_dropped} fastest and up to {self.max_dropped} slowest, "
                f"at most {self.max_dropped} not converged" if self.max_dropped > 1 else
                "drop the fastest and the slowest, at most 1 not converged")
        return f"MLPerf {self.benchmark}: {self.result_files} result files, {drop}"

    def reached(self, value: float) -> bool:
        assert self.threshold is not None
        return value <= self.threshold if self.metric == "eval_loss" else value >= self.threshold


def _acc(name: str, files: int, threshold: float, quality: str,
         max_dropped: int = 1) -> BenchmarkRule:
    return BenchmarkRule(name, files, max_dropped, "eval_accuracy", threshold, quality)


def _loss(name: str, files: int, threshold: float, quality: str) -> BenchmarkRule:
    return BenchmarkRule(name, files, 1, "eval_loss", threshold, quality)


#: Every training benchmark mlperf-logging 4.1.68 knows (its result file counts), with the
#: quality target of its closed-division rules where it is one number.
RULES: dict[str, BenchmarkRule] = {r.benchmark: r for r in (
    _acc("bert", 10, 0.720, "masked-LM accuracy >= 0.720"),
    _acc("dlrm", 5, 0.8025, "AUC >= 0.8025"),
    _acc("dlrm_dcnv2", 10, 0.80275, "AUC >= 0.80275"),
    _acc("gnmt", 10, 0.240, "BLEU >= 0.240"),
    _loss("gpt3", 3, 2.69, "log perplexity <= 2.69"),
    BenchmarkRule("maskrcnn", 5, quality="box mAP >= 0.377 and mask mAP >= 0.339"),
    _acc("minigo", 10, 0.5, "win rate >= 0.50"),
    _acc("resnet", 5, 0.759, "top-1 accuracy >= 0.759"),
    _acc("ssd", 5, 0.340, "mAP >= 0.340"),
    _acc("retinanet", 5, 0.340, "mAP >= 0.340"),
    BenchmarkRule("stable_diffusion", 10, quality="FID <= 90 and CLIP >= 0.15"),
    _acc("transformer", 10, 0.25, "BLEU >= 0.25"),
    BenchmarkRule("ncf", 10, quality="HR@10 (a round before 0.7)"),
    _loss("rnnt", 10, 0.058, "word error rate <= 0.058"),
    _acc("unet3d", 40, 0.908, "mean DICE >= 0.908", max_dropped=4),
    _acc("gnn", 10, 0.72, "accuracy >= 0.72"),
    _acc("rgat", 10, 0.72, "accuracy >= 0.72"),
    _loss("llama2_70b_lora", 10, 0.925, "eval loss <= 0.925"),
    _loss("llama31_405b", 3, 5.6, "log perplexity <= 5.6"),
    _loss("llama31_8b", 10, 3.3, "log perplexity <= 3.3"),
    _loss("flux1", 10, 0.586, "validation loss <= 0.586"),
    _loss("gpt_oss_20b", 10, 3.34, "log perplexity <= 3.34"),
    _loss("deepseekv3_671b", 3, 3.6, "log perplexity <= 3.6"),
    BenchmarkRule("qwen35_397b_grpo", 3, quality="reward above the round's target_accuracy"),
    BenchmarkRule("dlrmv4", 10, quality="accuracy >= the round's target_accuracy"),
)}

#: The rule for logs that name no MLPerf benchmark: at least 3 runs, drop one at each end.
GENERIC = BenchmarkRule("generic", 3, 1, quality="")

#: Names the result summarizer maps to a benchmark (``_benchmark_alias``).
_ALIASES = {"mask": "maskrcnn"}


def rule_for(benchmark: str | None) -> BenchmarkRule | None:
    if benchmark is None:
        return None
    key = benchmark.strip().lower()
    return RULES.get(_ALIASES.get(key, key))


@dataclass(frozen=True, slots=True)
class Olympic:
    """The olympic mean of some runs' times, and which runs it kept and dropped."""

    value_s: float | None
    valid: bool
    reason: str
    kept: tuple[int, ...]
    dropped: tuple[int, ...]


def olympic(times_s: list[float | None], rule: BenchmarkRule) -> Olympic:
    """MLPerf's olympic mean over runs (``None``: the run did not converge), exactly as
    ``_compute_olympic_average`` sorts and slices."""
    n, d = len(times_s), rule.max_dropped
    done = sorted((t, i) for i, t in enumerate(times_s) if t is not None)
    failed = [i for i, t in enumerate(times_s) if t is None]
    if n < rule.result_files:
        what = (f"MLPerf {rule.benchmark} needs {rule.result_files} result files"
                if rule.benchmark != GENERIC.benchmark else f"MLPerf-style scoring needs at least "
                f"{rule.result_files}")
        return Olympic(None, False, f"{n} run(s); {what}", (), ())
    if len(failed) > d:
        return Olympic(None, False, f"{len(failed)} of {n} runs did not converge (more than "
                       f"{d} makes the result invalid)", (), ())
    kept = done[d:len(done) - (d - len(failed))]
    if not kept:
        return Olympic(None, False, "no run left after the drops", (), ())
    vals = [t for t, _ in kept]
    # A mean of equal floats can round just outside them: keep it inside the scored runs.
    mean = min(max(sum(vals) / len(vals), vals[0]), vals[-1])
    dropped = tuple(sorted({i for _, i in done} - {i for _, i in kept} | set(failed)))
    lead = (f"mean of {len(kept)} runs after dropping the fastest and the slowest" if d == 1
            else f"mean of {len(kept)} runs after dropping the {d} fastest and the "
            f"{d - len(failed)} slowest")
    tail = ("; each run that did not converge counts as the slowest" if failed else "")
    return Olympic(mean, True, lead + tail, tuple(i for _, i in kept), dropped)


__all__ = ["GENERIC", "RULES", "BenchmarkRule", "Metric", "Olympic", "olympic", "rule_for"]
