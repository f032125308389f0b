"""Markdown rendering of a RunResult (also what snapshot tests pin)."""

from __future__ import annotations

import html

from acceval.economics.bill import BillResult
from acceval.economics.energy import EnergyResult
from acceval.report import _accelerator as am
from acceval.report import _capacity as cap
from acceval.report import _claims as cl
from acceval.report import _peers as peers
from acceval.report import _portability as port
from acceval.report import _server_latency as sl
from acceval.report import _telemetry as tm
from acceval.report._agents import agents_markdown
from acceval.report._econ import assumptions
from acceval.report._fmt import (
    NOT_MEASURED,
    client_of,
    facts_of,
    gate,
    not_assessed,
    num,
    pct,
    selfcheck_table,
    sig,
    slo_text,
    study_as_run,
    when,
)
from acceval.report._points import point_table
from acceval.report._training import training_markdown
from acceval.results.section import PointResult
from acceval.run_result import RunResult, TargetResult
from acceval.units import money_column, money_per, money_per_mtok, pick_scale, usd_interval


def _acc(t: TargetResult | PointResult) -> str:
    a = t.accuracy if isinstance(t, TargetResult) else t.summary.accuracy
    if a is None or a.accuracy is None:
        sent = (sum(q.summary.requests for q in t.points) if isinstance(t, TargetResult)
                else t.summary.requests)
        return not_assessed(a, sent) or NOT_MEASURED
    unscored = f", {a.unscored} load-only not scored" if a.unscored else ""
    return f"{pct(a.accuracy)} [{pct(a.ci_low)}–{pct(a.ci_high)}] (n={a.n}{unscored})"


def _esc(text: str) -> str:
    """User and model text is shown, never interpreted (Markdown renderers pass HTML through)."""
    return html.escape(text, quote=False)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _verdict(result: RunResult) -> list[str]:
    v = result.verdict
    lines = ["## Verdict", "", f"**{_esc(v.headline)}**", ""]
    lines += [f"- {_esc(line)}" for line in v.sentences]
    lines.append("")
    if not v.standings:
        return lines
    rows = []
    for st in v.standings:
        t = result.target(st.target)
        rows.append([st.target, str(st.rank) if st.rank else "—",
                     st.operating_point or NOT_MEASURED,
                     num(st.operating_rate_rps, 1),
                     money_per(st.cost_per_correct_usd, "correct task")
                     if st.cost_per_correct_usd is not None else NOT_MEASURED,
                     usd_interval(st.cost_per_correct_ci_usd) or NOT_MEASURED,
                     f"{_acc(t)} ({gate(t.gate.passed)})",
                     "yes" if st.qualified else "no: " + _esc("; ".join(st.reasons))])
    lines += _table(["target", "rank", "operating point", "req/s", "cost per correct task",
                     "interval", "accuracy (gate)", "qualifies"], rows)
    lines += ["", "Rules: " + " ".join(_esc(r) for r in v.rules), ""]
    return lines


def render_markdown(result: RunResult) -> str:
    lines = [f"# {result.study_name}", "",
             f"Run `{result.run_id}`, started {when(result.created_utc)}"]
    if result.interrupted:
        lines += ["", "**This run was interrupted; the numbers cover what was measured.**"]
    desc = result.description
    if desc:
        lines += ["", _esc(str(desc))]
    lines.append("")
    lines += _verdict(result)
    inference = bool(result.targets)
    if inference:
        lines += _inference(result)
    lines += _claims(result)
    lines += _plan(result)
    lines += training_markdown(result)
    lines += _portability(result)
    lines += agents_markdown(result)
    if inference:
        lines += _errors_and_selfcheck(result)
    lines += _provenance(result)
    return "\n".join(lines)


def _inference(result: RunResult) -> list[str]:
    """Every section about the inference targets (a study with none leaves them out)."""
    lines = ["## Latency and throughput per load point", "",
              f"SLO: {slo_text(result.slo)}. TTFT is service time (from "
              "the actual send); response TTFT is from the intended send (open loop), and an "
              "open-loop point's SLO is judged on it (docs/metrics.md).", ""]
    lines += _table(*point_table(result))
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
    lines += _turns(result)
    lines += _telemetry(result)
    lines += _accelerator(result)
    lines += _repeats_and_peers(result)
    return lines


