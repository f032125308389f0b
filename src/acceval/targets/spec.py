"""The study-file section the targets own: ``endpoint``, how to reach an OpenAI-compatible
server. Validated at the edge like the rest of the study (``extra="forbid"``, frozen)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def _default_retry_on() -> list[int | Literal["connect"]]:
    return [429, 503, "connect"]


class RetryPolicy(BaseModel):
    """Whether a failed request is sent again. Off unless set, because a retry changes what is
    measured: with it, a request's stamps run from its first send to its last answer, so its
    latency includes every failed attempt and wait, and ``http_attempts`` in its record says
    how many sends it took."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(3, ge=2, le=20, description="Sends per request, the first included.")
    on: list[int | Literal["connect"]] = Field(
        default_factory=_default_retry_on,
        description="What is retried: HTTP statuses (400-599), and `connect` (refused, reset "
        "before any answer, or the connect timeout). Timeouts are never retried: "
        "`timeout_s` bounds the whole request, retries and waits included.",
    )
    backoff_s: float = Field(
        0.5, ge=0, description="Wait before the second send; it doubles for each later one "
        "(capped at max_wait_s)."
    )
    honour_retry_after: bool = Field(
        True, description="Wait at least what the server's Retry-After asks (seconds or an "
        "HTTP date)."
    )
    max_wait_s: float = Field(
        30.0, gt=0, description="The longest wait before a send. A Retry-After asking for more "
        "ends the request with its error (the detail says why it was not retried)."
    )

    @field_validator("on")
    @classmethod
    def _statuses(cls, v: list[int | str]) -> list[int | str]:
        bad = [s for s in v if isinstance(s, int) and not 400 <= s <= 599]
        if bad:
            raise ValueError(f"HTTP statuses to retry must be 400-599, not {bad}")
        return v


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
    retry: RetryPolicy | None = Field(
        None, description="Send a request again after some failures (see RetryPolicy). "
        "Default: never."
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/")
