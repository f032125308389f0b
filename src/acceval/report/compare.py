"""Side-by-side comparison of runs: per target and load point, each run against the first.

A difference is called *beyond noise* only by a stated rule (docs/report.md, "Comparing runs"):

- accuracy: the two 95 % Wilson intervals do not overlap (conservative);
- TTFT / TPOT p95: a percentile bootstrap of the difference of p95s (resampling each run's
  requests, ``n_boot`` draws, seeded) whose 95 % interval excludes 0; without records, unknown;
- cost per correct task: the two intervals (from the accuracy interval) do not overlap;
- throughput: one run per side gives no run-to-run spread, so no call is made;
- with repeats on both sides (``load[].repeats``): p50/p95/p99 TTFT and throughput are
  compared by their t-intervals over the repeats: overlapping intervals are "no clear
  difference", disjoint ones beyond noise.

A load point that either run's load generator flagged degraded (not trusted) is not compared:
it gets one row saying so, with the reason.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acceval.economics.apply import PointCost
from acceval.metrics import derive
from acceval.metrics.repeats import RepeatInterval
from acceval.report._fmt import NOT_MEASURED
from acceval.results.section import PointResult, RepeatsResult
from acceval.run_result import RunResult, TargetResult
from acceval.units import ONE, MoneyScale, money, money_per, number, pick_scale

N_BOOT = 1000
_CHUNK = 100
COST_METRIC = "cost_per_correct_usd"
UNTRUSTED = "not trusted"


@dataclass(frozen=True, slots=True)
class Row:
    target: str
    load: str
    metric: str
    base_run: str
    other_run: str
    base: float | None
    other: float | None
    delta: float | None
    beyond_noise: bool | None  # None: no rule applies or data is missing
    rule: str


def bootstrap_p95_diff(a: np.ndarray, b: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0,
                       q: float = 95.0) -> tuple[float, float] | None:
    """95 % percentile-bootstrap interval of p``q``(b) - p``q``(a); None when a side is empty."""
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return None
    rng = np.random.default_rng(seed)
    diffs = []
    for start in range(0, n_boot, _CHUNK):
        k = min(_CHUNK, n_boot - start)
        pa_ = np.percentile(a[rng.integers(0, a.size, (k, a.size))], q, axis=1)
        pb_ = np.percentile(b[rng.integers(0, b.size, (k, b.size))], q, axis=1)
        diffs.append(pb_ - pa_)
    d = np.concatenate(diffs)
    return float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))


def _values(records: pa.Table | None, target: str, label: str, metric: str) -> np.ndarray | None:
    if records is None or records.num_rows == 0:
        return None
    sel = records.filter(pc.and_(pc.equal(records["target"], target),
                                 pc.equal(records["load_label"], label)))
    if sel.num_rows == 0:
        return None
    d = derive(sel)
    return np.asarray(getattr(d, metric)[d.measured & d.ok], dtype=np.float64)


Interval = tuple[float | None, float | None]


def _overlap(a: Interval | None, b: Interval | None) -> bool | None:
    if a is None or b is None:
        return None
    a0, a1, b0, b1 = *a, *b
    if a0 is None or a1 is None or b0 is None or b1 is None:
        return None
    return a0 <= b1 and b0 <= a1


def _cost(t: TargetResult, label: str) -> PointCost | None:
    return t.economics.point(label) if t.economics is not None else None


def _untrusted(run: RunResult, p: PointResult) -> str | None:
    if p.trusted:
        return None
    why = "; ".join(p.summary.degraded_reasons) or "the load generator fell behind"
    return f"run {run.run_id}: not trusted ({why})"


def _delta(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return b - a


def _compare_point(base: RunResult, other: RunResult, target: str, pa_: PointResult,
                   pb: PointResult, rec_a: pa.Table | None, rec_b: pa.Table | None,
                   n_boot: int, seed: int) -> list[Row]:
    rows: list[Row] = []
    sa, sb = pa_.summary, pb.summary

    def add(metric: str, a: float | None, b: float | None, beyond: bool | None,
            rule: str) -> None:
        rows.append(Row(target, pa_.label, metric, base.run_id, other.run_id, a, b,
                        _delta(a, b), beyond, rule))

    untrusted = [w for w in (_untrusted(base, pa_), _untrusted(other, pb)) if w]
    if untrusted:
        add(UNTRUSTED, None, None, None, "not compared: " + "; ".join(untrusted))
        return rows

    for metric in ("ttft_ms", "tpot_ms"):
        a, b = getattr(sa, metric).p95, getattr(sb, metric).p95
        va, vb = _values(rec_a, target, pa_.label, metric), _values(rec_b, target, pb.label,
                                                                       metric)
        ci = (bootstrap_p95_diff(va, vb, n_boot=n_boot, seed=seed)
              if va is not None and vb is not None else None)
        beyond = None if ci is None else not (ci[0] <= 0 <= ci[1])
        if ci:
            rule = ("bootstrap 95% CI of the p95 difference: "
                    f"[{number(ci[0])}, {number(ci[1])}] ms")
        elif a is None or b is None:   # one-token answers have no TPOT, for instance
            rule = (f"not measured in {'either run' if a is None and b is None else 'one run'}"
                    ": not compared")
        else:
            rule = "no records: unknown"
        add(f"{metric[:4]}_p95_ms", a, b, beyond, rule)
    ra = base.target(target).repeats_of(pa_.label)
    rb = other.target(target).repeats_of(pb.label)
    if ra is not None and rb is not None:
        rows += _compare_repeats(base, other, target, pa_.label, ra, rb)
    else:
        add("throughput_rps", sa.request_throughput_rps, sb.request_throughput_rps, None,
            "one run per side: no spread to test against")
    acc_a, acc_b = sa.accuracy, sb.accuracy
    ia = (acc_a.ci_low, acc_a.ci_high) if acc_a else None
    ib = (acc_b.ci_low, acc_b.ci_high) if acc_b else None
    ov = _overlap(ia, ib)
    add("accuracy", acc_a.accuracy if acc_a else None, acc_b.accuracy if acc_b else None,
        None if ov is None else not ov,
        "beyond noise = Wilson 95% intervals do not overlap" if ov is not None
        else "no correctness information")
    ca, cb = _cost(base.target(target), pa_.label), _cost(other.target(target), pb.label)
    if ca is not None or cb is not None:
        ov = _overlap(ca.cost_per_correct_ci_usd if ca else None,
                      cb.cost_per_correct_ci_usd if cb else None)
        add(COST_METRIC, ca.bill.cost_per_correct_usd if ca else None,
            cb.bill.cost_per_correct_usd if cb else None, None if ov is None else not ov,
            "beyond noise = cost intervals (from the accuracy interval) do not overlap")
    return rows


_REPEATED = (("ttft_p50_ms", "ttft_p50_ms"), ("ttft_p95_ms", "ttft_p95_ms"),
             ("ttft_p99_ms", "ttft_p99_ms"), ("throughput_rps", "request_throughput_rps"))


def _interval_text(i: RepeatInterval) -> str:
    if i.low is None or i.high is None:
        return f"n={i.n}, no interval"
    return f"[{number(i.low)}, {number(i.high)}] (n={i.n})"


def _compare_repeats(base: RunResult, other: RunResult, target: str, label: str,
                     ra: RepeatsResult, rb: RepeatsResult) -> list[Row]:
    """Rows judged by the t-intervals over each side's repeats."""
    rows = []
    for metric, field in _REPEATED:
        ia, ib = getattr(ra, field), getattr(rb, field)
        ov = ia.overlaps(ib)
        if ov is None:
            rule = "repeats: fewer than two values on a side, no interval"
        else:
            verdict = "no clear difference" if ov else "beyond noise"
            rule = (f"repeats, {ia.confidence:.0%} t-intervals {_interval_text(ia)} vs "
                    f"{_interval_text(ib)}: {'overlap' if ov else 'disjoint'}, {verdict}")
        rows.append(Row(target, label, f"{metric} (mean of repeats)", base.run_id,
                        other.run_id, ia.mean, ib.mean, _delta(ia.mean, ib.mean),
                        None if ov is None else not ov, rule))
    return rows


