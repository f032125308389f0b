"""The study-file section ``serve`` owns: a local engine acceval starts for a target. Validated
at the edge like the rest of the study (``extra="forbid"``, frozen); the engine's own options
are checked against the engine's options model (:func:`acceval.engines.base.check_engine`)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    receive_stamps: Literal["read", "kernel"] = Field(
        "read", description="When an answer from this local server counts as received: "
        "`read` or `kernel` (as endpoint.receive_stamps; docs/transports.md).")

    @model_validator(mode="after")
    def _kernel_stamps(self) -> Self:
        if self.receive_stamps == "kernel":
            from acceval.targets._stamped import kernel_stamps_problem

            problem = kernel_stamps_problem(self.transport, "http")   # a local server
            if problem is not None:
                raise ValueError(problem)
        return self

    def engine_options(self) -> dict[str, Any]:
        """The options the engine is started with: ``options``, then ``model`` and
        ``precision`` when given."""
        out = dict(self.options)
        if self.model is not None:
            out["model"] = self.model
        if self.precision is not None:
            out["precision"] = self.precision
        return out
