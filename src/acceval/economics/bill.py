"""The whole bill of one target at one load point, cost per correct task, and the frontier.

Pure functions over :class:`CostInputs` (built by :mod:`acceval.economics.inputs`). Every
input keeps its provenance (:class:`~acceval.economics.provenance.SourcedValue`); an item whose
inputs were not declared is reported as not counted (``usd=None``), never as 0.
Formulas: docs/economics.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

from acceval.economics.compile_time import COMPILE_RULE
from acceval.economics.formulas import HOURS_PER_MONTH, J_PER_KWH, cost_of_pass
from acceval.economics.provenance import MISSING
from acceval.results.section import Section, SourcedValue
from acceval.units import number


class BillItemResult(Section):
    name: str
    usd: float | None  # None: not counted (inputs not declared, or inside the rate)
    inputs: list[str]
    note: str = ""


class BillResult(Section):
    """The whole bill of one target at one load point."""

    target: str
    load_label: str
    items: list[BillItemResult]
    total_usd: float
    requests: int
    correct: int
    output_tokens: int | None
    success_rate: float | None
    cost_per_attempt_usd: float | None
    cost_per_correct_usd: float  # inf when nothing passed
    cost_per_mtok_output_usd: float | None
    inputs: dict[str, SourcedValue]

    @property
    def not_counted(self) -> list[str]:
        return [i.name for i in self.items if i.usd is None]

    def item(self, name: str) -> BillItemResult | None:
        return next((i for i in self.items if i.name == name), None)


class FrontierEntryResult(Section):
    target: str
    load_label: str
    cost_per_attempt_usd: float | None
    success_rate: float | None
    cost_of_pass_usd: float


class FrontierResult(Section):
    """Each target's cheapest Cost-of-Pass load point, cheapest first, and the minimum over
    them (and the human baseline). It orders costs; who wins is the verdict's to say."""

    retired: ClassVar[frozenset[str]] = frozenset({"winner"})  # before 0.3: the bill ranked

    entries: list[FrontierEntryResult]
    frontier_usd: float
    baseline_usd: float | None = None
    baseline_wins: bool = False



_FULL_USE = SourcedValue(value=1.0, origin="assumption", source="default: fully used")
_HORIZON = SourcedValue(value=12.0, origin="assumption", source="default")


@dataclass(frozen=True, slots=True)
class CostInputs:
    """Everything the bill of one target at one load point depends on.

    Rates are per chip; ``chips`` is chips per replica. ``energy_j`` is the energy of the
    measured window at ``energy_level`` (see :func:`acceval.economics.energy.energy_at_boundary`).
    """

    target: str
    load_label: str
    chips: int
    pricing: str
    includes_energy: bool
    usd_per_chip_hour: SourcedValue
    duration_s: SourcedValue
    requests: SourcedValue
    correct: SourcedValue
    output_tokens: SourcedValue = MISSING
    utilization: SourcedValue = _FULL_USE
    compile_s: SourcedValue = MISSING           # the one used (rule: economics.compile_time)
    compile_s_from_log: SourcedValue = MISSING  # candidates kept beside it, with provenance
    compile_s_measured: SourcedValue = MISSING
    starts_per_month: SourcedValue = MISSING
    storage_usd_per_month: SourcedValue = MISSING
    observability_usd_per_month: SourcedValue = MISSING
    egress_gb_per_request: SourcedValue = MISSING
    egress_usd_per_gb: SourcedValue = MISSING
    transfer_gb_per_request: SourcedValue = MISSING   # cross-region (availability section)
    transfer_usd_per_gb: SourcedValue = MISSING
    engineering_hours: SourcedValue = MISSING
    engineer_usd_per_hour: SourcedValue = MISSING
    horizon_months: SourcedValue = _HORIZON
    expected_requests_per_month: SourcedValue = MISSING
    electricity_usd_per_kwh: SourcedValue = MISSING
    power_kw: SourcedValue = MISSING
    energy_j: SourcedValue = MISSING
    energy_level: str | None = None

    def sourced(self) -> dict[str, SourcedValue]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if isinstance(getattr(self, f.name), SourcedValue)}


