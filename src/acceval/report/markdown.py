"""Markdown rendering of a RunResult (also what snapshot tests pin)."""

from __future__ import annotations

import html
from typing import Any

import yaml

from acceval.metrics import Distribution
from acceval.report import _capacity as cap
from acceval.report._fmt import NOT_MEASURED, gate, num, pct, sig, usd, yesno
from acceval.results.result import PointResult, RunResult, TargetResult


def _d3(d: Distribution) -> str:
    if not d.count:
        return NOT_MEASURED
    return f"{num(d.p50)} / {num(d.p95)} / {num(d.p99)}"


def _acc(t: TargetResult | PointResult) -> str:
    a = t.accuracy if isinstance(t, TargetResult) else t.summary.accuracy
    if a is None or a.accuracy is None:
        return NOT_MEASURED
    return f"{pct(a.accuracy)} [{pct(a.ci_low)}–{pct(a.ci_high)}] (n={a.n})"


def _esc(text: str) -> str:
    """User and model text is shown, never interpreted (Markdown renderers pass HTML through)."""
    return html.escape(text, quote=False)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _verdict(result: RunResult) -> list[str]:
    lines = ["## Verdict", ""]
    econ = result.economics or {}
    ranking = econ.get("ranking")
    if ranking:
        for line in econ.get("verdict_lines", []):
            lines.append(f"- {line}")
        lines.append("")
        return lines
    for t in result.targets:
        if t.failure:
            lines.append(f"- **{t.name}**: not measured ({t.failure})")
            continue
        best = _best_point(t)
        rate = num(best.summary.request_throughput_rps) if best else NOT_MEASURED
        lines.append(
            f"- **{t.name}**: accuracy {_acc(t)}, quality gate {gate(t.gate.passed)}; "
            f"best throughput meeting the SLO: {rate} req/s"
        )
    lines.append("")
    return lines


def _best_point(t: TargetResult) -> PointResult | None:
    ok = [p for p in t.points if p.summary.meets_slo and p.summary.request_throughput_rps]
    return max(ok, key=lambda p: p.summary.request_throughput_rps or 0.0) if ok else None


