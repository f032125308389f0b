"""The study-file section the targets own: ``endpoint``, how to reach an OpenAI-compatible
server. Validated at the edge like the rest of the study (``extra="forbid"``, frozen)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from acceval.plugins import installed, unknown
from acceval.targets.transport import DEFAULT_TRANSPORT, InstalledTransport

# RFC 9110 token characters: what a header name may hold.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HOST = re.compile(r"[A-Za-z0-9._~-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Headers the client writes itself; a second copy would change how the request is framed.
OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "x-request-id"})
#: Request-body fields acceval writes itself, and where each one is set instead: an
#: ``extra_body`` carrying one would silently change what is measured.
OWN_BODY_FIELDS: dict[str, str] = {
    "model": "endpoint.model",
    "messages": "the task set (tasks.source)",
    "prompt": "the task set (tasks.source)",
    "stream": "endpoint.stream",
    "stream_options": "endpoint.stream (usage is always asked for when streaming)",
    "max_tokens": "tasks.max_tokens, or the synthetic output_tokens",
    "max_completion_tokens": "tasks.max_tokens, or the synthetic output_tokens",
    "n": "nothing: acceval reads one choice per request",
    "temperature": "endpoint.temperature",
    "top_p": "endpoint.top_p",
    "seed": "endpoint.seed",
    "stop": "endpoint.stop",
    "ignore_eos": "tasks.synthetic.ignore_eos (set per task by the task set)",
}


def header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as an HTTP header value (latin-1, no control characters
    but tab), or None. It never quotes the value: it may be a key."""
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
        return "holds a control character (a line break, NUL, ...)"
    if any(ord(c) > 255 for c in value):
        return "holds a character HTTP headers cannot carry (only latin-1 text)"
    return None


def checked_base_url(v: str) -> str:
    """A study's base URL as the client uses it (no trailing slash), or a ValueError saying why
    it is not one (the validators of every endpoint-like spec)."""
    problem = url_problem(v)
    if problem is not None:
        raise ValueError(problem)
    return v.rstrip("/")


def checked_env_name(v: str | None) -> str | None:
    """An environment variable's name, or a ValueError saying what one looks like."""
    if v is not None and not _ENV_NAME.fullmatch(v):
        raise ValueError("an environment variable name: letters, digits and '_', not "
                         "starting with a digit")
    return v


def url_problem(url: str) -> str | None:
    """Why ``url`` is not an http(s) base URL the client can connect to, or None."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "holds a space or control character"
    try:
        u = urlsplit(url)
        port = u.port
    except ValueError as exc:  # a bad [IPv6] literal, a port that is not a number in range
        return f"cannot be parsed ({exc})"
    if u.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    host = u.hostname
    if not host:
        return "names no host, e.g. http://127.0.0.1:8000/v1"
    if port == 0:
        return "port 0 cannot be connected to; give the server's port"
    if u.username is not None or u.password is not None:
        return "holds credentials, which would be written to records; use api_key_env"
    if u.query or u.fragment:
        return "holds a query or fragment, which is not sent; give the path up to /v1"
    if u.netloc.startswith("[") or ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return f"[{host}] is not an IPv6 address"
    elif not _HOST.fullmatch(host):
        return "the host holds characters a host name cannot (write a non-ASCII name as " \
               "punycode, xn--...)"
    return None


def _header_name(name: str) -> str:
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"header name {name!r} is not an HTTP token (letters, digits and "
                         "!#$%&'*+-.^_`|~, no spaces or colons)")
    if name.lower() in OWN_HEADERS:
        raise ValueError(f"header {name} is written by the client itself; remove it")
    return name


def _header_value(value: str) -> str:
    problem = header_value_problem(value)
    if problem is not None:
        raise ValueError(f"the value {problem}")
    return value


HeaderName = Annotated[str, AfterValidator(_header_name)]
HeaderValue = Annotated[str, AfterValidator(_header_value)]


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


#: The client that speaks to an endpoint when the study names none (the ``openai`` plugin).
DEFAULT_CLIENT = "openai"


def _installed_client(name: str) -> str:
    """A name in the ``acceval.targets`` entry-point group (built-in or plugin)."""
    names = installed("acceval.targets")
    if name not in names:
        raise ValueError(str(unknown("acceval.targets", name, names)))
    return name


TargetClient = Annotated[str, AfterValidator(_installed_client)]


class Endpoint(BaseModel):
    """How to reach an OpenAI-compatible server."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

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
    timeout_s: float = Field(60.0, gt=0, le=86_400,
                             description="Per-request timeout, whole response (at most a day).")
    connect_timeout_s: float = Field(10.0, gt=0, le=3_600,
                                     description="TCP connect timeout (at most an hour).")
    headers: dict[HeaderName, HeaderValue] = Field(
        default_factory=dict, description="Extra HTTP headers (no secrets: use api_key_env)."
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature sent with requests.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling: sent as "
                                "`top_p` when set.")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="Sampling seed sent as `seed` "
                             "when set (servers that honour it repeat their samples).")
    stop: list[str] | None = Field(None, min_length=1, max_length=16,
                                   description="Stop strings sent as `stop` when set.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Further request-body fields sent as given, e.g. "
        "{top_k: 20, min_p: 0.05, repetition_penalty: 1.1} for vLLM. It cannot set the fields "
        "acceval writes (model, messages, prompt, stream, stream_options, max_tokens, "
        "max_completion_tokens, n) nor those with their own key (temperature, top_p, seed, "
        "stop, ignore_eos).",
    )
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
    client: TargetClient = Field(
        DEFAULT_CLIENT, description="The target client that speaks to the endpoint: `openai` "
        "(the OpenAI-compatible HTTP API, built in) or a client plugin registered in the "
        "`acceval.targets` entry-point group (docs/plugins.md)."
    )
    transport: InstalledTransport = Field(
        DEFAULT_TRANSPORT, description="The HTTP client that measures: `native`, acceval's "
        "own HTTP/1.1 client (the least CPU per request), or `aiohttp`, a maintained library "
        "that checks it. Both honour the same timeouts, limits, retries, keep-alive checks "
        "and TLS, and agree per request within the tolerance in docs/transports.md; the "
        "run's provenance says which one measured."
    )
    receive_stamps: Literal["read", "kernel"] = Field(
        "read", description="When an answer counts as received: `read`, when the client's "
        "event loop reads it (a client whose core is busy adds its own delay), or `kernel`, "
        "the time the kernel received it (SO_TIMESTAMPNS; the native transport over plain "
        "http on Linux only). `kernel` costs about 1 µs of client CPU a network read, which "
        "near the client's own limit moves its schedule lag (docs/transports.md)."
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return checked_base_url(v)

    @model_validator(mode="after")
    def _kernel_stamps(self) -> Endpoint:
        if self.receive_stamps == "kernel":
            from acceval.targets._stamped import kernel_stamps_problem

            problem = kernel_stamps_problem(self.transport, self.base_url.split(":", 1)[0])
            if problem is not None:
                raise ValueError(problem)
        return self

    @field_validator("stop")
    @classmethod
    def _stops(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and any(not s for s in v):
            raise ValueError("a stop string cannot be empty")
        return v

    @field_validator("extra_body")
    @classmethod
    def _extra_body(cls, v: dict[str, Any]) -> dict[str, Any]:
        owned = [k for k in v if k in OWN_BODY_FIELDS]
        if owned:
            raise ValueError("; ".join(f"`{k}` is written by acceval: set it with "
                                       f"{OWN_BODY_FIELDS[k]}, not extra_body" for k in owned))
        return v

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        return checked_env_name(v)