def _errors_and_selfcheck(result: RunResult) -> list[str]:
    lines = ["## Errors", ""]
    rows = []
    for t in result.targets:
        for p in t.points:
            kinds = ", ".join(f"{k}: {v}" for k, v in sorted(p.summary.errors_by_kind.items()))
            rows.append([t.name, p.label, str(p.summary.errors), kinds or "—"])
    lines += _table(["target", "load", "errors", "by kind"], rows)
    lines.append("")

    lines += ["## Load-generator self-check", "",
              "Schedule lag is the actual send time minus the intended one (open loop); loop "
              "lag is how late the client's event loop ran its ticks (both loops). A point is "
              "not trusted when the client could not keep up (docs/metrics.md).", ""]
    lines += _table(*selfcheck_table(result))
    lines.append("")
    return lines


def _provenance(result: RunResult) -> list[str]:
    lines = ["## Provenance", ""]
    rows = []
    for t in result.targets:
        fp = _esc(facts_of(t.fingerprint)) or NOT_MEASURED
        local = "—"
        if t.local_server:
            ls = t.local_server
            local = (f"{ls.engine} {ls.model or ''} {ls.precision or ''} "
                     f"startup {num(ls.startup_s, 2)} s")
        rows.append([t.name, t.endpoint.base_url if t.endpoint else "",
                     t.endpoint.model if t.endpoint else "",
                     client_of(t.endpoint), fp, local])
    if rows:
        lines += _table(["target", "endpoint", "model", "client", "fingerprint",
                         "local server"], rows)
    from acceval.report import _execution as execution

    load_from = execution.intro(result)
    if load_from is not None:
        lines += ["", "Where the load came from: " + _esc(load_from), ""]
        lines += _table(execution.HEAD, [[_esc(c) for c in r] for r in execution.rows(result)])
    assumed = [[a.target or "study", a.name, a.shown, a.origin, a.source or "—",
                a.date or "—"] for a in assumptions(result)]
    if assumed:
        lines += ["", "Assumptions and their sources:", ""]
        lines += _esc_table((["target", "input", "value", "origin", "source", "date"],
                             assumed))
    lines += ["", "Software: " + ", ".join(f"{k} {v}" for k, v in sorted(result.software.items())),
              "", "Seeds: " + (facts_of(result.seeds) or "none"), ""]
    if result.warnings:
        lines += ["Warnings:", ""] + [f"- {_esc(w)}" for w in result.warnings] + [""]
    lines += ["<details><summary>Study as run</summary>", "", "```yaml",
              study_as_run(result).rstrip(), "```", "",
              "</details>", ""]
    return lines


def _energy_cell(energy: EnergyResult | None) -> str:
    if energy is None or energy.joules_per_correct is None:
        return NOT_MEASURED
    origins = sorted({c.origin for c in energy.provenance.components})
    return (f"{sig(energy.joules_per_correct)} J at {energy.level} "
            f"({', '.join(origins) or 'measured'})")