def render_markdown(result: RunResult) -> str:
    lines = [f"# {result.study_name}", "", f"Run `{result.run_id}`, started {result.created_utc}"]
    if result.interrupted:
        lines += ["", "**This run was interrupted; the numbers cover what was measured.**"]
    desc = result.study.get("description")
    if desc:
        lines += ["", _esc(str(desc))]
    lines.append("")
    lines += _verdict(result)

    slo = result.study.get("slo", {})
    bounds = ", ".join(f"{k} ≤ {v}" for k, v in slo.items()
                       if k.endswith("_ms") and v is not None) or "none set"
    lines += ["## Latency and throughput per load point", "",
              f"SLO: {bounds} at p{num(slo.get('percentile'), 0)}; "
              f"max error rate {pct(slo.get('max_error_rate'))}.", ""]
    rows = []
    for t in result.targets:
        for p in t.points:
            s = p.summary
            rows.append([
                t.name, p.label, str(s.requests), pct(s.error_rate),
                _d3(s.ttft_ms), _d3(s.tpot_ms), num(s.e2e_ms.p95),
                num(s.request_throughput_rps), num(s.output_token_throughput_tps),
                num(s.goodput_rps), yesno(s.meets_slo),
            ])
    lines += _table(["target", "load", "requests", "errors", "TTFT ms p50/p95/p99",
                     "TPOT ms p50/p95/p99", "E2E ms p95", "req/s", "out tok/s",
                     "goodput req/s", "meets SLO"], rows)
    lines.append("")

    lines += ["## Quality", ""]
    rows = []
    for t in result.targets:
        for p in t.points:
            rows.append([t.name, p.label, _acc(p), num(p.summary.correct_goodput_rps, 2)])
        rows.append([t.name, "**all**", _acc(t), ""])
    lines += _table(["target", "load", "accuracy [95% Wilson]", "correct goodput req/s"], rows)
    lines.append("")
    rows = []
    for t in result.targets:
        req = num(t.gate.required_accuracy, 4) if t.gate.required_accuracy is not None else "—"
        p1 = t.pass_at_1
        p1s = NOT_MEASURED if p1 is None or p1.pass_at_1 is None else (
            f"{pct(p1.pass_at_1)} over {p1.tasks} tasks")
        rows.append([t.name, gate(t.gate.passed), req, "; ".join(t.gate.reasons) or "—", p1s])
    lines += _table(["target", "quality gate", "required accuracy", "reasons", "pass@1"], rows)
    lines.append("")

    lines += _economics(result)
    lines += _capacity(result)
    lines += _demand_and_faults(result)
    lines += _batching(result)
    lines += _portability(result)

    lines += ["## Errors", ""]
    rows = []
    for t in result.targets:
        for p in t.points:
            kinds = ", ".join(f"{k}: {v}" for k, v in sorted(p.summary.errors_by_kind.items()))
            rows.append([t.name, p.label, str(p.summary.errors), kinds or "—"])
    lines += _table(["target", "load", "errors", "by kind"], rows)
    lines.append("")

    lines += ["## Load-generator self-check", "",
              "Schedule lag is the actual send time minus the intended one. A point is flagged "
              "degraded when the client could not keep the schedule (docs/metrics.md).", ""]
    rows = []
    for t in result.targets:
        for p in t.points:
            s = p.summary
            rows.append([t.name, p.label, num(s.schedule_lag_ms.p50, 3),
                         num(s.schedule_lag_ms.p99, 3), num(s.requested_rate_rps, 1),
                         num(s.achieved_rate_rps, 1), yesno(s.degraded),
                         "; ".join(s.degraded_reasons) or "—", p.stopped_by])
    lines += _table(["target", "load", "lag p50 ms", "lag p99 ms", "requested req/s",
                     "achieved req/s", "degraded", "why", "stopped by"], rows)
    lines.append("")

    lines += ["## Provenance", ""]
    rows = []
    for t in result.targets:
        fp = ", ".join(f"{k}={v}" for k, v in sorted(t.fingerprint.items())) or NOT_MEASURED
        local = "—"
        if t.local_server:
            ls = t.local_server
            local = (f"{ls.engine} {ls.model or ''} {ls.precision or ''} "
                     f"startup {num(ls.startup_s, 2)} s")
        rows.append([t.name, str(t.endpoint.get("base_url", "")), str(t.endpoint.get("model", "")),
                     fp, local])
    lines += _table(["target", "endpoint", "model", "fingerprint", "local server"], rows)
    lines += ["", "Software: " + ", ".join(f"{k} {v}" for k, v in sorted(result.software.items())),
              "", f"Seeds: {result.seeds}", ""]
    if result.warnings:
        lines += ["Warnings:", ""] + [f"- {_esc(w)}" for w in result.warnings] + [""]
    lines += ["<details><summary>Study as run</summary>", "", "```yaml",
              yaml.safe_dump(result.study, sort_keys=False).rstrip(), "```", "", "</details>", ""]
    return "\n".join(lines)


def _energy_cell(energy: dict[str, Any] | None) -> str:
    if not energy or energy.get("joules_per_correct") is None:
        return NOT_MEASURED
    prov = energy.get("provenance") or {}
    origins = sorted({str(c.get("origin")) for c in prov.get("components", [])})
    return (f"{sig(energy['joules_per_correct'])} J at {energy.get('level')} "
            f"({', '.join(origins) or 'measured'})")


def _economics(result: RunResult) -> list[str]:
    if not any(t.economics for t in result.targets):
        return ["## Cost", "", "Not measured: no target declares a price.", ""]
    lines = ["## Cost and energy at the operating point", "",
             "The operating point is the load point that meets the SLO at the lowest cost per "
             "correct task; the interval follows from the accuracy interval.", ""]
    rows = []
    for t in result.targets:
        e = t.economics or {}
        bill = e.get("bill") or {}
        ci = e.get("cost_per_correct_ci_usd")
        estimated = sorted(f"{k} ({v.get('origin')})" for k, v in (bill.get("inputs") or {}).items()
                           if v.get("value") is not None and v.get("origin") != "measured")
        rows.append([
            t.name, str(e.get("operating_point", NOT_MEASURED)),
            usd(bill.get("cost_per_correct_usd")),
            f"{usd(ci[0])} – {usd(ci[1])}" if ci else NOT_MEASURED,
            usd(bill.get("cost_per_attempt_usd")), usd(bill.get("cost_per_mtok_output_usd")),
            _energy_cell(t.energy), ", ".join(estimated) or "—",
        ])
    lines += _table(["target", "operating point", "cost per correct task", "95% interval",
                     "cost per attempt", "cost per 1M output tokens", "energy per correct task",
                     "inputs not measured"], rows)
    lines.append("")
    rows = []
    for t in result.targets:
        for item in ((t.economics or {}).get("bill") or {}).get("items", []):
            rows.append([t.name, str(item.get("name")), usd(item.get("usd")),
                         str(item.get("note") or "—")])
    if rows:
        lines += ["Bill at the operating point, by item:", ""]
        lines += _table(["target", "item", "cost", "note"], rows)
        lines.append("")
    return lines


