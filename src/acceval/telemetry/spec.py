"""A target's ``telemetry:`` section: where its server publishes its own state."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Telemetry(BaseModel):
    """Scrape the server's Prometheus ``/metrics`` during the run (docs/telemetry.md)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    metrics_url: str | None = Field(
        None, description="The server's /metrics URL. Default for a local `serve:` target: its "
        "own /metrics; for an endpoint: none (set it, e.g. http://host:8000/metrics).",
    )
    interval_s: float | None = Field(
        None, ge=0.1, le=3600, description="Seconds between scrapes (each is one HTTP GET from "
        "a background thread). Default: 0.25 for a local `serve:` target, 1.0 for an endpoint.",
    )
    exporter_url: str | None = Field(
        None, description="An accelerator exporter scraped beside metrics_url at the same "
        "interval: NVIDIA's DCGM exporter (e.g. http://gpu-host:9400/metrics), neuron-monitor's "
        "Prometheus companion, or an HTTP endpoint serving neuron-monitor's JSON report. Its "
        "per-device utilization, memory, power and errors are summarised per load point. "
        "Default: the DCGM exporter of `energy.probe: dcgm`, when one is set; else none.",
    )
    enabled: bool = Field(True, description="false: do not scrape, not even a local server.")

    @field_validator("metrics_url", "exporter_url")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError(f"metrics_url must be an http(s) URL, got {v!r}")
        return v


__all__ = ["Telemetry"]
