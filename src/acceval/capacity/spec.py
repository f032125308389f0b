"""Study-file sections for real demand and availability: ``Demand`` (per study) and
``Availability`` (per target).

Validated at the edge like the rest of the study (``extra="forbid"``, frozen). The formulas
that use them live in :mod:`acceval.capacity.profile`, :mod:`acceval.capacity.fleet`,
:mod:`acceval.capacity.availability` and :mod:`acceval.capacity.simulate`; docs/capacity.md
explains each field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from acceval.seeds import Seed

Scaling = Literal["hourly", "static"]

#: Bounds that keep the planning and simulation arithmetic finite: a year of hours, 30 days
#: of seconds, a billion requests a second, a thousandfold growth or surge.
MAX_HOURS = 366 * 24.0
MAX_SECONDS = 30 * 86_400.0
MAX_RPS = 1e9
MAX_FACTOR = 1e3


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Burst(_Model):
    """A declared surge: the rate is multiplied by ``multiplier`` for a while."""

    at_hour: float = Field(ge=0, le=MAX_HOURS,
                           description="Start, in hours from the start of the profile "
                           "(fractions allowed: 9.5 is 09:30 on day one).")
    duration_h: float = Field(gt=0, le=MAX_HOURS, description="How long the surge lasts, in hours.")
    multiplier: float = Field(gt=0, le=MAX_FACTOR,
                              description="Rate multiplier during the surge (2 = double).")
    every_day: bool = Field(True, description="Repeat at the same hour on every day of the "
                            "profile (false: once, at at_hour).")


class Replay(_Model):
    """How the run-time side replays the profile live against a target."""

    compress_to_s: float = Field(
        600.0, gt=0, le=MAX_SECONDS,
        description="Seconds the profile's period (a day or a week) is compressed "
        "into for a live replay. Rates keep their rps values; only time is compressed, so the "
        "replay sends period/compress_to_s times fewer requests than the real day.")
    seed: Seed | None = Field(None, description="Seed for the replay's arrival times "
                              "(default: derived from the study seed); 0..2**32-1.")
    share: float = Field(
        1.0, gt=0, le=1, description="Share of the demand's rates the replay sends: 1 replays "
        "the whole demand against one target; 0.05 replays one replica's slice of a fleet "
        "sized for 20 (the fleet plan still uses the whole demand).")


class WhatIf(_Model):
    """Replica failures for the 24 h fleet simulation."""

    mtbf_h: float = Field(
        72.0, gt=0, le=MAX_HOURS,
        description="Mean hours between failures of one replica (exponential).")
    restart_s: float | None = Field(
        None, ge=0, le=MAX_SECONDS,
        description="Seconds a failed replica is down: restart + compile + load + "
        "warm-up. Default: the measured local server start-up time, else 300.")
    timeout_s: float = Field(
        30.0, gt=0, le=MAX_SECONDS,
        description="A request still queued after this many seconds is lost.")
    seed: Seed | None = Field(None, description="Seed for arrivals and failures "
                              "(default: derived from the study seed); 0..2**32-1.")


class Demand(_Model):
    """Real demand: hourly request rates over a day or a week, to size a fleet against."""

    profile: str = Field(
        "builtin:business-hours",
        description="builtin:NAME (business-hours, evening-peak, overnight-batch, flat) or "
        "csv:PATH with columns hour,rps or hour,weight (24 rows: a day; 168: a week).")
    peak_rps: float | None = Field(
        None, gt=0, le=MAX_RPS,
        description="Requests per second in the busiest hour. Needed for builtin "
        "shapes and weight CSVs; rescales an rps CSV so that its busiest hour has this rate.")
    growth: float = Field(1.0, gt=0, le=MAX_FACTOR,
                          description="Multiplier on every rate (1.3 = 30% more).")
    bursts: list[Burst] = Field(default_factory=list, description="Declared surges.")
    days: int = Field(1, ge=1, le=366, description="Days to plan and simulate (a daily profile "
                      "repeats; a weekly one wraps).")
    headroom: float = Field(
        0.2, ge=0, description="Spare share on top of the replicas the rate needs "
        "(0.2 = provision for 20% more than the hour's rate).")
    spares: int = Field(0, ge=0, description="Extra replicas beyond the need (1 = N+1).")
    scaling: Scaling = Field(
        "hourly", description="hourly: replicas follow the hour's need (autoscaling); static: "
        "the peak hour's fleet all day.")
    residency: list[str] | None = Field(
        None, description="Regions where the data may be processed (data residency); "
        "None: no constraint.")
    need_by_days: float | None = Field(
        None, ge=0, le=MAX_HOURS / 24,
        description="Days from now by which the capacity must be serving.")
    replay: Replay | None = Field(
        None, description="Replay the profile live against every target after its load points "
        "(docs/demand-and-faults.md); omit to skip the replay.")
    what_if: WhatIf = Field(default_factory=WhatIf, description="Failure what-if settings.")

    @field_validator("profile")
    @classmethod
    def _profile(cls, v: str) -> str:
        if not v.startswith(("builtin:", "csv:")) or v.split(":", 1)[1] == "":
            raise ValueError("use builtin:NAME or csv:PATH")
        return v

    @model_validator(mode="after")
    def _peak(self) -> Demand:
        if self.profile.startswith("builtin:") and self.peak_rps is None:
            raise ValueError("a builtin profile needs peak_rps (requests/s in the busiest hour)")
        return self


class Availability(_Model):
    """Where and when the target can be had: regions, quota, lead time, reservations."""

    regions: list[str] = Field(
        default_factory=list, description="Regions where this hardware is offered to you.")
    quota_replicas: int | None = Field(
        None, ge=0, description="Most replicas you may run at once (service quota).")
    quota_chips: int | None = Field(
        None, ge=0, description="Most chips you may run at once (quota in chips/vCPUs).")
    lead_time_days: float | None = Field(
        None, ge=0, le=MAX_HOURS / 24,
        description="Days from order (or quota request) to serving capacity.")
    reserved_replicas: int | None = Field(
        None, ge=0, description="Replicas held by a reservation (capacity block, commitment).")
    failover_region: str | None = Field(
        None, description="Region that takes the traffic if the primary region is lost.")
    transfer_usd_per_gb: float | None = Field(
        None, ge=0, description="Cross-region transfer price per GB (failover, data copies); "
        "the bill's transfer item prices transfer_gb_per_request at it.")
    transfer_gb_per_request: float | None = Field(
        None, ge=0, description="GB that cross regions per request (copies to the failover "
        "region, reads from a data store in another region), billed at transfer_usd_per_gb.")
    source: str | None = Field(None, description="Where these facts come from (console, "
                               "account team, date).")