def _v(s: SourcedValue) -> float | None:
    return s.value


def _item(name: str, usd: float | None, inputs: tuple[str, ...],
          missing_note: str) -> BillItemResult:
    return BillItemResult(name=name, usd=usd, inputs=list(inputs),
                          note="" if usd is not None else missing_note)


def bill_items(ci: CostInputs) -> list[BillItemResult]:
    """Each bill item in USD for the measured window (see docs/economics.md)."""
    rate, u, dur = _v(ci.usd_per_chip_hour), _v(ci.utilization), _v(ci.duration_s)
    n = _v(ci.requests) or 0.0
    if rate is None or u is None or dur is None:
        raise ValueError(f"{ci.target}: price, utilization and duration are required")
    paid_h = dur / 3600.0 / u          # chip-time paid per replica, idle share included
    items = [BillItemResult(name="compute", usd=rate * ci.chips * paid_h,
                      inputs=("usd_per_chip_hour", "chips", "duration_s", "utilization"))]

    # A start is paid once and then serves many requests: spread it over the expected volume
    # rather than charging it whole to a short measurement window.
    cs, starts = _v(ci.compile_s), _v(ci.starts_per_month)
    volume = _v(ci.expected_requests_per_month)
    compile_usd = None
    if cs is not None and starts is not None and volume:
        compile_usd = cs / 3600.0 * rate * ci.chips * starts * n / volume
    items.append(BillItemResult(
        name="compile", usd=compile_usd,
        inputs=["compile_s", "usd_per_chip_hour", "chips", "starts_per_month",
                "expected_requests_per_month", "requests"], note=_compile_note(ci, volume)))
    for name, key in (("storage", "storage_usd_per_month"),
                      ("observability", "observability_usd_per_month")):
        monthly = _v(getattr(ci, key))
        items.append(_item(name, None if monthly is None else monthly * paid_h / HOURS_PER_MONTH,
                           (key, "duration_s", "utilization"), f"{key} not declared"))

    gb, usd_gb = _v(ci.egress_gb_per_request), _v(ci.egress_usd_per_gb)
    items.append(_item("egress", None if gb is None or usd_gb is None else n * gb * usd_gb,
                       ("requests", "egress_gb_per_request", "egress_usd_per_gb"),
                       "egress_gb_per_request or costs.egress_usd_per_gb not declared"))
    gb, usd_gb = _v(ci.transfer_gb_per_request), _v(ci.transfer_usd_per_gb)
    items.append(_item("transfer", None if gb is None or usd_gb is None else n * gb * usd_gb,
                       ("requests", "transfer_gb_per_request", "transfer_usd_per_gb"),
                       "availability.transfer_gb_per_request or transfer_usd_per_gb not "
                       "declared"))

    hours, eng_rate = _v(ci.engineering_hours), _v(ci.engineer_usd_per_hour)
    horizon, volume = _v(ci.horizon_months), _v(ci.expected_requests_per_month)
    eng = None
    if None not in (hours, eng_rate, horizon, volume):
        assert hours is not None and eng_rate is not None
        assert horizon is not None and volume is not None
        eng = hours * eng_rate * n / (horizon * volume)
    items.append(_item("engineering", eng,
                       ("engineering_hours", "engineer_usd_per_hour", "horizon_months",
                        "expected_requests_per_month", "requests"),
                       "needs engineering_hours, costs.engineer_usd_per_hour and "
                       "costs.expected_requests_per_month"))
    items.append(_energy_item(ci, paid_h))
    return items


