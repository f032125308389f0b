"""Study-file sections for money: ``Platform``, ``Price``, ``TargetCosts`` (per target) and
``StudyCosts`` (per study, with the sensitivity ranges). The ``energy:`` section is the
probes' (:mod:`acceval.probes.spec`).

These are validated at the edge like the rest of the study (``extra="forbid"``, frozen).
The formulas that use them live in :mod:`acceval.economics.bill` and
:mod:`acceval.economics.energy`; docs/economics.md explains each field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Pricing = Literal["on_demand", "reserved", "spot", "owned"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Platform(_Model):
    """What the target runs on. Free text except chips, which prices scale by, and hardware,
    the catalog id its prices and power come from."""

    hardware: str | None = Field(None, description="Catalog id of the hardware, e.g. h200, trn2.")
    chips: int = Field(1, ge=1, description="Accelerator chips serving one replica.")
    precision: str | None = Field(None, description="Numeric precision, e.g. bf16, fp8, int4.")
    software: str | None = Field(None, description="Serving software and version.")


class Price(_Model):
    """What one chip of the target costs per hour: a rate, a catalog entry, or owned hardware."""

    usd_per_hour: float | None = Field(
        None, ge=0,
        description="Price per chip-hour in USD (a CPU instance counts as one chip). "
        "Multiplied by platform.chips. Overrides the catalog.",
    )
    catalog: str | None = Field(
        None, description="Price id in the hardware/price catalog, e.g. aws-p5e-48xlarge-cb; "
        "the per-chip rate is the instance rate divided by its chips.",
    )
    pricing: Pricing | None = Field(
        None, description="How the chips are paid: on_demand, reserved, spot or owned. "
        "Defaults to the catalog entry's pricing, else on_demand.",
    )
    capex_usd: float | None = Field(
        None, ge=0, description="Owned: capital cost per chip (its share of server, network, "
        "storage), in USD.",
    )
    lifetime_years: float = Field(
        4.0, gt=0, description="Owned: economic life for the capital recovery factor "
        "(SemiAnalysis uses 4 years).",
    )
    interest_rate: float = Field(
        0.0, ge=0, description="Owned: yearly cost of capital r in CRF(r, n); 0 = straight line.",
    )
    hosting_usd_per_month: float | None = Field(
        None, ge=0, description="Owned: colocation/hosting per chip per month, in USD.",
    )
    power_kw: float | None = Field(
        None, gt=0, description="Owned: all-in power per chip in kW, billed at "
        "costs.electricity_usd_per_kwh when no energy was measured.",
    )
    source: str | None = Field(None, description="Where the figure comes from (contract, quote).")

    @model_validator(mode="after")
    def _one_way(self) -> Price:
        if self.capex_usd is not None and self.pricing != "owned":
            raise ValueError("capex_usd is for pricing: owned")
        if self.usd_per_hour is None and self.catalog is None and self.capex_usd is None:
            raise ValueError("give usd_per_hour, catalog, or pricing: owned with capex_usd")
        return self


class TargetCosts(_Model):
    """Bill items beyond chip-hours, per target. Omitted items are reported as not counted."""

    storage_usd_per_month: float | None = Field(
        None, ge=0, description="Weights, compiled artifacts, volumes: USD per month per replica.",
    )
    egress_gb_per_request: float | None = Field(
        None, ge=0, description="GB sent out per request (priced at costs.egress_usd_per_gb).",
    )
    compile_s: float | None = Field(
        None, ge=0, description="Compile and warm-up seconds per replica start, billed at the "
        "chip rate and spread over the requests served between starts. A declared value wins "
        "over a compile log and over a local server's measured start-up, which are kept beside "
        "it (docs/economics.md).",
    )
    starts_per_month: float = Field(
        30.0, gt=0, description="Replica (re)starts per month (deploys, scale-ups, recoveries); "
        "each pays compile/warm-up again.",
    )
    engineering_hours: float | None = Field(
        None, ge=0, description="Engineer hours to adapt and validate the model on this target; "
        "amortised over costs.horizon_months x costs.expected_requests_per_month.",
    )
    observability_usd_per_month: float | None = Field(
        None, ge=0, description="Monitoring, logging, orchestration: USD per month per replica.",
    )
    utilization: float = Field(
        1.0, gt=0, le=1, description="Share of paid chip time doing useful work in production "
        "(0 < u <= 1); compute cost = measured time x rate / utilization.",
    )


class Swing(_Model):
    """One input's declared range: a relative +-pct, or absolute low/high values."""

    pct: float | None = Field(None, gt=0, lt=100, description="Symmetric swing, +-pct percent.")
    low: float | None = Field(None, description="Absolute low value (instead of pct).")
    high: float | None = Field(None, description="Absolute high value (instead of pct).")

    @model_validator(mode="after")
    def _shape(self) -> Swing:
        absolute = self.low is not None or self.high is not None
        if absolute == (self.pct is not None):
            raise ValueError("give either pct or both low and high")
        if absolute and (self.low is None or self.high is None or self.low > self.high):
            raise ValueError("low and high are both needed, with low <= high")
        return self

    def bounds(self, base: float) -> tuple[float, float]:
        if self.pct is not None:
            return base * (1 - self.pct / 100), base * (1 + self.pct / 100)
        assert self.low is not None and self.high is not None
        return self.low, self.high


