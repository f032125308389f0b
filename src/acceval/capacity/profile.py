"""Demand profiles: request rates (rps) hour by hour over a day or a week, with declared
bursts and growth, and the non-homogeneous Poisson arrivals that replay them.

A profile's rate is piecewise constant: one base rate per hour of its period (24 h or 168 h,
wrapping), multiplied by every burst active at that instant. Piecewise-constant intensity
makes arrival generation exact without thinning: on each constant segment the count is
Poisson(rate x length) and the times are independent uniforms (the conditional-uniformity
property of the Poisson process). Formulas and the built-in shapes: docs/capacity.md.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from acceval.capacity.spec import Demand
from acceval.errors import StudyError
from acceval.input_files import read_text

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

HOUR_S = 3600.0
DAY_S = 86_400.0
_NS = 1_000_000_000

# Spawn keys: capacity's random dimensions live under their own first slot, so they never
# share draws with the load generator's (``loadgen.arrivals`` uses (0, point_index)).
CAPACITY_SEED_SLOT = 100
REPLAY = 0

# Illustrative shapes (assumptions, not measurements), peak hour = 1. Index = hour of day.
BUILTIN_SHAPES: dict[str, tuple[float, ...]] = {
    # Office traffic: quiet nights, a morning ramp, a lunch dip, a second peak mid-afternoon.
    "business-hours": (0.08, 0.06, 0.05, 0.05, 0.06, 0.10, 0.20, 0.45, 0.75, 0.95, 1.00, 0.95,
                       0.85, 0.92, 1.00, 0.97, 0.90, 0.70, 0.45, 0.30, 0.22, 0.16, 0.12, 0.10),
    # Consumer app: trough before dawn, a steady day, a peak at 20-21 h.
    "evening-peak": (0.45, 0.30, 0.20, 0.15, 0.12, 0.12, 0.18, 0.30, 0.40, 0.45, 0.50, 0.55,
                     0.60, 0.58, 0.55, 0.55, 0.60, 0.70, 0.80, 0.92, 1.00, 0.98, 0.85, 0.65),
    # Batch jobs scheduled at night, light interactive use by day.
    "overnight-batch": (1.00, 1.00, 1.00, 1.00, 1.00, 0.90, 0.50, 0.20, 0.15, 0.15, 0.15, 0.15,
                        0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.20, 0.40, 0.70, 0.90, 1.00),
    "flat": (1.0,) * 24,
}


@dataclass(frozen=True, slots=True)
class BurstWindow:
    """A multiplier on the rate over [start_s, start_s + duration_s), repeated every
    ``period_s`` seconds when given (a daily burst), else once."""

    start_s: float
    duration_s: float
    multiplier: float
    period_s: float | None = DAY_S

    def active(self, t_s: FloatArray) -> npt.NDArray[np.bool_]:
        x = np.mod(t_s, self.period_s) if self.period_s else t_s
        # A daily burst may run past midnight: test the wrapped copy too.
        hit = (x >= self.start_s) & (x < self.start_s + self.duration_s)
        if self.period_s:
            hit |= x + self.period_s < self.start_s + self.duration_s
        return hit

    def edges(self, horizon_s: float) -> FloatArray:
        if not self.period_s:
            e = np.array([self.start_s, self.start_s + self.duration_s])
        else:
            k = np.arange(-1, math.ceil(horizon_s / self.period_s) + 1, dtype=np.float64)
            starts = self.start_s + k * self.period_s
            e = np.concatenate([starts, starts + self.duration_s])
        return e[(e > 0) & (e < horizon_s)]


@dataclass(frozen=True, slots=True)
class DemandProfile:
    """Hourly base rates (rps) over a period of 24 or 168 hours, and bursts on top.

    ``hourly_rps`` already includes the growth factor; ``days`` is the planning horizon.
    """

    hourly_rps: tuple[float, ...]
    bursts: tuple[BurstWindow, ...] = ()
    days: int = 1
    name: str = "profile"

    def __post_init__(self) -> None:
        if len(self.hourly_rps) not in (24, 168):
            raise ValueError(f"a profile has 24 (day) or 168 (week) hourly rates, "
                             f"got {len(self.hourly_rps)}")
        if any(not math.isfinite(r) or r < 0 for r in self.hourly_rps):
            raise ValueError("hourly rates must be finite and >= 0")

    @property
    def period_s(self) -> float:
        return len(self.hourly_rps) * HOUR_S

    @property
    def horizon_s(self) -> float:
        return self.days * DAY_S

    def rate_at(self, t_s: npt.ArrayLike) -> FloatArray:
        """The rate in rps at profile time ``t_s`` (seconds, any shape; the period wraps)."""
        t = np.asarray(t_s, dtype=np.float64)
        base = np.asarray(self.hourly_rps, dtype=np.float64)
        hour = np.floor(np.mod(t, self.period_s) / HOUR_S).astype(np.int64)
        rate = base[np.minimum(hour, base.size - 1)]
        for b in self.bursts:
            rate = np.where(b.active(t), rate * b.multiplier, rate)
        return np.asarray(rate, dtype=np.float64)

    def segments(self, horizon_s: float | None = None) -> tuple[FloatArray, FloatArray]:
        """(edges_s, rates): the piecewise-constant rate over [0, horizon). ``edges_s`` has one
        more element than ``rates``; the rate on [edges[i], edges[i+1]) is ``rates[i]``."""
        h = self.horizon_s if horizon_s is None else float(horizon_s)
        if not h > 0:
            raise ValueError(f"horizon_s must be positive, got {h}")
        hours = np.arange(0.0, h, HOUR_S)
        parts = [hours, np.array([h])] + [b.edges(h) for b in self.bursts]
        edges = np.unique(np.concatenate(parts))
        mids = (edges[:-1] + edges[1:]) / 2
        return edges, self.rate_at(mids)

    def hourly(self, horizon_s: float | None = None) -> tuple[FloatArray, FloatArray]:
        """(mean_rps, max_rps) of each hour of the horizon: the mean is what the hour serves,
        the max is what a burst inside the hour forces the fleet to carry."""
        edges, rates = self.segments(horizon_s)
        n_h = math.ceil(edges[-1] / HOUR_S)
        hour = np.floor(edges[:-1] / HOUR_S).astype(np.int64)
        width = np.diff(edges)
        span = np.minimum(np.arange(1, n_h + 1) * HOUR_S, edges[-1]) - np.arange(n_h) * HOUR_S
        mean = np.bincount(hour, weights=rates * width, minlength=n_h) / span
        peak = np.full(n_h, -np.inf)
        np.maximum.at(peak, hour, rates)
        return mean, peak

    def expected_requests(self, horizon_s: float | None = None) -> float:
        """The integral of the rate over the horizon: requests the demand sends on average."""
        edges, rates = self.segments(horizon_s)
        return float((np.diff(edges) * rates).sum())

    @property
    def peak_rps(self) -> float:
        _, peak = self.hourly()
        return float(peak.max())

    @property
    def mean_rps(self) -> float:
        return self.expected_requests() / self.horizon_s

    def scaled(self, factor: float) -> DemandProfile:
        """The same shape at ``factor`` times the rate (e.g. one replica's share)."""
        if not factor > 0:
            raise ValueError("factor must be positive")
        return DemandProfile(tuple(r * factor for r in self.hourly_rps), self.bursts, self.days,
                             self.name)


def nhpp_schedule(profile: DemandProfile, horizon_s: float, compress: float = 1.0,
                  seed: int | np.random.SeedSequence | np.random.Generator = 0) -> IntArray:
    """Send offsets (int64 ns from the replay's start, sorted, all below ``horizon_s``) of a
    non-homogeneous Poisson process with intensity ``profile.rate_at(compress * tau)`` at
    replay time ``tau``.

    ``compress`` is profile seconds per replay second (``period_s / compress_to_s``): rates
    keep their rps values and only time is compressed, so a day compressed 144x into 600 s
    walks through every hour's rate in 4.2 s each and sends 144x fewer requests.
    """
    if not compress > 0 or not math.isfinite(compress):
        raise ValueError(f"compress must be a positive finite number, got {compress}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    edges, rates = profile.segments(horizon_s * compress)
    edges = edges / compress
    width = np.diff(edges)
    counts = rng.poisson(rates * width)
    total = int(counts.sum())
    start = np.repeat(edges[:-1], counts)
    t = start + rng.random(total) * np.repeat(width, counts)
    out = np.floor(t * _NS).astype(np.int64)
    out.sort()
    return out[out < int(horizon_s * _NS)]


def replay_seed(study_seed: int, replay_seed: int | None = None) -> np.random.SeedSequence:
    """The seed sequence of a demand replay: ``demand.replay.seed`` when given, else the
    study seed, under capacity's own spawn key. Pass it to :func:`nhpp_schedule`."""
    base = study_seed if replay_seed is None else replay_seed
    return np.random.SeedSequence(base, spawn_key=(CAPACITY_SEED_SLOT, REPLAY))


def compress_factor(profile: DemandProfile, compress_to_s: float) -> float:
    """Profile seconds per replay second when the whole horizon is replayed in
    ``compress_to_s`` seconds."""
    if not compress_to_s > 0:
        raise ValueError("compress_to_s must be positive")
    return profile.horizon_s / compress_to_s


# --- building profiles ------------------------------------------------------------------------

def _normalised(weights: Sequence[float], peak_rps: float) -> tuple[float, ...]:
    top = max(weights)
    if not top > 0:
        raise ValueError("every weight is 0: the profile has no busiest hour")
    return tuple(float(w) / top * peak_rps for w in weights)


def builtin_profile(name: str, peak_rps: float, *, days: int = 1) -> DemandProfile:
    """A built-in daily shape scaled so that its busiest hour has ``peak_rps``."""
    shape = BUILTIN_SHAPES.get(name)
    if shape is None:
        raise StudyError(f"demand.profile: no built-in profile '{name}'; choose one of "
                         f"{', '.join(sorted(BUILTIN_SHAPES))} or use csv:PATH")
    return DemandProfile(_normalised(shape, peak_rps), days=days, name=f"builtin:{name}")


def _csv_error(source: str, line: int, column: int, name: str, msg: str) -> StudyError:
    return StudyError(f"{source}: line {line}, column {column} ({name}): {msg}")


def _number(source: str, line: int, column: int, name: str, raw: str) -> float:
    try:
        v = float(raw)
    except ValueError:
        raise _csv_error(source, line, column, name, f"'{raw}' is not a number") from None
    if not math.isfinite(v) or v < 0:
        raise _csv_error(source, line, column, name, f"{raw} must be a finite number >= 0")
    return v


def parse_profile_csv(text: str, *, source: str = "demand.csv",
                      peak_rps: float | None = None, days: int = 1) -> DemandProfile:
    """A profile from CSV text with a header ``hour,rps`` or ``hour,weight``.

    Hours run 0..23 (a day) or 0..167 (a week), each exactly once, in any order. Weights are
    scaled so that the busiest hour has ``peak_rps`` (required); rps values are taken as they
    are unless ``peak_rps`` is given, which rescales them to that peak. Errors name the line
    and column.
    """
    rows = list(csv.reader(io.StringIO(text)))
    numbered = [(i + 1, r) for i, r in enumerate(rows) if any(c.strip() for c in r)]
    if not numbered:
        raise StudyError(f"{source}: empty; expected a header 'hour,rps' or 'hour,weight'")
    head_line, header = numbered[0]
    cols = [c.strip().lower() for c in header]
    if len(cols) != 2 or cols[0] != "hour" or cols[1] not in ("rps", "weight"):
        raise StudyError(f"{source}: line {head_line}: header is '{','.join(header)}'; "
                         "expected 'hour,rps' or 'hour,weight'")
    kind = cols[1]
    if kind == "weight" and peak_rps is None:
        raise StudyError(f"{source}: a weight profile needs demand.peak_rps")
    values: dict[int, float] = {}
    for line, row in numbered[1:]:
        if len(row) != 2:
            raise _csv_error(source, line, min(len(row), 2) + 1, "row",
                             f"expected 2 columns (hour,{kind}), got {len(row)}")
        raw_h = row[0].strip()
        try:
            hour = int(raw_h)
        except ValueError:
            raise _csv_error(source, line, 1, "hour", f"'{raw_h}' is not a whole hour") from None
        if not 0 <= hour < 168:
            raise _csv_error(source, line, 1, "hour", f"{hour} is outside 0..167")
        if hour in values:
            raise _csv_error(source, line, 1, "hour", f"hour {hour} appears twice")
        values[hour] = _number(source, line, 2, kind, row[1].strip())
    n = 24 if len(values) <= 24 and max(values, default=0) < 24 else 168
    missing = sorted(set(range(n)) - set(values))
    if missing:
        shown = ", ".join(str(h) for h in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise StudyError(f"{source}: hours must cover 0..{n - 1} once each "
                         f"(24 rows: a day; 168: a week); missing {shown}")
    ordered = [values[h] for h in range(n)]
    try:
        if kind == "weight" or peak_rps is not None:
            assert peak_rps is not None
            ordered = list(_normalised(ordered, peak_rps))
    except ValueError as exc:
        raise StudyError(f"{source}: {exc}") from None
    return DemandProfile(tuple(ordered), days=days, name=f"csv:{source}")


def load_profile(demand: Demand, base_dir: str | Path | None = None) -> DemandProfile:
    """The profile a study's ``demand`` section describes, with growth and bursts applied.
    ``csv:PATH`` is resolved against ``base_dir`` (the study file's folder) when relative."""
    kind, ref = demand.profile.split(":", 1)
    if kind == "builtin":
        assert demand.peak_rps is not None  # validated by Demand
        base = builtin_profile(ref, demand.peak_rps, days=demand.days)
    else:
        path = Path(ref)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        text = read_text(path, where="demand.profile", what="demand profile")
        base = parse_profile_csv(text, source=str(path), peak_rps=demand.peak_rps,
                                 days=demand.days)
    bursts = tuple(BurstWindow(b.at_hour * HOUR_S, b.duration_h * HOUR_S, b.multiplier,
                               DAY_S if b.every_day else None) for b in demand.bursts)
    return DemandProfile(tuple(r * demand.growth for r in base.hourly_rps), bursts,
                         demand.days, base.name)