def compare_runs(runs: list[RunResult], records: list[pa.Table | None], *,
                 n_boot: int = N_BOOT, seed: int = 0) -> list[Row]:
    """Every run after the first against the first, per target and load label both have."""
    base, rec_base = runs[0], records[0]
    out: list[Row] = []
    for other, rec_other in zip(runs[1:], records[1:], strict=True):
        names = [t.name for t in other.targets]
        for t in base.targets:
            if t.name not in names:
                continue
            by_label = {p.label: p for p in other.target(t.name).points}
            for p in t.points:
                if p.label in by_label:
                    out += _compare_point(base, other, t.name, p, by_label[p.label],
                                          rec_base, rec_other, n_boot, seed)
    return out


def _fmt(v: float | None) -> str:
    return NOT_MEASURED if v is None else f"{number(v)}"


def _signed_money(v: float | None, scale: MoneyScale) -> str:
    if v is None:
        return NOT_MEASURED
    sign = "+" if v > 0 else "−" if v < 0 else ""
    return sign + money(abs(v) * scale.factor)


def _cells(r: Row) -> list[str]:
    """Base, other and delta as text; money in one unit per row, never in scientific form."""
    if r.metric == UNTRUSTED:
        return ["—", "—", "—"]
    if r.metric != COST_METRIC:
        return [_fmt(r.base), _fmt(r.other), _fmt(r.delta)]
    known = [v for v in (r.base, r.other) if v is not None and 0 < v < math.inf]
    scale = pick_scale([min(known)]) if known else ONE
    unit = f" per {scale.label} correct tasks" if scale.label else " per correct task"
    return [money_per(r.base, "correct task", scale=scale),
            money_per(r.other, "correct task", scale=scale),
            NOT_MEASURED if r.delta is None else _signed_money(r.delta, scale) + unit]


def render_compare(rows: list[Row], fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=2)
    head = ["target", "load", "metric", "base run", "other run", "base", "other", "delta",
            "beyond noise", "rule"]
    body = [[r.target, r.load, r.metric, r.base_run, r.other_run, *_cells(r),
             {True: "YES", False: "no", None: "—"}[r.beyond_noise], r.rule]
            for r in rows]
    if fmt == "md":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in body]
    return "\n".join(lines)


__all__ = ["Row", "bootstrap_p95_diff", "compare_runs", "render_compare"]
