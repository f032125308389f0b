"""The whole bill of one target at one load point, cost per correct task, and the frontier.

Pure functions over :class:`CostInputs` (built by :mod:`acceval.economics.inputs`). Every
input keeps its provenance (:class:`~acceval.economics.provenance.Sourced`); an item whose
inputs were not declared is reported as not counted (``usd=None``), never as 0.
Formulas: docs/economics.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any

from acceval.economics.compile_time import COMPILE_RULE
from acceval.economics.formulas import HOURS_PER_MONTH, J_PER_KWH, cost_of_pass
from acceval.economics.provenance import MISSING, Sourced
from acceval.results.section import Section, SourcedValue


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

    def item(self, name: str) -> BillItemResult | None:
        return next((i for i in self.items if i.name == name), None)


class FrontierEntryResult(Section):
    target: str
    load_label: str
    cost_per_attempt_usd: float | None
    success_rate: float | None
    cost_of_pass_usd: float


class FrontierResult(Section):
    entries: list[FrontierEntryResult]
    winner: str | None
    frontier_usd: float
    baseline_usd: float | None = None
    baseline_wins: bool = False



_FULL_USE = Sourced(1.0, "assumption", "default: fully used")
_HORIZON = Sourced(12.0, "assumption", "default")


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
    usd_per_chip_hour: Sourced
    duration_s: Sourced
    requests: Sourced
    correct: Sourced
    output_tokens: Sourced = MISSING
    utilization: Sourced = _FULL_USE
    compile_s: Sourced = MISSING           # the one used (rule: economics.compile_time)
    compile_s_from_log: Sourced = MISSING  # candidates kept beside it, with provenance
    compile_s_measured: Sourced = MISSING
    starts_per_month: Sourced = MISSING
    storage_usd_per_month: Sourced = MISSING
    observability_usd_per_month: Sourced = MISSING
    egress_gb_per_request: Sourced = MISSING
    egress_usd_per_gb: Sourced = MISSING
    transfer_gb_per_request: Sourced = MISSING   # cross-region (availability section)
    transfer_usd_per_gb: Sourced = MISSING
    engineering_hours: Sourced = MISSING
    engineer_usd_per_hour: Sourced = MISSING
    horizon_months: Sourced = _HORIZON
    expected_requests_per_month: Sourced = MISSING
    electricity_usd_per_kwh: Sourced = MISSING
    power_kw: Sourced = MISSING
    energy_j: Sourced = MISSING
    energy_level: str | None = None

    def sourced(self) -> dict[str, Sourced]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if isinstance(getattr(self, f.name), Sourced)}


@dataclass(frozen=True, slots=True)
class BillItem:
    name: str
    usd: float | None          # None: not counted (inputs not declared, or inside the rate)
    inputs: tuple[str, ...]    # CostInputs fields it used
    note: str = ""


@dataclass(frozen=True, slots=True)
class Bill:
    target: str
    load_label: str
    items: tuple[BillItem, ...]
    total_usd: float
    requests: int
    correct: int
    output_tokens: int | None
    success_rate: float | None
    cost_per_attempt_usd: float | None
    cost_per_correct_usd: float            # math.inf when nothing passed
    cost_per_mtok_output_usd: float | None
    inputs: dict[str, Sourced] = field(default_factory=dict)

    @property
    def not_counted(self) -> list[str]:
        return [i.name for i in self.items if i.usd is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "load_label": self.load_label,
            "items": [{"name": i.name, "usd": i.usd, "inputs": list(i.inputs), "note": i.note}
                      for i in self.items],
            "total_usd": self.total_usd, "requests": self.requests, "correct": self.correct,
            "output_tokens": self.output_tokens, "success_rate": self.success_rate,
            "cost_per_attempt_usd": self.cost_per_attempt_usd,
            "cost_per_correct_usd": self.cost_per_correct_usd,
            "cost_per_mtok_output_usd": self.cost_per_mtok_output_usd,
            "inputs": {k: v.to_dict() for k, v in self.inputs.items()},
        }


def _v(s: Sourced) -> float | None:
    return s.value


def _item(name: str, usd: float | None, inputs: tuple[str, ...], missing_note: str) -> BillItem:
    return BillItem(name, usd, inputs, "" if usd is not None else missing_note)


def bill_items(ci: CostInputs) -> tuple[BillItem, ...]:
    """Each bill item in USD for the measured window (see docs/economics.md)."""
    rate, u, dur = _v(ci.usd_per_chip_hour), _v(ci.utilization), _v(ci.duration_s)
    n = _v(ci.requests) or 0.0
    if rate is None or u is None or dur is None:
        raise ValueError(f"{ci.target}: price, utilization and duration are required")
    paid_h = dur / 3600.0 / u          # chip-time paid per replica, idle share included
    items = [BillItem("compute", rate * ci.chips * paid_h,
                      ("usd_per_chip_hour", "chips", "duration_s", "utilization"))]

    # A start is paid once and then serves many requests: spread it over the expected volume
    # rather than charging it whole to a short measurement window.
    cs, starts = _v(ci.compile_s), _v(ci.starts_per_month)
    volume = _v(ci.expected_requests_per_month)
    compile_usd = None
    if cs is not None and starts is not None and volume:
        compile_usd = cs / 3600.0 * rate * ci.chips * starts * n / volume
    items.append(BillItem("compile", compile_usd,
                          ("compile_s", "usd_per_chip_hour", "chips", "starts_per_month",
                           "expected_requests_per_month", "requests"), _compile_note(ci, volume)))
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
    return tuple(items)


def _compile_note(ci: CostInputs, volume: float | None) -> str:
    """Which compile time was used and what stands beside it (rule: economics.compile_time)."""
    used = ci.compile_s
    if used.value is None:
        return ("needs compile_s (declared, a compile log, or a local server's measured "
                "start-up) and costs.expected_requests_per_month")
    beside = [f"{name} {s.value:g} s" for name, s in (("compile log", ci.compile_s_from_log),
                                                      ("measured start-up", ci.compile_s_measured))
              if s.value is not None and s != used]
    note = f"compile_s {used.value:g} s ({used.source})"
    if beside:
        note += "; beside it: " + ", ".join(beside) + f" (rule: {COMPILE_RULE})"
    if not volume:
        note += "; needs costs.expected_requests_per_month"
    return note


def _energy_item(ci: CostInputs, paid_h: float) -> BillItem:
    keys = ("energy_j", "electricity_usd_per_kwh")
    if ci.pricing != "owned" or ci.includes_energy:
        return BillItem("energy", None, keys, "inside the hourly rate")
    price = _v(ci.electricity_usd_per_kwh)
    if price is None:
        return BillItem("energy", None, keys, "costs.electricity_usd_per_kwh not declared")
    joules = _v(ci.energy_j)
    if joules is not None:
        level = ci.energy_level or "unknown"
        return BillItem("energy", joules / J_PER_KWH * price, keys,
                        f"energy at the {level} boundary, busy time only")
    kw = _v(ci.power_kw)
    if kw is not None:
        return BillItem("energy", kw * ci.chips * paid_h * price,
                        ("power_kw", "chips", "duration_s", "utilization",
                         "electricity_usd_per_kwh"), "declared all-in power x paid time")
    return BillItem("energy", None, keys, "no energy measured and no price.power_kw")


def compute_bill(ci: CostInputs) -> Bill:
    """The bill, cost per attempt, cost per correct task and cost per million output tokens."""
    items = bill_items(ci)
    total = sum(i.usd for i in items if i.usd is not None)
    n = int(_v(ci.requests) or 0)
    ok = int(_v(ci.correct) or 0)
    toks = _v(ci.output_tokens)
    per_attempt = total / n if n else None
    rate = ok / n if n else None
    return Bill(
        target=ci.target, load_label=ci.load_label, items=items, total_usd=total,
        requests=n, correct=ok, output_tokens=None if toks is None else int(toks),
        success_rate=rate, cost_per_attempt_usd=per_attempt,
        cost_per_correct_usd=total / ok if ok else math.inf,
        cost_per_mtok_output_usd=total / (toks / 1e6) if toks else None,
        inputs=ci.sourced(),
    )


@dataclass(frozen=True, slots=True)
class FrontierEntry:
    target: str
    load_label: str
    cost_per_attempt_usd: float | None
    success_rate: float | None
    cost_of_pass_usd: float        # cost per attempt / success rate; inf when none passed


@dataclass(frozen=True, slots=True)
class Frontier:
    entries: tuple[FrontierEntry, ...]   # best load point per target, cheapest first
    winner: str | None                   # None when no target passed anything
    frontier_usd: float                  # min over targets (and the human baseline if given)
    baseline_usd: float | None = None
    baseline_wins: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def frontier(bills: list[Bill], baseline_usd: float | None = None) -> Frontier:
    """Cost-of-Pass frontier: for each target its cheapest load point, then the min over targets.

    ``baseline_usd`` is the cost of a human expert per correct task (Erol et al.); it joins
    the minimum but never names the winner.
    """
    best: dict[str, FrontierEntry] = {}
    for b in bills:
        cop = (cost_of_pass(b.cost_per_attempt_usd, b.success_rate)
               if b.cost_per_attempt_usd is not None and b.success_rate is not None else math.inf)
        e = FrontierEntry(b.target, b.load_label, b.cost_per_attempt_usd, b.success_rate, cop)
        if b.target not in best or cop < best[b.target].cost_of_pass_usd:
            best[b.target] = e
    entries = tuple(sorted(best.values(), key=lambda e: (e.cost_of_pass_usd, e.target)))
    lm = entries[0].cost_of_pass_usd if entries else math.inf
    winner = entries[0].target if entries and math.isfinite(lm) else None
    value = lm if baseline_usd is None else min(lm, baseline_usd)
    return Frontier(entries, winner, value, baseline_usd,
                    baseline_usd is not None and baseline_usd < lm)