def _economics(result: RunResult) -> list[str]:
    if not any(t.economics for t in result.targets):
        return ["## Cost", "", "Not measured: no target declares a price.", ""]
    lines = ["## Cost and energy at the operating point", "",
             "The operating point is the verdict's: the trusted load point that meets the SLO "
             "at the lowest cost per correct task; the interval follows from the accuracy "
             "interval.", ""]
    rows = []
    bills: list[tuple[str, BillResult]] = []
    for t in result.targets:
        st = result.verdict.standing(t.name)
        pc = (t.economics.point(st.operating_point)
              if t.economics is not None and st is not None and st.operating_point else None)
        if pc is None:
            rows.append([t.name, NOT_MEASURED, NOT_MEASURED, NOT_MEASURED, NOT_MEASURED,
                         NOT_MEASURED, _energy_cell(t.energy), "—"])
            continue
        bill = pc.bill
        bills.append((t.name, bill))
        estimated = sorted(f"{k} ({v.origin})" for k, v in bill.inputs.items()
                           if v.value is not None and v.origin != "measured")
        rows.append([
            t.name, pc.label, money_per(bill.cost_per_correct_usd, "correct task"),
            usd_interval(pc.cost_per_correct_ci_usd) or NOT_MEASURED,
            money_per(bill.cost_per_attempt_usd, "attempt"),
            money_per_mtok(bill.cost_per_mtok_output_usd),
            _energy_cell(t.energy), ", ".join(estimated) or "—",
        ])
    lines += _table(["target", "operating point", "cost per correct task", "95% interval",
                     "cost per attempt", "cost per output tokens", "energy per correct task",
                     "inputs not measured"], rows)
    lines.append("")
    shares = [None if item.usd is None or not bill.correct else item.usd / bill.correct
              for _, bill in bills for item in bill.items]
    col = money_column(shares)
    rows = [[name, item.name, "not counted" if item.usd is None else cell, item.note or "—"]
            for (name, bill, item), cell in zip(
                [(n, b, i) for n, b in bills for i in b.items], col.cells, strict=True)]
    if rows:
        lines += ["The bill at the operating point, by item: each item's share of the cost "
                  "per correct task.", ""]
        lines += _table(["target", "item", f"share ({col.header})", "note"], rows)
        lines.append("")
    lines += _sensitivity(result)
    return lines


def _sensitivity(result: RunResult) -> list[str]:
    sens = result.economics.sensitivity if result.economics is not None else None
    if sens is None or not sens.bars:
        return []
    scale = pick_scale([b.base_usd for b in sens.bars])
    rows = [[b.target, b.input, f"{port.short(b.low_value)} – {port.short(b.high_value)}",
             scale.amount(b.low_usd), scale.amount(b.base_usd), scale.amount(b.high_usd)]
            for b in sorted(sens.bars, key=lambda b: -b.width_usd)]
    lines = [f"Sensitivity of the cost {scale.per()}, widest swing first:", ""]
    lines += _table(["target", "input", "range", "low", "base", "high"], rows)
    lines.append("")
    for f in sens.flips:
        lines.append(f"- With {f.input} ({f.scope}) at its {f.side} end ({port.short(f.value)}), "
                     f"{f.winner or 'no target'} wins instead of {f.base_winner or 'no target'}.")
    if sens.flips:
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
    if not port.has_portability(result):
        return []
    lines = ["## Portability and exit", "", port.INTRO, ""]
    lines += _esc_table(port.levels_table(result))
    lines.append("")
    head, rows = port.ledger_table(result)
    if rows:
        lines += ["Migration ledger:", "", *_esc_table((head, rows)), ""]
    for t in result.targets:
        if t.exit is None:
            continue
        ex = t.exit
        lines += [f"### Leaving {_esc(t.name)}: {ex.readiness}", ""]
        lines += [f"- {_esc(r)}" for r in ex.reasons]
        lines += ["", *(_esc(x) for x in port.exit_lines(ex)), ""]
        for table in (port.exit_cost_table(ex), port.exports_table(ex), port.service_table(ex)):
            if table is not None:
                lines += [*_esc_table(table), ""]
    return lines


def _claims(result: RunResult) -> list[str]:
    claims = result.claims
    if claims is None:
        return []
    lines = ["## Vendor claims against this run", "", cl.CLAIMS_INTRO, ""]
    checks = cl.check_lines(claims)
    if checks:
        lines += ["Claims checked against the run:", "", *(f"- {_esc(c)}" for c in checks), ""]
        table = cl.check_points_table(claims)
        if table is not None:
            lines += [*_esc_table(table), ""]
    conflicts = cl.conflict_lines(claims)
    if conflicts:
        lines += ["Sources that disagree:", "", *(f"- {_esc(c)}" for c in conflicts), ""]
    lines += [*_esc_table(cl.ledger_table(claims)), ""]
    return lines


