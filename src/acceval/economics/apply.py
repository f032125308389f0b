"""Applies the economics to a measured run: a bill per target and load point, the operating
point at the SLO, energy at the declared boundary, the frontier, the sensitivity, the verdict.

Pure over the RunResult and the probe samples, so ``acceval report --recompute`` reproduces it.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pyarrow as pa

from acceval.economics.bill import Bill, CostInputs, compute_bill, frontier
from acceval.economics.catalog import Catalog
from acceval.economics.energy import energy_outputs
from acceval.economics.inputs import Measured, cost_inputs_for, estimate_energy
from acceval.economics.sensitivity import sensitivity
from acceval.probes import energy_between, table_to_samples
from acceval.results.result import PointResult, RunResult, TargetResult
from acceval.study import Study
from acceval.study import Target as TargetSpec


def _point_energy(spec: TargetSpec, p: PointResult, samples: list[Any], catalog: Catalog | None,
                  correct: int) -> dict[str, Any] | None:
    if spec.energy.probe == "none" and spec.energy.device_tdp_w is None:
        return None
    duration = p.summary.duration_s
    if not duration:
        return None
    device_j = energy_between(samples, p.started_ns, p.ended_ns) if samples else None
    est = estimate_energy(spec.energy, device_j=device_j, duration_s=duration,
                          chips=spec.platform.chips, catalog=catalog,
                          hardware=spec.platform.hardware)
    out = energy_outputs(est, correct=correct, output_tokens=p.summary.output_tokens_total,
                         duration_s=duration, electricity_usd_per_kwh=None)
    return out.to_dict()


def _correct(p: PointResult) -> int:
    acc = p.summary.accuracy
    return acc.correct if acc is not None else 0


def _eligible(p: PointResult) -> bool:
    return p.summary.meets_slo is not False


def apply_economics(study: Study, result: RunResult, samples_table: pa.Table | None,
                    catalog: Catalog | None, *, base_dir: Path | None = None) -> None:
    """Fill ``TargetResult.economics``/``energy`` and ``RunResult.economics`` in place.

    With a demand profile in the study, utilization is derived from the measured latency-load
    curve and the demand (capacity planning) instead of the declared assumption.
    """
    from acceval.capacity import capacity_for

    samples = table_to_samples(samples_table) if samples_table is not None else []
    specs = {t.name: t for t in study.targets}
    op_inputs: list[CostInputs] = []
    op_bills: list[Bill] = []
    sat_bills: list[Bill] = []
    for t in result.targets:
        spec = specs[t.name]
        cap = capacity_for(study, t, catalog=catalog, base_dir=base_dir)
        utilization = cap.utilization_input if cap is not None else None
        per_point: list[tuple[PointResult, Bill, CostInputs, dict[str, Any] | None]] = []
        # The same points billed at the declared utilization (busy replicas, no demand shape).
        saturated: list[tuple[PointResult, Bill]] = []
        for p in t.points:
            if not p.summary.duration_s:
                continue
            energy = _point_energy(spec, p, samples, catalog, _correct(p))
            measured = Measured(
                duration_s=p.summary.duration_s, requests=p.summary.requests,
                correct=_correct(p), output_tokens=p.summary.output_tokens_total,
                compile_s=t.local_server.startup_s if t.local_server else None,
                energy_j=energy["joules"] if energy else None,
                energy_level=energy["level"] if energy else None,
            )
            ci = cost_inputs_for(spec, study, catalog, measured, load_label=p.label)
            if ci is None:
                break
            saturated.append((p, compute_bill(ci)))
            if utilization is not None:
                ci = dataclasses.replace(ci, utilization=utilization)
            per_point.append((p, compute_bill(ci), ci, energy))
        if not per_point:
            continue
        sat_ok = [x for x in saturated if _eligible(x[0])] or saturated
        sat_p, sat_bill = min(sat_ok, key=lambda x: x[1].cost_per_correct_usd)
        sat_bills.append(sat_bill)
        eligible = [x for x in per_point if _eligible(x[0])] or per_point
        op = min(eligible, key=lambda x: x[1].cost_per_correct_usd)
        p, bill, ci, energy = op
        acc = p.summary.accuracy
        interval = None
        if acc is not None and acc.ci_low is not None and acc.ci_high is not None:
            interval = [_div(bill.cost_per_attempt_usd, acc.ci_high),
                        _div(bill.cost_per_attempt_usd, acc.ci_low)]
        t.economics = {
            "operating_point": p.label,
            "operating_point_meets_slo": p.summary.meets_slo,
            "bill": bill.to_dict(),
            "cost_per_correct_ci_usd": interval,
            "points": [b.to_dict() for _, b, _, _ in per_point],
            "at_declared_utilization": {
                "operating_point": sat_p.label,
                "cost_per_correct_usd": sat_bill.cost_per_correct_usd,
                "cost_per_attempt_usd": sat_bill.cost_per_attempt_usd,
                "cost_per_mtok_output_usd": sat_bill.cost_per_mtok_output_usd,
            },
        }
        if cap is not None:
            t.economics["capacity"] = cap.to_dict()
            t.economics["utilization_under_demand"] = cap.utilization
        t.energy = energy
        op_inputs.extend(x[2] for x in eligible)
        op_bills.append(bill)
    if not op_bills:
        return
    passing = {t.name for t in result.targets if t.gate.passed is not False}
    front = frontier([b for b in op_bills if b.target in passing] or op_bills,
                     study.costs.baseline_usd_per_task)
    sens = sensitivity([ci for ci in op_inputs if ci.target in passing] or op_inputs,
                       study.costs.sensitivity)
    ranking = sorted(op_bills, key=lambda b: (b.target not in passing, b.cost_per_correct_usd))
    result.economics = {
        "winner": front.winner,
        "ranking": [b.target for b in ranking],
        "frontier": front.to_dict(),
        "sensitivity": sens.to_dict(),
        "verdict_lines": _verdict_lines(result, ranking, passing, sens.to_dict()),
    }
    if study.demand is not None:
        sat_rank = sorted(sat_bills, key=lambda b: (b.target not in passing,
                                                    b.cost_per_correct_usd))
        result.economics["ranking_at_declared_utilization"] = [b.target for b in sat_rank]
        result.economics["verdict_lines"] += _demand_lines(sat_rank, ranking, passing)


def _per_token_line(bills: list[Bill], eligible: list[Bill], where: str = "") -> list[str]:
    cheapest_tok = min((b for b in bills if b.cost_per_mtok_output_usd is not None),
                       key=lambda b: b.cost_per_mtok_output_usd or math.inf, default=None)
    if not eligible or cheapest_tok is None or cheapest_tok.target == eligible[0].target:
        return []
    head = f"{where}the" if where else "The"
    return [f"{head} cheapest per token ({cheapest_tok.target}, "
            f"{_usd(cheapest_tok.cost_per_mtok_output_usd)} per 1M output tokens) is not the "
            f"cheapest per correct task ({eligible[0].target})."]


def _demand_lines(sat: list[Bill], demand: list[Bill], passing: set[str]) -> list[str]:
    """Set the cost under the study's demand beside the cost with every replica busy."""
    sat_ok = [b for b in sat if b.target in passing and not math.isinf(b.cost_per_correct_usd)]
    lines = []
    if sat_ok:
        lines.append(f"With every replica busy (declared utilization), the cheapest correct task "
                     f"is {sat_ok[0].target} at {_usd(sat_ok[0].cost_per_correct_usd)}.")
        lines += _per_token_line(sat, sat_ok, "With every replica busy, ")
    by_target = {b.target: b for b in sat}
    ratios = [d.cost_per_correct_usd / by_target[d.target].cost_per_correct_usd
              for d in demand if d.target in by_target
              and 0 < by_target[d.target].cost_per_correct_usd < math.inf
              and d.cost_per_correct_usd < math.inf]
    if ratios:
        lines.append(f"Under the demand profile, capacity held for the peak sits idle: a correct "
                     f"task costs {min(ratios):.1f}–{max(ratios):.1f}× what it costs at "
                     "saturation (see Capacity).")
    return lines


