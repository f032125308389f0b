"""The study-file section the targets own: ``endpoint``, how to reach an OpenAI-compatible
server. Validated at the edge like the rest of the study (``extra="forbid"``, frozen)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Endpoint(BaseModel):
    """How to reach an OpenAI-compatible server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(
        description="Base URL up to and including /v1, e.g. http://127.0.0.1:8000/v1."
    )
    model: str = Field(description="The model name sent in each request.")
    api: Literal["chat", "completions"] = Field(
        "completions",
        description="Which endpoint to call: /v1/chat/completions or /v1/completions.",
    )
    stream: bool = Field(True, description="Request a streamed (SSE) response.")
    api_key_env: str | None = Field(
        None,
        description="Name of the environment variable holding the API key. The key itself is "
        "never written to the study copy, records, logs or reports.",
    )
    timeout_s: float = Field(60.0, gt=0, description="Per-request timeout, whole response.")
    connect_timeout_s: float = Field(10.0, gt=0, description="TCP connect timeout.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers (no secrets: use api_key_env)."
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature sent with requests.")
    max_response_bytes: int = Field(
        64 * 2**20, gt=0,
        description="Largest response body accepted, in bytes (default 64 MiB). A larger one "
        "ends the request as a `too_large` error and closes its connection; nothing past the "
        "limit is kept in memory.",
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/")