def _plan(result: RunResult) -> list[str]:
    if not cl.has_plan(result):
        return []
    lines = ["## Plan: what each chip could do (planned)", "", cl.PLAN_INTRO, ""]
    for t in result.targets:
        plan = t.plan
        if plan is None:
            continue
        lines += [f"### {_esc(cl.plan_heading(plan))}", "", _esc(cl.figures_line(plan)), ""]
        measured = cl.measured_table(plan)
        if measured is not None:
            lines += ["Measured against planned:", "", *_esc_table(measured), ""]
        lines += [*_esc_table(cl.contexts_table(plan)), ""]
        lines += [f"- Replica size at {c.input_tokens} / {c.output_tokens} tokens: "
                  f"{_esc(c.scaling_note)}." for c in plan.contexts]
        lines += [f"- Note: {_esc(n)}" for n in plan.notes]
        lines += ["", "Figures used:", "", *_esc_table(cl.inputs_table(plan)), ""]
    return lines


def _esc_table(table: tuple[list[str], list[list[str]]]) -> list[str]:
    head, rows = table
    return _table(head, [[_esc(c) for c in r] for r in rows])


def _demand_and_faults(result: RunResult) -> list[str]:
    """Load sweep, demand replay and interruption (docs/demand-and-faults.md); empty when the
    study asked for none of them. The tables are report._demand's, shared with HTML."""
    from acceval.report import _demand

    lines: list[str] = []
    for b in _demand.blocks(result):
        heading = "###" if b.heading.endswith("hour by hour") else "##"
        lines += [f"{heading} {b.heading}", "", _esc(b.intro), ""]
        lines += _esc_table((b.head, b.rows))
        lines.append("")
    return lines


def _batching(result: RunResult) -> list[str]:
    from acceval.report._capacity import BATCHING_HEAD, BATCHING_INTRO, batching_rows

    rows = batching_rows(result)
    if not rows:
        return []
    return ["## Batching: throughput gained against waiting added", "",
            BATCHING_INTRO, "",
            *_table(BATCHING_HEAD, rows), ""]


def _repeats_and_peers(result: RunResult) -> list[str]:
    lines: list[str] = []
    reps = peers.repeats_rows(result)
    if reps:
        lines += ["## Repeats", "", _esc(peers.REPEATS_INTRO), ""]
        lines += [*_table(peers.REPEATS_HEAD, reps), ""]
    rows = peers.peer_rows(result)
    if result.log.imported is not None:
        lines += ["## Imported: peer-computed figures", "", _esc(peers.peer_intro(result)), ""]
        lines += (_table(peers.PEER_HEAD, rows) if rows else []) + [""]
    return lines
def _turns(result: RunResult) -> list[str]:
    from acceval.report import _turns as turns

    rows = turns.rows(result)
    if not rows:
        return []
    return ["## Multi-turn conversations: latency per turn", "", turns.INTRO, "",
            *_table(turns.HEAD, [[_esc(c) for c in r] for r in rows]), ""]


def _accelerator(result: RunResult) -> list[str]:
    if not am.has_any(result):
        return []
    lines = ["## Accelerators", "", _esc(am.intro()), ""]
    lines += _table(am.HEAD, am.rows(result))
    lines += ["", "Per device:", "", *_table(am.DEVICE_HEAD, am.device_rows(result))]
    lines += [""] + [f"- {_esc(n)}" for n in am.notes(result)] + [""]
    return lines


def _telemetry(result: RunResult) -> list[str]:
    if all(t.telemetry is None for t in result.targets):
        return []
    lines = ["## Server telemetry", "", _esc(tm.intro()), ""]
    lines += _table(tm.HEAD, tm.rows(result))
    lines += [""] + [f"- {_esc(n)}" for n in tm.notes(result)] + [""]
    latency = sl.rows(result)
    if latency:
        lines += ["### Server-side latency beside the client's", "", _esc(sl.INTRO), ""]
        lines += [*_table(sl.HEAD, [[_esc(c) for c in r] for r in latency]), ""]
    return lines
