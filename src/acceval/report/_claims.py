"""The claim ledger and the roofline plan, as rows of text for the HTML and Markdown reports
(and lines for the console). Reads ``RunResult.claims`` and ``TargetResult.plan`` and computes
nothing; every planned number is labelled planned, every measured one measured."""

from __future__ import annotations

from acceval.claims.against import ClaimsResult
from acceval.claims.plan import PlanContextResult, PlanResult
from acceval.report._fmt import NOT_MEASURED, num, pct
from acceval.run_result import RunResult
from acceval.units import money_per, number

Table = tuple[list[str], list[list[str]]]

CLAIMS_INTRO = ("Vendor claims as published, each with its source and the axes it was "
                "measured on. An 'up to' value is the best point the vendor observed, not the "
                "distribution of workloads; an axis the source does not state is flagged. "
                "A claim is compared with this run only where the run has the axes it names.")
PLAN_INTRO = ("Planned upper bounds from the hardware figures and the model's shape "
              "(roofline: compute, memory and communication overlap perfectly), not "
              "measurements. They say which models fit and how much data can move; they do "
              "not predict tokens per second. Formulas: docs/planning.md.")
_NAMES = {"peak_flops": "peak FLOP/s", "memory": "memory (bytes)",
          "memory_bandwidth": "memory bandwidth (bytes/s)",
          "link_bandwidth": "chip-to-chip bandwidth (bytes/s)",
          "chips_per_node": "chips per node", "chips_per_domain": "chips per scale-up domain",
          "usd_per_chip_hour": "price per chip-hour (USD)"}


def has_claims(result: RunResult) -> bool:
    return result.claims is not None


def has_plan(result: RunResult) -> bool:
    return any(t.plan is not None for t in result.targets)


def ledger_table(claims: ClaimsResult) -> Table:
    rows = []
    for c in claims.claims:
        text = (f"{c.value_text} {c.metric} against {c.comparator}" if c.comparator
                else f"{c.value_text} ({c.metric})")
        rows.append([
            c.id, text, c.subject,
            f"{c.document}; {c.date or 'undated'}; {c.location or 'document'}",
            f"{c.measured_by}; {c.origin}",
            ", ".join(c.missing_axes) if c.missing_axes else (
                "none (a capacity figure)" if c.scope == "hardware" else "none"),
            ("conflicts with " + ", ".join(c.conflicts_with)) if c.conflicts_with else "—",
        ])
    return (["id", "claim", "subject", "source (document; date; where)", "measured by; from",
             "axes not stated", "conflict"], rows)


def quotes(claims: ClaimsResult) -> list[str]:
    return [f"{c.id}: \"{c.quote}\"" + (f" — {c.note}" if c.note else "")
            for c in claims.claims]


def conflict_lines(claims: ClaimsResult) -> list[str]:
    return [c.sentence for c in claims.conflicts]


def check_lines(claims: ClaimsResult) -> list[str]:
    out = []
    for c in claims.checks:
        extra = [f"not checked: {u}" for u in c.unchecked]
        out.append(" ".join([c.sentence + ("." if not c.sentence.endswith(".") else ""),
                             *(e + "." for e in extra)]))
    return out


def check_points_table(claims: ClaimsResult) -> Table | None:
    rows = [[c.claim, p.label, num(p.subject_value, 1), num(p.comparator_value, 1),
             f"{p.ratio:.2f}×", c.claimed]
            for c in claims.checks for p in c.points]
    if not rows:
        return None
    return (["claim", "load point", "subject (measured)", "comparator (measured)",
             "measured ratio", "claimed"], rows)


def inputs_table(plan: PlanResult) -> Table:
    rows = [[_NAMES.get(k, k), _figure(k, v.value), v.origin, v.source or "—", v.date or "—"]
            for k, v in plan.inputs.items()]
    return ["figure", "value", "origin", "source", "date"], rows


_HUMAN = {"peak_flops": ("FLOP/s", "peak"), "memory_bandwidth": ("B/s", "memory bandwidth"),
          "memory": ("B", "memory"), "link_bandwidth": ("B/s", "chip-to-chip")}


def _figure(key: str, v: float | None) -> str:
    """A chip figure with an SI prefix where it has a unit (``989 TFLOP/s``)."""
    if v is None:
        return NOT_MEASURED
    unit = _HUMAN.get(key)
    return _si(v, unit[0]) if unit is not None else number(v)


