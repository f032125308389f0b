"""neuron-monitor's JSON report (aws-neuron-sdk, ``neuron-monitor-user-guide.rst``, "The JSON
output format") as canonical readings, the same ones its Prometheus companion publishes:
NeuronCore utilization per core (percent in the report, a ratio here), device memory per
runtime and per core. The report's error and ECC counts are per captured period, not totals,
so they are left to the Prometheus form, whose counters add them up.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from acceval.telemetry.parse import Reading, Scrape

_CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory",
                "tensors")
FAMILY = "neuron-monitor report"


def _report(data: Any) -> dict[str, Any] | None:
    """The report itself: a bare one, or the ``{"1": {...}}`` file the companion script
    reads (/opt/aws/neuron/bin/neuron-monitor-output.json)."""
    if not isinstance(data, dict):
        return None
    if "neuron_runtime_data" in data or "neuron_hardware_info" in data:
        return data
    inner = [v for v in data.values() if isinstance(v, dict) and "neuron_runtime_data" in v]
    return inner[0] if len(inner) == 1 else None


def _runtime_readings(report: dict[str, Any]) -> tuple[dict[tuple[str, str], float],
                                                       dict[tuple[str, str], list[float]]]:
    sums: dict[tuple[str, str], float] = defaultdict(float)
    utils: dict[tuple[str, str], list[float]] = defaultdict(list)
    for rt in report.get("neuron_runtime_data") or []:
        if not isinstance(rt, dict) or rt.get("error"):
            continue  # the companion script skips a runtime that reported an error too
        rep = rt.get("report") or {}
        cores = (rep.get("neuroncore_counters") or {}).get("neuroncores_in_use") or {}
        for idx, core in cores.items():
            pct = (core or {}).get("neuroncore_utilization")
            if isinstance(pct, int | float):
                utils[("accelerator_util", f"neuroncore{idx}")].append(float(pct) / 100.0)
        used = (rep.get("memory_used") or {}).get("neuron_runtime_used_bytes") or {}
        if isinstance(used.get("neuron_device"), int | float):
            sums[("device_memory_used_bytes", "")] += float(used["neuron_device"])
        per_core = (used.get("usage_breakdown") or {}).get("neuroncore_memory_usage") or {}
        for idx, parts in per_core.items():
            values = [float(parts[k]) for k in _CORE_MEMORY
                      if isinstance((parts or {}).get(k), int | float)]
            if values:
                sums[("device_memory_used_bytes", f"neuroncore{idx}")] += sum(values)
    return sums, utils


def parse_neuron_report(text: str) -> Scrape:
    """The canonical readings in one neuron-monitor JSON report."""
    out = Scrape()
    try:
        report = _report(json.loads(text))
    except json.JSONDecodeError as exc:
        out.error = f"not JSON: {exc}"
        return out
    if report is None:
        out.error = "JSON, but not a neuron-monitor report (no neuron_runtime_data)"
        return out
    sums, utils = _runtime_readings(report)
    for (metric, device), value in sums.items():
        out.readings.append(Reading(metric, device, value, FAMILY))
    for (metric, device), values in utils.items():  # one core in two runtimes: their mean
        out.readings.append(Reading(metric, device, sum(values) / len(values), FAMILY))
    out.source = "neuron"
    return out


__all__ = ["parse_neuron_report"]