class Sensitivity(_Model):
    """Declared swing ranges, one input at a time (tornado), defaults from docs/economics.md."""

    price: Swing = Field(Swing(pct=30), description="Chip-hour price.")
    utilization: Swing = Field(Swing(low=0.3, high=0.9), description="Production utilization.")
    engineering_hours: Swing = Field(Swing(pct=50), description="Adaptation effort.")
    compile_s: Swing = Field(Swing(pct=50), description="Compile/warm-up time.")
    storage_usd_per_month: Swing = Field(Swing(pct=30), description="Storage cost.")
    observability_usd_per_month: Swing = Field(Swing(pct=30), description="Observability cost.")
    egress_gb_per_request: Swing = Field(Swing(pct=30), description="Egress volume.")
    engineer_usd_per_hour: Swing = Field(Swing(pct=30), description="Engineer rate (study-wide).")
    expected_requests_per_month: Swing = Field(
        Swing(pct=50), description="Expected volume (study-wide)."
    )
    electricity_usd_per_kwh: Swing = Field(Swing(pct=30), description="Electricity (study-wide).")
    egress_usd_per_gb: Swing = Field(Swing(pct=30), description="Egress price (study-wide).")


class StudyCosts(_Model):
    """Study-wide economic inputs."""

    catalog: str | None = Field(
        None, description="A YAML hardware/price catalog (path relative to the study file) "
        "that overrides or extends the built-in one by id.",
    )
    engineer_usd_per_hour: float | None = Field(
        None, ge=0, description="Loaded engineer cost per hour, for engineering_hours.",
    )
    horizon_months: float = Field(
        12.0, gt=0, description="Months over which one-off engineering is amortised.",
    )
    expected_requests_per_month: float | None = Field(
        None, gt=0, description="Production volume; engineering is spread over "
        "horizon_months x this many requests.",
    )
    egress_usd_per_gb: float | None = Field(
        None, ge=0, description="Internet egress price per GB (AWS first tier ~0.09).",
    )
    electricity_usd_per_kwh: float | None = Field(
        None, ge=0, description="Electricity price, used for owned hardware only.",
    )
    baseline_usd_per_task: float | None = Field(
        None, gt=0, description="Cost of a human expert per correct task; joins the frontier.",
    )
    sensitivity: Sensitivity = Field(
        default_factory=Sensitivity, description="Swing ranges for the tornado analysis.",
    )