def _compile_note(ci: CostInputs, volume: float | None) -> str:
    """Which compile time was used and what stands beside it (rule: economics.compile_time)."""
    used = ci.compile_s
    if used.value is None:
        return ("needs compile_s (declared, a compile log, or a local server's measured "
                "start-up) and costs.expected_requests_per_month")
    beside = [f"{name} {number(s.value)} s" for name, s in (("compile log", ci.compile_s_from_log),
                                                      ("measured start-up", ci.compile_s_measured))
              if s.value is not None and s != used]
    note = f"compile_s {number(used.value)} s ({used.source})"
    if beside:
        note += "; beside it: " + ", ".join(beside) + f" (rule: {COMPILE_RULE})"
    if not volume:
        note += "; needs costs.expected_requests_per_month"
    return note


def _energy_item(ci: CostInputs, paid_h: float) -> BillItemResult:
    keys = ("energy_j", "electricity_usd_per_kwh")
    if ci.pricing != "owned" or ci.includes_energy:
        return BillItemResult(name="energy", usd=None, inputs=keys, note="inside the hourly rate")
    price = _v(ci.electricity_usd_per_kwh)
    if price is None:
        return BillItemResult(name="energy", usd=None, inputs=keys,
                              note="costs.electricity_usd_per_kwh not declared")
    joules = _v(ci.energy_j)
    if joules is not None:
        level = ci.energy_level or "unknown"
        return BillItemResult(name="energy", usd=joules / J_PER_KWH * price, inputs=keys,
                        note=f"energy at the {level} boundary, busy time only")
    kw = _v(ci.power_kw)
    if kw is not None:
        return BillItemResult(name="energy", usd=kw * ci.chips * paid_h * price,
                        inputs=("power_kw", "chips", "duration_s", "utilization",
                         "electricity_usd_per_kwh"), note="declared all-in power x paid time")
    return BillItemResult(name="energy", usd=None, inputs=keys,
                          note="no energy measured and no price.power_kw")


def compute_bill(ci: CostInputs) -> BillResult:
    """The bill, cost per attempt, cost per correct task and cost per million output tokens."""
    items = bill_items(ci)
    total = sum(i.usd for i in items if i.usd is not None)
    n = int(_v(ci.requests) or 0)
    ok = int(_v(ci.correct) or 0)
    toks = _v(ci.output_tokens)
    per_attempt = total / n if n else None
    rate = ok / n if n else None
    return BillResult(
        target=ci.target, load_label=ci.load_label, items=items, total_usd=total,
        requests=n, correct=ok, output_tokens=None if toks is None else int(toks),
        success_rate=rate, cost_per_attempt_usd=per_attempt,
        cost_per_correct_usd=total / ok if ok else math.inf,
        cost_per_mtok_output_usd=total / (toks / 1e6) if toks else None,
        inputs=ci.sourced(),
    )


def frontier(bills: list[BillResult], baseline_usd: float | None = None) -> FrontierResult:
    """Cost-of-Pass frontier: for each target its cheapest load point, then the min over targets.

    ``baseline_usd`` is the cost of a human expert per correct task (Erol et al.); it joins
    the minimum. Who wins is the verdict's rule (:func:`acceval.verdict.cheapest`).
    """
    best: dict[str, FrontierEntryResult] = {}
    for b in bills:
        cop = (cost_of_pass(b.cost_per_attempt_usd, b.success_rate)
               if b.cost_per_attempt_usd is not None and b.success_rate is not None else math.inf)
        e = FrontierEntryResult(target=b.target, load_label=b.load_label,
                                cost_per_attempt_usd=b.cost_per_attempt_usd,
                                success_rate=b.success_rate, cost_of_pass_usd=cop)
        if b.target not in best or cop < best[b.target].cost_of_pass_usd:
            best[b.target] = e
    entries = sorted(best.values(), key=lambda e: (e.cost_of_pass_usd, e.target))
    lm = entries[0].cost_of_pass_usd if entries else math.inf
    value = lm if baseline_usd is None else min(lm, baseline_usd)
    return FrontierResult(entries=entries, frontier_usd=value, baseline_usd=baseline_usd,
                          baseline_wins=baseline_usd is not None and baseline_usd < lm)