def _div(a: float | None, b: float) -> float | None:
    if a is None:
        return None
    return a / b if b > 0 else math.inf


def _usd(v: float | None) -> str:
    if v is None:
        return "not measured"
    if math.isinf(v):
        return "∞ (no correct answers)"
    return f"${v:.6g}"


def _verdict_lines(result: RunResult, ranking: list[Bill], passing: set[str],
                   sens: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    by_name: dict[str, TargetResult] = {t.name: t for t in result.targets}
    eligible = [b for b in ranking if b.target in passing and not math.isinf(
        b.cost_per_correct_usd)]
    if eligible:
        win = eligible[0]
        line = (f"Cheapest correct task: {win.target} at {_usd(win.cost_per_correct_usd)} "
                f"per correct task ({win.load_label})")
        if len(eligible) > 1:
            ratio = eligible[1].cost_per_correct_usd / win.cost_per_correct_usd
            line += (f", {ratio:.2f}× cheaper than {eligible[1].target}" if ratio >= 1.01
                     else f", tied with {eligible[1].target} (within 1%)")
        lines.append(line + ".")
    else:
        lines.append("No target met the quality level with a finite cost per correct task.")
    for b in ranking:
        t = by_name[b.target]
        if b.target not in passing:
            lines.append(f"{b.target} fails the quality level ({'; '.join(t.gate.reasons)}); "
                         f"its {_usd(b.cost_per_correct_usd)} per correct task does not qualify.")
        avail = ((t.economics or {}).get("capacity") or {}).get("availability") or {}
        if avail.get("status") in ("blocked", "at-risk"):
            why = "; ".join(avail.get("blockers") or avail.get("warnings") or [])
            lines.append(f"{b.target} is {avail['status'].upper()} for this demand: {why}.")
        if t.economics and t.economics.get("operating_point_meets_slo") is False:
            lines.append(f"{b.target}: no load point met the SLO; its cost is at the cheapest "
                         "point regardless.")
    lines += _per_token_line(ranking, eligible)
    flips = sens.get("flips") or []
    if len(eligible) == 1:
        lines.append("Only one target meets the quality level, so no assumption can change the "
                     "winner; the sensitivity ranges move its cost only.")
    elif flips:
        names = sorted({f"{f['input']} ({f['scope']}, {f['side']})" for f in flips})
        lines.append("The ranking FLIPS within the sensitivity ranges when these move: "
                     + ", ".join(names) + ".")
    elif eligible:
        lines.append("The ranking holds across every declared sensitivity range.")
    return lines
