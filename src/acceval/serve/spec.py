"""The study-file section ``serve`` owns: a local engine acceval starts for a target. Validated
at the edge like the rest of the study (``extra="forbid"``, frozen); the engine's own options
are checked against the engine's options model (:func:`acceval.engines.base.check_engine`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acceval.targets.transport import DEFAULT_TRANSPORT, InstalledTransport


class LocalServer(BaseModel):
    """A local engine that acceval starts for this target and stops afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    engine: str = Field(description="Engine name: mock, ortgenai, numpy, transformers, or a "
                        "plugin.")
    model: str | None = Field(None, description="Model to load, e.g. builtin:tiny (real engines).")
    precision: str | None = Field(None, description="Engine precision, e.g. fp32, int8, int4.")
    port: int = Field(0, ge=0, le=65535, description="Port on 127.0.0.1; 0 picks a free one.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Engine options (for mock: ttft_ms, itl_ms, ...)."
    )
    transport: InstalledTransport = Field(
        DEFAULT_TRANSPORT, description="The HTTP client that measures this local server: "
        "`native` or `aiohttp` (as endpoint.transport; docs/transports.md).")

    def engine_options(self) -> dict[str, Any]:
        """The options the engine is started with: ``options``, then ``model`` and
        ``precision`` when given."""
        out = dict(self.options)
        if self.model is not None:
            out["model"] = self.model
        if self.precision is not None:
            out["precision"] = self.precision
        return out