def _capacity(result: RunResult) -> list[str]:
    """Capacity under the study's demand (docs/capacity.md): fleet, cost, what-if, and the
    hourly demand beside each target's provisioned capacity."""
    view = cap.run_capacity(result)
    lines = ["## Capacity under demand", ""]
    if view is None:
        return [*lines, "Not measured: the study declares no demand profile (`demand:`, "
                "docs/capacity.md), so utilization is the declared assumption.", ""]
    lines += [_esc(cap.intro(view)), ""]
    for title, build in (("Fleet for the demand:", cap.fleet_table),
                         ("Cost per correct task under the demand:", cap.cost_table),
                         ("Fleet what-if over the horizon (failures, restarts, one spare):",
                          cap.whatif_table)):
        head, rows = build(view)
        lines += [title, "", *_table(head, [[_esc(c) for c in r] for r in rows]), ""]
    rank = cap.ranking_line(view)
    if rank:
        lines += [_esc(rank), ""]
    lines += [f"- {_esc(n)}" for n in cap.notes(view)]
    lines.append("")
    mean = view.hourly_mean_rps
    if mean and len(mean) <= 48:
        plans = [(n, c.replicas, c.capacity_rps) for n, c in view.targets.items()
                 if c is not None and c.replicas is not None and c.capacity_rps is not None
                 and len(c.replicas) == len(mean)]
        rows = [[str(h), num(rps, 1)] + [f"{num(r[h], 0)} ({num(capacity[h], 1)})"
                                         for _, r, capacity in plans]
                for h, rps in enumerate(mean)]
        lines += ["Demand vs provisioned capacity, hour by hour:", ""]
        lines += _table(["hour", "demand req/s"] + [f"{_esc(n)} replicas (req/s within SLO)"
                                                   for n, _, _ in plans], rows)
        lines.append("")
    return lines


