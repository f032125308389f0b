"""Demand replay: a study's demand profile compressed into a few minutes and replayed live
through the same runner, and the comparison, hour by compressed hour, of what was sent
against what the profile asked for.

The schedule is :func:`acceval.capacity.nhpp_schedule` (a non-homogeneous Poisson process,
exact on the profile's piecewise-constant rate), seeded under capacity's own spawn key, so
every target gets the same arrival times (common random numbers) and the replay never
shares draws with the fixed load points. Rates keep their rps values; only time is
compressed. Formulas: docs/demand-and-faults.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from acceval.capacity.profile import (
    DemandProfile,
    compress_factor,
    load_profile,
    nhpp_schedule,
    replay_seed,
)
from acceval.capacity.spec import Demand
from acceval.errors import StudyError
from acceval.loadgen.arrivals import seed_info
from acceval.loadgen.spec import PoissonRate
from acceval.metrics.spec import SLO
from acceval.results.section import PointResult, Section

if TYPE_CHECKING:  # imported where used: metrics imports the study; the runner is a run's
    from acceval.loadgen.runner import PointSpec
    from acceval.metrics.derive import Derived


class ReplayHour(Section):
    hour: int
    intended_rps: float
    expected: float
    scheduled: int
    sent: int
    achieved_rps: float | None
    ok: int
    errors: int
    z: float | None
    ttft_p95_ms: float | None
    e2e_p95_ms: float | None
    meets_slo: bool | None


class ReplayResult(Section):
    point: PointResult
    profile: str
    compress_to_s: float
    compress: float
    bucket_s: float
    expected_requests: float
    expected_requests_replayed: float
    sent: int
    ok: int
    errors: int
    chi2: float | None
    chi2_dof: int | None
    chi2_p: float | None
    max_abs_z: float | None
    within_4_sigma: bool | None
    schedule_lag_p99_ms: float | None
    hours_meeting_slo: int | None  # None: no hour could be judged against the SLO
    hours_judged: int
    hours: list[ReplayHour]



REPLAY_LABEL = "demand replay"
# A bucket whose send count is further than this many Poisson standard deviations from the
# profile's expectation is flagged: at 24 buckets a 4-sigma excursion happens by chance
# about once in 650 replays.
MAX_Z = 4.0


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """A replay ready to run: the profile, the compression and the send offsets."""

    profile: DemandProfile
    compress_to_s: float
    compress: float
    schedule_ns: npt.NDArray[np.int64]
    seed: dict[str, Any]

    @property
    def mean_rps(self) -> float:
        """The mean rate the replay offers (its requests over its duration)."""
        return self.profile.mean_rps

    def spec(self, index: int, *, label: str = REPLAY_LABEL,
             max_in_flight: int = 4096) -> PointSpec:
        """The runner's point: open loop, the whole compressed horizon, nothing stops it early
        (``min_duration_s`` = ``max_duration_s`` = the horizon, every arrival is sent)."""
        from acceval.loadgen.runner import PointSpec  # the runner: only when the replay runs

        rate = self.mean_rps
        if not rate > 0:
            raise StudyError("demand: the profile's rate is 0 in every hour; nothing to replay")
        return PointSpec(index=index, label=label, kind=PoissonRate.kind, level=rate,
                         min_duration_s=self.compress_to_s, min_requests=1,
                         max_duration_s=self.compress_to_s, max_in_flight=max_in_flight)


def replay_profile(demand: Demand, base_dir: str | Path | None = None) -> DemandProfile:
    """The rates the replay sends: the demand's, times ``replay.share``."""
    profile = load_profile(demand, base_dir)
    share = demand.replay.share if demand.replay is not None else 1.0
    return profile if share == 1.0 else profile.scaled(share)


def plan_replay(demand: Demand, study_seed: int, base_dir: str | Path | None = None
                ) -> ReplayPlan | None:
    """The replay a study's ``demand`` asks for, or None when it sets no ``replay``."""
    if demand.replay is None:
        return None
    profile = replay_profile(demand, base_dir)
    horizon = demand.replay.compress_to_s
    compress = compress_factor(profile, horizon)
    ss = replay_seed(study_seed, demand.replay.seed)
    offsets = nhpp_schedule(profile, horizon, compress, seed=ss)
    return ReplayPlan(profile, horizon, compress, offsets, seed_info(ss))


