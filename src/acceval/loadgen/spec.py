"""Study-file sections the load generator owns: the load families (``load``) and the sweep.

A load family is one arrival process swept over several levels. Each kind is a member of one
discriminated union and carries what differs between kinds: the YAML key of its levels, its
label, whether the loop is closed or open, and how an open loop's sends are scheduled
(:mod:`acceval.loadgen.arrivals`). Generic code asks the member; it never compares kinds.

The YAML form is one key per family (``concurrency``, ``constant_rps``, ``poisson_rps``,
``gamma_rps``, and the load shapes ``burst``, ``ramp_rps``, ``step_rps``, ``trace_speed``)
beside the shared fields; keys of other kinds set to null (what run folders of 0.1.0 stored)
are ignored.

A load shape is one point whose schedule is the whole shape (a burst of N sends at once, a
ramp, steps, a trace's timestamps): nothing stops it before its schedule is sent, and its
schedule lag is reported as for any open loop.
"""

from __future__ import annotations

import difflib
from itertools import pairwise
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from acceval.loadgen import arrivals

ArrivalKind = Literal["concurrency", "constant", "poisson", "gamma", "burst", "ramp", "step",
                      "trace"]
Loop = Literal["closed", "open"]
Offsets = npt.NDArray[np.int64]


#: Longest a load point, a sweep step or a warm-up may be told to last: 30 days.
MAX_DURATION_S = 30 * 86_400.0
#: Most requests one load point may plan to send (an open loop's schedule is built up front,
#: 8 bytes a send), and most in flight at once in a closed loop.
MAX_SENDS = 100_000_000
MAX_CONCURRENCY = 1_000_000