def _si(v: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= factor:
            return f"{number(v / factor)} {prefix}{unit}"
    return f"{number(v)} {unit}"


def figures_line(plan: PlanResult) -> str:
    """The chip's figures the plan used, in one line with their origin."""
    parts = [f"{label} {_si(sv.value, unit)} ({sv.origin})"
             for key, (unit, label) in _HUMAN.items()
             if (sv := plan.inputs.get(key)) is not None and sv.value is not None]
    return "Figures: " + ("; ".join(parts) if parts else "none") + "."


def _fits(c: PlanContextResult) -> str:
    need = c.weights_gb + c.kv_gb_per_sequence + c.activations_gb
    return ("yes" if c.fits else "NO") + f" ({number(need)} of {number(c.usable_gb)} GB)"


def calibration_text(c: PlanContextResult) -> str:
    """"published systems reach X–Y % of this bound", and the planned range it gives."""
    cal = c.calibration
    if cal is None:
        return "—"
    if cal.low is None or cal.high is None:
        return cal.note
    span = (f"{pct(cal.low, 0)}" if round(cal.low * 100) == round(cal.high * 100)
            else f"{pct(cal.low, 0)}–{pct(cal.high, 0)}")
    planned = (f"; planned range {num(cal.planned_low_tps_chip, 0)}–"
               f"{num(cal.planned_high_tps_chip, 0)} tok/s per chip (planned)"
               if cal.planned_low_tps_chip is not None else "")
    return f"published systems reach {span} of this bound ({cal.note}){planned}"


def calibration_sources(plans: list[PlanResult]) -> list[str]:
    """Each published cell a band came from, with its planned bound and its share."""
    seen: dict[str, str] = {}
    for p in plans:
        for c in p.contexts:
            for r in (c.calibration.cells if c.calibration else []):
                seen[r.id] = (
                    f"{r.model} on {r.chips} x {r.hardware} ({r.weights}), batch {r.batch}, "
                    f"{r.input_tokens}/{r.output_tokens} tokens: published "
                    f"{num(r.published_tps_chip, 0)} tok/s per chip, planned bound "
                    f"{num(r.bound_tps_chip, 0)}, {pct(r.share, 1)}; {r.software or ''}, "
                    f"{r.date or 'undated'}; {r.source}")
    return list(seen.values())


def contexts_table(plan: PlanResult) -> Table:
    rows = []
    for c in plan.contexts:
        dec = (f"{num(c.decode_tps_chip, 0)} ({c.decode_bound}-bound; intensity "
               f"{num(c.decode_intensity, 1)} vs ridge {num(c.ridge, 1)})"
               if c.decode_tps_chip is not None else "does not fit")
        pre = (f"{num(c.prefill_tps_chip, 0)} ({c.prefill_bound}-bound)"
               if c.prefill_tps_chip is not None else "—")
        cost = "—" if c.cost_per_attempt_usd is None else (
            f"{money_per(c.cost_per_attempt_usd, 'attempt')}" + (
                f", {money_per(c.cost_per_correct_usd)} (accuracy "
                f"{pct(c.accuracy)}, {c.accuracy_origin})"
                if c.cost_per_correct_usd is not None else ", no accuracy yet"))
        rows.append([f"{c.input_tokens} / {c.output_tokens}", str(c.chips), _fits(c),
                     f"{number(c.weights_gb)} GB + {number(c.kv_gb_per_sequence)} GB per sequence",
                     str(c.max_batch) if c.max_batch is not None else "—",
                     str(c.batch) if c.batch is not None else "—", dec, pre,
                     "none (one chip)" if c.chips == 1 else
                     num(c.communication_ms_per_token, 4), cost,
                     num(c.serving_tps_chip, 0) if c.serving_tps_chip else "—",
                     calibration_text(c)])
    return (["input / output tokens", "chips", "fits (weights + KV + activations)",
             "weights + KV cache", "largest batch", "batch planned",
             "planned decode tok/s per chip", "planned prefill tok/s per chip",
             "communication ms per token", "planned cost at the bound",
             "planned serving bound tok/s per chip (prefill + decode at the batch)",
             "calibration"], rows)


def scaling_table(c: PlanContextResult) -> Table:
    rows = [[str(p.chips), "yes" if p.fits else "NO", str(p.batch) if p.batch else "—",
             num(p.decode_tps_replica, 0) if p.decode_tps_replica else "—",
             num(p.decode_tps_chip, 0) if p.decode_tps_chip else "—",
             pct(p.communication_share) if p.communication_share is not None else "—",
             p.bound or "—"] for p in c.scaling]
    return (["chips per replica", "fits", "batch", "planned decode tok/s per replica",
             "planned decode tok/s per chip", "communication share of the step", "bound"],
            rows)


def measured_table(plan: PlanResult) -> Table | None:
    if not plan.measured:
        return None
    rows = [[p.label, f"{p.batch}" + (" (mean in flight)" if p.open_loop else ""),
             f"{p.input_tokens:.1f} / {p.output_tokens:.1f}", num(p.measured_tps_chip, 1),
             num(p.bound_tps_chip, 1) if p.bound_tps_chip else NOT_MEASURED,
             (pct(p.efficiency, 2) + (" (open loop: follows the offered rate)"
                                      if p.open_loop else "")
              + (f" — {p.flag}; likely cause: {p.above_bound}" if p.flag and p.above_bound
                 else f"; ABOVE the planned upper bound: likely {p.above_bound}"
                 if p.above_bound else ""))
             if p.efficiency is not None else NOT_MEASURED] for p in plan.measured]
    return (["load point", "batch", "mean input / output tokens",
             "measured output tok/s per chip", "planned bound tok/s per chip",
             "measured efficiency (measured / planned)"], rows)


def plan_heading(plan: PlanResult) -> str:
    return (f"{plan.target}: {plan.model} ({plan.parameters:,.0f} parameters) on "
            f"{plan.hardware or 'undeclared hardware'}, weights {plan.weights}, KV cache "
            f"{plan.kv_cache}, compute {plan.compute}")


def _reach(eff: list[float]) -> str:
    """The measured share of the planned bound over the closed-loop points: one figure for one
    point (or equal ends), a range for several."""
    if not eff:
        return ""
    lo, hi = pct(min(eff), 2), pct(max(eff), 2)
    share = lo if lo == hi else f"{lo}–{hi}"
    points = "1 closed-loop point" if len(eff) == 1 else f"{len(eff)} closed-loop points"
    return f"; measured efficiency {share} of the planned bound at its batch, over {points}"


def console_lines(result: RunResult) -> list[str]:
    """A few lines for the terminal: the claims checked, the conflicts, the plan's reach."""
    out = []
    if result.claims is not None:
        out += [f"claim: {line}" for line in check_lines(result.claims)]
        out += [f"claims conflict: {line}" for line in conflict_lines(result.claims)]
    for t in result.targets:
        if t.plan is None:
            continue
        eff = [p.efficiency for p in t.plan.measured
               if p.efficiency is not None and not p.open_loop]
        reach = _reach(eff)
        above = [p for p in t.plan.measured if p.above_bound]
        if above:
            reach += (f"; {len(above)} point(s) above the planned upper bound (implausible, "
                      f"not used for any comparison), likely: {above[0].above_bound}")
        c = t.plan.contexts[0] if t.plan.contexts else None
        bound = (f"planned decode bound {num(c.decode_tps_chip, 0)} tok/s per chip at batch "
                 f"{c.batch} ({c.decode_bound}-bound)" if c and c.decode_tps_chip else
                 "planned: does not fit" if c else "planned: no figures")
        out.append(f"plan {t.name}: {bound}{reach}")
    return out


def plan_lines(plans: list[PlanResult]) -> list[str]:
    """``acceval plan``: every plan as plain text (no run: nothing measured)."""
    out = ["Planned upper bounds (roofline), not measurements; formulas in docs/planning.md."]
    for p in plans:
        out += ["", plan_heading(p)]
        out += [f"  {r[0]}: {r[1]} ({r[2]}; {r[3]}{', ' + r[4] if r[4] != '—' else ''})"
                for r in inputs_table(p)[1]]
        head, rows = contexts_table(p)
        for row in rows:
            out += ["  " + "; ".join(f"{h}: {v}" for h, v in zip(head, row, strict=True))]
        for c in p.contexts:
            out.append(f"  replica size ({c.input_tokens}/{c.output_tokens}): "
                       + ", ".join(f"{s.chips}→{num(s.decode_tps_chip, 0)}"
                                   if s.decode_tps_chip else f"{s.chips}→does not fit"
                                   for s in c.scaling) + " planned tok/s per chip")
            out.append(f"  {c.scaling_note}")
        out += [f"  note: {n}" for n in p.notes]
    sources = calibration_sources(plans)
    if sources:
        out += ["", "Published measurements the calibration bands come from "
                "(acceval/data/calibration/published.yaml):"]
        out += [f"  {line}" for line in sources]
    return out
