"""MLPerf Training result files in the real ``:::MLLOG`` format, small enough for a test.

Each file carries what mlperf-logging's compliance checker (ruleset 4.0.0) requires of its
benchmark, so that the package's own scorer reads and scores it: submission keys, the
hyperparameters of the closed division, ``init_start``/``init_stop``, ``run_start``, epochs,
evaluations and ``run_stop`` with its status. The line format is the one
``mlperf_logging.mllog`` writes (namespace, time_ms, event_type, key, value, metadata).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RULESET = "4.0.0"

#: The closed-division keys each benchmark's checker wants once (values that pass).
HYPER: dict[str, dict[str, Any]] = {
    "bert": {"global_batch_size": 48, "opt_base_learning_rate": 0.00035,
             "opt_lamb_epsilon": 1e-6, "opt_learning_rate_training_steps": 13700,
             "opt_learning_rate_warmup_steps": 0, "num_warmup_steps": 0,
             "start_warmup_step": 0, "opt_lamb_beta_1": 0.9, "opt_lamb_beta_2": 0.999,
             "opt_lamb_weight_decay_rate": 0.01},
    "resnet": {"global_batch_size": 3264, "opt_name": "sgd", "sgd_opt_base_learning_rate": 10.5,
               "sgd_opt_end_learning_rate": 0.0001, "sgd_opt_learning_rate_decay_poly_power": 2,
               "sgd_opt_learning_rate_decay_steps": 1000, "sgd_opt_weight_decay": 0.0001,
               "sgd_opt_momentum": 0.9, "model_bn_span": 102,
               "opt_learning_rate_warmup_epochs": 2},
    "unet3d": {"global_batch_size": 56, "opt_name": "sgd", "opt_base_learning_rate": 2.0,
               "opt_learning_rate_warmup_epochs": 1000,
               "opt_learning_rate_decay_boundary_epochs": [],
               "opt_learning_rate_decay_factor": 1.0, "opt_weight_decay": 0.0, "seed": 1,
               "opt_momentum": 0.9, "oversampling": 0.4,
               "training_input_shape": [128, 128, 128],
               "validation_input_shape": [128, 128, 128], "validation_overlap": 0.5},
    "llama2_70b_lora": {"global_batch_size": 8, "opt_base_learning_rate": 0.0004,
                        "lora_alpha": 32, "opt_learning_rate_training_steps": 1024,
                        "opt_gradient_clip_norm": 0.3, "opt_adamw_weight_decay": 0.0001,
                        "lora_rank": 16},
}
_SAMPLES = {"unet3d": (168, 42)}


def _line(t_ms: int, key: str, value: Any = None, meta: dict[str, Any] | None = None,
          event: str = "POINT_IN_TIME") -> str:
    return ":::MLLOG " + json.dumps({
        "namespace": "", "time_ms": t_ms, "event_type": event, "key": key, "value": value,
        "metadata": {"file": "train.py", "lineno": 1, **(meta or {})}})


def result_file(path: Path, benchmark: str, *, init_ms: int, run_ms: int,
                evals: list[float], status: str = "success", platform: str = "sys-a",
                t0_ms: int = 1_700_000_000_000) -> None:
    """One run: ``init_ms`` of initialization, then ``run_ms`` from run_start to run_stop
    with ``evals`` spread evenly over it (the last one just before run_stop)."""
    train, evs = _SAMPLES.get(benchmark, (1000, 100))
    out = [_line(t0_ms, "cache_clear", True)]
    for key, value in (("submission_org", "acme"), ("submission_platform", platform),
                       ("submission_division", "closed"), ("submission_status", "onprem"),
                       ("submission_benchmark", benchmark)):
        out.append(_line(t0_ms, key, value))
    out.append(_line(t0_ms, "init_start", event="INTERVAL_START"))
    hyper = {**HYPER[benchmark], "gradient_accumulation_steps": 1, "train_samples": train,
             "eval_samples": evs}
    out += [_line(t0_ms + 1, k, v) for k, v in hyper.items()]
    start = t0_ms + init_ms
    out.append(_line(start, "init_stop", event="INTERVAL_END"))
    out.append(_line(start, "run_start", event="INTERVAL_START"))
    out.append(_line(start, "block_start", None, {"first_epoch_num": 1,
                                                  "epoch_count": len(evals)}, "INTERVAL_START"))
    for i, acc in enumerate(evals, 1):
        at = start + run_ms * i // len(evals) - 3
        meta = {"epoch_num": i, "samples_count": i * 1000}
        out.append(_line(at - 10, "epoch_start", None, {"epoch_num": i}, "INTERVAL_START"))
        out.append(_line(at - 2, "epoch_stop", None, {"epoch_num": i}, "INTERVAL_END"))
        out.append(_line(at - 1, "eval_start", None, meta, "INTERVAL_START"))
        out.append(_line(at, "eval_accuracy", acc, meta))
        out.append(_line(at, "eval_stop", None, meta, "INTERVAL_END"))
    out.append(_line(start + run_ms, "block_stop", None, {"first_epoch_num": 1},
                     "INTERVAL_END"))
    out.append(_line(start + run_ms, "run_stop", None, {"status": status}, "INTERVAL_END"))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


__all__ = ["HYPER", "RULESET", "result_file"]