Seconds = Annotated[float, Field(le=MAX_DURATION_S)]
Requests = Annotated[int, Field(le=MAX_SENDS)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class LoadFamily(_Model):
    """A family of load points: one arrival process swept over several levels. Give exactly
    one levels key (concurrency, constant_rps, poisson_rps or gamma_rps) and any of these."""

    kind: ClassVar[ArrivalKind]
    loop: ClassVar[Loop]
    levels_key: ClassVar[str]
    whole_levels: ClassVar[bool] = False
    #: The level is a rate in req/s (else a count or a speed: the point's requested rate is
    #: its schedule's own).
    rate_levels: ClassVar[bool] = True
    #: A load shape: the point sends its whole schedule (its horizon is ``horizon_s``).
    whole_schedule: ClassVar[bool] = False
    #: Sends at the tasks' own times (a trace), not at drawn ones.
    timed_by_tasks: ClassVar[bool] = False
    #: Stored with the other kinds' keys as null (the families of acceval 0.1).
    legacy_key: ClassVar[bool] = False

    burstiness: float = Field(
        1.0, ge=0.01, le=100, description="Gamma shape (gamma_rps only): 1 is Poisson, <1 "
        "burstier, >1 smoother; 0.01..100.")
    warmup_requests: Requests = Field(0, ge=0, description="Requests sent first and excluded.")
    warmup_s: Seconds = Field(0.0, ge=0, description="Seconds at the start that are excluded.")
    min_duration_s: Seconds = Field(0.0, ge=0, description="Run at least this long ...")
    min_requests: Requests | None = Field(
        None, ge=1, description="... and at least this many requests (default: every task "
        "times attempts once).",
    )
    max_duration_s: Seconds = Field(
        120.0, gt=0, description="... or stop at this duration, whichever comes first "
        "(at most 30 days; an open loop plans at most 100,000,000 sends a point)."
    )
    max_in_flight: int = Field(
        4096, ge=1, description="Open loop: cap on outstanding requests (a safety valve)."
    )
    repeats: int = Field(
        1, ge=1, le=100, description="Measure each level this many times (each a whole "
        "point with its own seed, run after every point's first run) for confidence "
        "intervals over the repeats (docs/metrics.md, Repeats).")

    @model_validator(mode="after")
    def _check(self) -> LoadFamily:
        levels = self.levels
        if not levels or any(v <= 0 for v in levels):
            raise ValueError(f"{self.levels_key} needs one or more positive levels")
        self._check_size(max(levels))
        if self.min_duration_s > self.max_duration_s:
            raise ValueError("min_duration_s is larger than max_duration_s")
        return self

    def _check_size(self, top: float) -> None:
        """An open loop's schedule is built before the point starts: its size is bounded."""
        if top * self.max_duration_s > MAX_SENDS:
            raise ValueError(f"{self.levels_key} {top:g} for max_duration_s "
                             f"{self.max_duration_s:g} plans more than {MAX_SENDS:,} sends; "
                             "lower the rate or the duration")

    @model_serializer(mode="wrap")
    def _as_stored(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Every kind's levels key first, the other kinds' as null: the form run folders
        # have always stored, so study.yaml and result.json read the same as before.
        data = handler(self)
        if not isinstance(data, dict):
            return data
        keys = [f.levels_key for f in FAMILIES.values() if f.legacy_key]
        if self.levels_key not in keys:
            keys = [self.levels_key]
        return {**{k: data.get(k) for k in keys}, **{k: v for k, v in data.items()
                                                      if k not in keys}}

    @property
    def levels(self) -> list[float]:
        return [float(v) for v in getattr(self, self.levels_key)]

    def label(self, level: float) -> str:
        """How reports and records name the point at ``level``."""
        return f"{self.kind} {level:g} rps"

    @classmethod
    def schedule(cls, rate_rps: float, horizon_s: float, *,
                 rng: np.random.Generator | None = None, burstiness: float = 1.0) -> Offsets:
        """Send offsets (int64 ns from the point's start) before ``horizon_s``; open loop
        only (a closed loop sends when a request ends)."""
        raise ValueError(f"{cls.kind} is a closed loop: it has no send schedule")

    def offsets(self, level: float, horizon_s: float, *, rng: np.random.Generator | None,
                at_ns: list[int | None] | None = None) -> Offsets:
        """This family's send offsets at ``level``: its kind's schedule, or its shape's
        (``at_ns``: the tasks' own send times, for a trace)."""
        return self.schedule(level, horizon_s, rng=rng, burstiness=self.burstiness)

    def horizon_s(self, level: float) -> float:
        """How long a point at ``level`` may send for."""
        return self.max_duration_s


class Concurrency(LoadFamily):
    """Closed loop: this many requests in flight; each sends its next when one ends."""

    kind = "concurrency"
    loop = "closed"
    levels_key = "concurrency"
    legacy_key = True
    whole_levels = True

    concurrency: list[int] = Field(
        description="Closed loop: this many requests in flight, one point per level.")

    def label(self, level: float) -> str:
        return f"concurrency {int(level)}"

    def _check_size(self, top: float) -> None:
        if top > MAX_CONCURRENCY:
            raise ValueError(f"concurrency {top:g} is more than {MAX_CONCURRENCY:,} requests "
                             "in flight")


class ConstantRate(LoadFamily):
    """Open loop, evenly spaced sends."""

    kind = "constant"
    loop = "open"
    levels_key = "constant_rps"
    legacy_key = True

    constant_rps: list[float] = Field(description="Open loop, evenly spaced.")

    @classmethod
    def schedule(cls, rate_rps: float, horizon_s: float, *,
                 rng: np.random.Generator | None = None, burstiness: float = 1.0) -> Offsets:
        return arrivals.constant(rate_rps, horizon_s)


class PoissonRate(LoadFamily):
    """Open loop, Poisson arrivals (exponential gaps)."""

    kind = "poisson"
    loop = "open"
    levels_key = "poisson_rps"
    legacy_key = True

    poisson_rps: list[float] = Field(description="Open loop, Poisson arrivals.")

    @classmethod
    def schedule(cls, rate_rps: float, horizon_s: float, *,
                 rng: np.random.Generator | None = None, burstiness: float = 1.0) -> Offsets:
        return arrivals.renewal(arrivals.exponential_gaps(rate_rps), rate_rps, horizon_s,
                                rng=rng, kind=cls.kind)


class GammaRate(LoadFamily):
    """Open loop, gamma gaps with shape ``burstiness``."""

    kind = "gamma"
    loop = "open"
    levels_key = "gamma_rps"
    legacy_key = True

    gamma_rps: list[float] = Field(description="Open loop, gamma inter-arrivals; see "
                                   "burstiness.")

    def label(self, level: float) -> str:
        return f"gamma {level:g} rps (burstiness {self.burstiness:g})"

    @classmethod
    def schedule(cls, rate_rps: float, horizon_s: float, *,
                 rng: np.random.Generator | None = None, burstiness: float = 1.0) -> Offsets:
        return arrivals.renewal(arrivals.gamma_gaps(rate_rps, burstiness), rate_rps,
                                horizon_s, rng=rng, kind=cls.kind,
                                dispersion=1.0 / min(burstiness, 1.0))


class _Shape(LoadFamily):
    """A load shape: one point, its whole schedule sent (min_duration_s = the horizon)."""

    loop = "open"
    whole_schedule = True

    @model_validator(mode="after")
    def _no_warmup(self) -> _Shape:
        if self.warmup_requests or self.warmup_s:
            raise ValueError(f"{self.levels_key} is a load shape, sent whole: warm up with a "
                             "load family before it instead of warmup_requests/warmup_s")
        return self


class Burst(_Shape):
    """Open loop, every request at once (rate = inf): N sends scheduled at 0."""

    kind = "burst"
    levels_key = "burst"
    whole_levels = True
    rate_levels = False

    burst: list[int] = Field(description="Load shape: this many requests sent at once "
                             "(vLLM bench's request rate inf), one point per level.")

    def label(self, level: float) -> str:
        return f"burst {int(level)}"

    def _check_size(self, top: float) -> None:
        if top > MAX_SENDS:
            raise ValueError(f"burst {top:g} is more than {MAX_SENDS:,} sends")

    def offsets(self, level: float, horizon_s: float, *, rng: np.random.Generator | None,
                at_ns: list[int | None] | None = None) -> Offsets:
        return np.zeros(int(level), dtype=np.int64)


def _rates(v: list[float], key: str) -> list[float]:
    if len(v) < 2 or any(r < 0 for r in v) or not any(r > 0 for r in v):
        raise ValueError(f"{key} needs two or more rates >= 0, one of them positive")
    return v


class Ramp(_Shape):
    """Open loop, Poisson arrivals at a rate that changes linearly through the listed rates,
    evenly spaced over max_duration_s (vLLM bench's ramp-up)."""

    kind = "ramp"
    levels_key = "ramp_rps"

    ramp_rps: list[float] = Field(description="Load shape: rates in req/s the rate passes "
                                  "through, linearly, over max_duration_s, e.g. [1, 20].")

    @model_validator(mode="before")
    @classmethod
    def _check_rates(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("ramp_rps"), list):
            _rates([float(r) for r in data["ramp_rps"]], "ramp_rps")
        return data

    @property
    def levels(self) -> list[float]:
        r = self.ramp_rps
        return [sum((a + b) / 2 for a, b in pairwise(r)) / (len(r) - 1)]

    def label(self, level: float) -> str:
        return f"ramp {' → '.join(f'{r:g}' for r in self.ramp_rps)} rps"

    def _check_size(self, top: float) -> None:
        super()._check_size(max(self.ramp_rps))

    def offsets(self, level: float, horizon_s: float, *, rng: np.random.Generator | None,
                at_ns: list[int | None] | None = None) -> Offsets:
        r, step = self.ramp_rps, horizon_s / (len(self.ramp_rps) - 1)
        return arrivals.varying([(step, a, b) for a, b in pairwise(r)], rng=rng)


class Step(_Shape):
    """Open loop, Poisson arrivals at each listed rate in turn, step_s seconds each."""

    kind = "step"
    levels_key = "step_rps"

    step_rps: list[float] = Field(description="Load shape: rates in req/s held step_s seconds "
                                  "each, in order, e.g. [1, 2, 4, 8].")
    step_s: Seconds = Field(10.0, gt=0, description="step_rps: seconds at each rate (the "
                            "point lasts len(step_rps) × step_s).")

    @model_validator(mode="before")
    @classmethod
    def _check_rates(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("step_rps"), list):
            rates = [float(r) for r in data["step_rps"]]
            if not rates or any(r < 0 for r in rates) or not any(r > 0 for r in rates):
                raise ValueError("step_rps needs rates >= 0, one of them positive")
        return data

    @property
    def levels(self) -> list[float]:
        return [sum(self.step_rps) / len(self.step_rps)]

    def label(self, level: float) -> str:
        return f"step {', '.join(f'{r:g}' for r in self.step_rps)} rps ({self.step_s:g} s each)"

    def horizon_s(self, level: float) -> float:
        return self.step_s * len(self.step_rps)

    def _check_size(self, top: float) -> None:
        if max(self.step_rps) * self.horizon_s(top) > MAX_SENDS:
            raise ValueError(f"step_rps plans more than {MAX_SENDS:,} sends")
        if self.horizon_s(top) > MAX_DURATION_S:
            raise ValueError("step_rps × step_s lasts more than 30 days")

    def offsets(self, level: float, horizon_s: float, *, rng: np.random.Generator | None,
                at_ns: list[int | None] | None = None) -> Offsets:
        return arrivals.varying([(self.step_s, r, r) for r in self.step_rps], rng=rng)


class TraceSpeed(_Shape):
    """Open loop, each task sent at its own timestamp (tasks.source: mooncake:PATH), divided
    by the speed: 1 is the trace's own pace, 2 twice as fast."""

    kind = "trace"
    levels_key = "trace_speed"
    rate_levels = False
    timed_by_tasks = True

    trace_speed: list[float] = Field(description="Load shape: replay the tasks' timestamps "
                                     "(a mooncake trace) this many times faster, one point "
                                     "per speed; sends past max_duration_s are not made.")

    def label(self, level: float) -> str:
        return f"trace ×{level:g}"

    def _check_size(self, top: float) -> None:
        return None  # the trace's own length bounds it

    def offsets(self, level: float, horizon_s: float, *, rng: np.random.Generator | None,
                at_ns: list[int | None] | None = None) -> Offsets:
        if not at_ns or any(t is None for t in at_ns):
            raise ValueError("trace_speed needs tasks with timestamps (tasks.source: "
                             "mooncake:PATH)")
        times = np.asarray(at_ns, dtype=np.float64) / level
        return np.sort(times[times < horizon_s * 1e9]).astype(np.int64)


FAMILIES: dict[str, type[LoadFamily]] = {
    f.kind: f for f in (Concurrency, ConstantRate, PoissonRate, GammaRate, Burst, Ramp, Step,
                        TraceSpeed)}
_BY_KEY = {f.levels_key: f for f in FAMILIES.values()}


def family(kind: str) -> type[LoadFamily]:
    """The load family of an arrival kind (as points and records store it)."""
    try:
        return FAMILIES[kind]
    except KeyError:
        raise ValueError(f"unknown arrival kind {kind!r}; known: "
                         f"{', '.join(FAMILIES)}") from None


def _typo(data: dict[str, Any]) -> str | None:
    """The levels key an unknown key was probably meant to be (``concurency``)."""
    for key in data:
        close = difflib.get_close_matches(str(key), list(_BY_KEY), n=1, cutoff=0.8)
        if close and key not in _BY_KEY:
            return close[0]
    return None


def _one_kind(data: Any) -> Any:
    """Check that one levels key is given; drop other kinds' keys stored as null."""
    if isinstance(data, LoadFamily):
        return data
    if not isinstance(data, dict):
        raise ValueError("a load family is a mapping, e.g. {concurrency: [1, 8]} or "
                         "{poisson_rps: [2, 5]}")
    given = [k for k in _BY_KEY if data.get(k) is not None]
    if len(given) != 1 and not (not given and _typo(data)):
        raise ValueError(f"give exactly one of {', '.join(_BY_KEY)} "
                         f"(got {', '.join(given) or 'none'})")
    return {k: v for k, v in data.items() if not (k in _BY_KEY and v is None)}


def _tag(data: Any) -> str | None:
    if isinstance(data, LoadFamily):
        return data.kind
    if not isinstance(data, dict):
        return None
    # A misspelt levels key picks the family it was meant for, so the error names the typo.
    key = next((k for k in _BY_KEY if k in data), None) or _typo(data)
    return None if key is None else _BY_KEY[key].kind


LoadPoint = Annotated[
    Annotated[Concurrency, Tag("concurrency")]
    | Annotated[ConstantRate, Tag("constant")]
    | Annotated[PoissonRate, Tag("poisson")]
    | Annotated[GammaRate, Tag("gamma")]
    | Annotated[Burst, Tag("burst")]
    | Annotated[Ramp, Tag("ramp")]
    | Annotated[Step, Tag("step")]
    | Annotated[TraceSpeed, Tag("trace")],
    Discriminator(_tag),
    BeforeValidator(_one_kind),
]
"""One entry of the study's ``load`` list: whichever family its levels key names."""

_ADAPTER: TypeAdapter[LoadFamily] = TypeAdapter(LoadPoint)


def load_point(data: dict[str, Any]) -> LoadFamily:
    """A load family from its YAML form, e.g. ``{"poisson_rps": [2, 5]}``."""
    return _ADAPTER.validate_python(data)


def schedule(kind: str, rate_rps: float, horizon_s: float, *,
             rng: np.random.Generator | None = None, burstiness: float = 1.0) -> Offsets:
    """Send offsets of an open-loop ``kind`` (see :meth:`LoadFamily.schedule`)."""
    return family(kind).schedule(rate_rps, horizon_s, rng=rng, burstiness=burstiness)


class Sweep(_Model):
    """A search for the highest Poisson rate that still meets the SLO, after the fixed points:
    bisection between the last passing and the first failing rate (docs/demand-and-faults.md)."""

    max_steps: int = Field(4, ge=1, le=50, description="Most extra load points the search runs.")
    point_s: Seconds = Field(3.0, gt=0, description="Seconds each search point sends for.")
    max_s: Seconds = Field(60.0, gt=0, description="Most seconds the whole search may take "
                           "per target (a step that would pass it is not started).")
    rel_tol: float = Field(0.05, gt=0, description="Stop when the bracket (high - low) / low is "
                           "at most this.")
    max_rate_rps: float | None = Field(None, gt=0, description="Never offer more than this "
                                       "(caps the doubling while every point passes).")