def _chi2_sf(x: float, k: int) -> float:
    """P(X >= x) for X ~ chi-square(k), Wilson-Hilferty (accurate to ~1e-3 for k >= 3)."""
    if k <= 0:
        return math.nan
    c = 2.0 / (9.0 * k)
    z = ((x / k) ** (1.0 / 3.0) - (1.0 - c)) / math.sqrt(c)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _p(values: npt.NDArray[np.float64], q: float) -> float | None:
    v = values[~np.isnan(values)]
    return float(np.percentile(v, q)) if v.size else None


def summarize_replay(table: pa.Table | Derived, point: PointResult, *, started_ns: int,
                     profile: DemandProfile, compress_to_s: float, slo: SLO) -> ReplayResult:
    """Achieved against intended, per compressed hour, from the replay point's records.

    ``started_ns`` is the point's start (relative to the run anchor, like the records). Each
    profile hour becomes a bucket of ``compress_to_s / hours`` seconds; a request belongs to
    the bucket of its send time (``sent_ns``; its scheduled time for the ``scheduled``
    count). ``z = (sent - expected) / sqrt(expected)`` per bucket; ``chi2`` sums ``z**2``
    over buckets with a positive expectation, and ``chi2_p`` is its upper tail. Each hour's
    SLO is judged on response time (from ``scheduled_ns``), as for any open-loop point; the
    hours' ``ttft_p95_ms``/``e2e_p95_ms`` are at the SLO's percentile.
    """
    from acceval.metrics.derive import Derived, derive
    from acceval.metrics.point import judged_latency

    d = table if isinstance(table, Derived) else derive(table)
    mean_rps, _ = profile.hourly()
    n_b = int(mean_rps.size)
    bucket_s = compress_to_s / n_b
    bucket_ns = bucket_s * 1e9

    def bucket(stamps: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        b = np.floor((stamps - started_ns) / bucket_ns)
        return np.where(np.isnan(b), -1, np.clip(b, -1, n_b)).astype(np.int64)

    sent_b, sched_b = bucket(d.sent_ns), bucket(d.scheduled_ns)
    rows: list[ReplayHour] = []
    chi2, dof, worst_z = 0.0, 0, 0.0
    for h in range(n_b):
        expected = float(mean_rps[h]) * bucket_s
        in_b = sent_b == h
        sent = int(in_b.sum())
        ok = in_b & d.ok
        z = (sent - expected) / math.sqrt(expected) if expected > 0 else None
        if z is not None:
            chi2 += z * z
            dof += 1
            worst_z = max(worst_z, abs(z))
        ttft95 = _p(judged_latency(d, "ttft_ms")[ok], slo.percentile)
        e2e95 = _p(judged_latency(d, "e2e_ms")[ok], slo.percentile)
        errors = int((in_b & ~d.ok).sum())
        meets = None
        if sent and (slo.ttft_ms or slo.e2e_ms):
            meets = errors / sent <= slo.max_error_rate
            for value, bound in ((ttft95, slo.ttft_ms), (e2e95, slo.e2e_ms)):
                if bound is not None:
                    meets = meets and value is not None and value <= bound
        rows.append(ReplayHour(
            hour=h, intended_rps=float(mean_rps[h]), expected=expected,
            scheduled=int((sched_b == h).sum()), sent=sent, achieved_rps=sent / bucket_s,
            ok=int(ok.sum()), errors=errors, z=z, ttft_p95_ms=ttft95, e2e_p95_ms=e2e95,
            meets_slo=meets))
    lag = d.schedule_lag_ms[~np.isnan(d.schedule_lag_ms)]
    hours_judged = [r.meets_slo for r in rows if r.meets_slo is not None]
    return ReplayResult(
        point=point, profile=profile.name, compress_to_s=compress_to_s,
        compress=profile.horizon_s / compress_to_s, bucket_s=bucket_s,
        expected_requests=profile.expected_requests(),
        expected_requests_replayed=float(mean_rps.sum() * bucket_s),
        sent=int((sent_b >= 0).sum()), ok=int(d.ok.sum()), errors=int((~d.ok).sum()),
        chi2=chi2 if dof else None, chi2_dof=dof, chi2_p=_chi2_sf(chi2, dof) if dof else None,
        max_abs_z=worst_z if dof else None,
        within_4_sigma=(worst_z <= MAX_Z) if dof else None,
        schedule_lag_p99_ms=float(np.percentile(lag, 99)) if lag.size else None,
        hours_meeting_slo=sum(1 for m in hours_judged if m) if hours_judged else None,
        hours_judged=len(hours_judged), hours=rows)


__all__ = ["MAX_Z", "REPLAY_LABEL", "ReplayPlan", "plan_replay", "replay_profile",
           "summarize_replay"]
