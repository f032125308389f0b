"""Training on equal terms: time and cost to a quality target, stability, restarts, goodput,
MFU and compute against communication (docs/training.md).

The study section is :mod:`acceval.training.spec`; logs are read by
:mod:`acceval.training.ingest` (and traces by :mod:`acceval.training.trace`, the Neuron
profiler's JSON by :mod:`acceval.training.neuron`), the built-in
workload lives in :mod:`acceval.training.workload`, the pure metrics in
:mod:`acceval.training.metrics`, and ``analyze`` calls
:func:`acceval.training.analyze.training_section`.
"""

from __future__ import annotations

from acceval.training.spec import QualityTarget, Training, TrainingPlatform

__all__ = ["QualityTarget", "Training", "TrainingPlatform"]