def _portability(result: RunResult) -> list[str]:
    if not any(t.portability or t.exit for t in result.targets):
        return []
    lines = ["## Portability and exit", "",
             "Three levels: source (the same client and study ran unchanged), artifact (the "
             "weights move and give the same answers in another runtime), performance (the cost "
             "and latency contract holds, measured).", ""]
    rows = []
    for t in result.targets:
        levels = (t.portability or {}).get("levels") or {}
        cells = []
        for name in ("source", "artifact", "performance"):
            lv = levels.get(name) or {}
            cells.append(f"{lv.get('verdict', NOT_MEASURED)}: {_esc(str(lv.get('summary', '')))}"
                         if lv else NOT_MEASURED)
        ex = t.exit or {}
        readiness = ex.get("readiness") or NOT_MEASURED
        cells.append(str(readiness))
        rows.append([t.name, *cells])
    lines += _table(["target", "source", "artifact", "performance", "exit readiness"], rows)
    lines.append("")
    rows = []
    for t in result.targets:
        ledger = (t.portability or {}).get("ledger") or {}
        for e in ledger.get("entries", []):
            value = e.get("value")
            if isinstance(value, dict):
                value = ", ".join(f"{k}={_short(v)}" for k, v in value.items())
            ev = e.get("evidence") or {}
            rows.append([t.name, str(e.get("item")), _esc(_short(value)), str(e.get("unit") or ""),
                         f"{ev.get('kind', 'declared')}: {_esc(str(ev.get('detail') or ''))}"])
    if rows:
        lines += ["Migration ledger:", ""]
        lines += _table(["target", "item", "value", "unit", "evidence"], rows)
        lines.append("")
    return lines


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _demand_and_faults(result: RunResult) -> list[str]:
    """Load sweep, demand replay and interruption (docs/demand-and-faults.md); empty when the
    study asked for none of them."""
    lines: list[str] = []
    sweeps = [t for t in result.targets if t.sweep]
    if sweeps:
        lines += ["## Load sweep", "",
                  "Bisection for the highest Poisson rate meeting the SLO, after the fixed "
                  "points; the rate interpolates in the SLO ratio inside the last bracket.", ""]
        rows = []
        for t in sweeps:
            sw = t.sweep or {}
            mr = sw.get("max_rate") or {}
            lo, hi = (sw.get("bracket_rps") or [None, None])[:2]
            steps = ", ".join(f"{num(s.get('rate_rps'))} {'✓' if s.get('meets_slo') else '✗'}"
                              for s in sw.get("steps", []))
            rows.append([t.name, str(sw.get("runs")), steps or "—",
                         f"{num(lo)} – {num(hi)}", num(mr.get("rate_rps")),
                         str(mr.get("method")), str(sw.get("stopped_by"))])
        lines += _table(["target", "runs", "rates tried (req/s, meets SLO)", "bracket req/s",
                         "max rate under SLO", "method", "stopped by"], rows)
        lines.append("")
    replays = [t for t in result.targets if t.replay]
    if replays:
        r0 = replays[0].replay or {}
        lines += ["## Demand replay", "",
                  f"The {r0.get('profile')} profile compressed into {num(r0.get('compress_to_s'))}"
                  f" s ({num(r0.get('bucket_s'), 3)} s per hour, rates unchanged), sent as a "
                  "seeded non-homogeneous Poisson process. z is (sent − expected) / √expected "
                  "per hour.", ""]
        rows = []
        for t in replays:
            r = t.replay or {}
            p = (r.get("point") or {}).get("summary") or {}
            rows.append([t.name, str(r.get("sent")), num(r.get("expected_requests_replayed"), 1),
                         num(r.get("chi2"), 1) + f" (dof {r.get('chi2_dof')}, "
                         f"p {num(r.get('chi2_p'), 3)})", num(r.get("max_abs_z"), 2),
                         pct(p.get("error_rate")),
                         f"{r.get('hours_meeting_slo')}/{r.get('hours_judged')}",
                         num(r.get("schedule_lag_p99_ms"), 3)])
        lines += _table(["target", "sent", "expected", "chi-square", "max |z|", "errors",
                         "hours meeting SLO", "lag p99 ms"], rows)
        lines.append("")
        rows = []
        for h in r0.get("hours", []):
            cells = [str(h["hour"]), num(h["intended_rps"], 1)]
            for t in replays:
                th = (t.replay or {}).get("hours", [])[h["hour"]]
                cells.append(f"{num(th['achieved_rps'], 1)} ({yesno(th['meets_slo'])})")
            rows.append(cells)
        lines += _table(["hour", "profile req/s"]
                        + [f"{t.name} achieved req/s (meets SLO)" for t in replays], rows)
        lines.append("")
    faults = [t for t in result.targets if t.interruption]
    if faults:
        lines += ["## Interruption", "",
                  "Recovered: the start of the first rolling window (of send time) from which "
                  "every later window meets the SLO; failed requests count as infinitely "
                  "slow.", ""]
        rows = []
        for t in faults:
            i = t.interruption or {}
            kinds = ", ".join(f"{k}: {v}" for k, v in (i.get("failed_by_kind") or {}).items())
            rows.append([
                t.name, str(i.get("point_label")),
                f"{i.get('action')} at {num(i.get('at_s'))} s for {num(i.get('down_s'))} s",
                num(i.get("restart_s"), 2), f"{i.get('failed_after_fault')} of "
                f"{i.get('requests')} ({kinds or 'none'})", yesno(i.get("accounted")),
                num(i.get("time_to_first_success_s"), 2), num(i.get("slo_recovered_s"), 2),
                num(i.get("slo_violation_s"), 2), str(i.get("error") or "—")])
        lines += _table(["target", "point", "fault", "restart s", "failed", "all accounted",
                         "first success s", "SLO recovered s", "SLO violated s", "problem"],
                        rows)
        lines.append("")
    return lines


def _batching(result: RunResult) -> list[str]:
    from acceval.report._capacity import BATCHING_HEAD, batching_rows

    rows = batching_rows(result)
    if not rows:
        return []
    return ["## Batching: throughput gained against waiting added", "",
            "Each step up in requests in flight, against the level below it.", "",
            *_table(BATCHING_HEAD, rows), ""]
