"""The study file: schema, loading and validation.

A study names the targets, the tasks, the load points, the SLOs and the quality level.
It is validated once at the edge (pydantic, ``extra="forbid"``, frozen) and passed down.
Every bad field is reported with its dotted path and a hint.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from acceval.capacity.spec import Availability, Demand
from acceval.economics.spec import Energy, Price, StudyCosts, TargetCosts
from acceval.errors import StudyError
from acceval.interruption.spec import Interruption, check_interruption
from acceval.portability.spec import ExitSpec, StudyPortability, TargetPortability

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_name(v: str) -> str:
    """Names go into folder names, records and reports."""
    if not _NAME_RE.match(v):
        raise ValueError("use letters, digits, '-', '_' or '.' only")
    return v


Name = Annotated[str, AfterValidator(_check_name)]


class Endpoint(_Model):
    """How to reach an OpenAI-compatible server."""

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

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/")


class Platform(_Model):
    """What the target runs on. Free text except chips, which prices scale by."""

    hardware: str | None = Field(None, description="Catalog id of the hardware, e.g. h200, trn2.")
    chips: int = Field(1, ge=1, description="Accelerator chips serving one replica.")
    precision: str | None = Field(None, description="Numeric precision, e.g. bf16, fp8, int4.")
    software: str | None = Field(None, description="Serving software and version.")


class LocalServer(_Model):
    """A local engine that acceval starts for this target and stops afterwards."""

    engine: str = Field(description="Engine name: mock, ortgenai, numpy, transformers, or a "
                        "plugin.")
    model: str | None = Field(None, description="Model to load, e.g. builtin:tiny (real engines).")
    precision: str | None = Field(None, description="Engine precision, e.g. fp32, int8, int4.")
    port: int = Field(0, ge=0, le=65535, description="Port on 127.0.0.1; 0 picks a free one.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Engine options (for mock: ttft_ms, itl_ms, ...)."
    )

    def engine_options(self) -> dict[str, Any]:
        """The options the engine is started with: ``options``, then ``model`` and
        ``precision`` when given."""
        out = dict(self.options)
        if self.model is not None:
            out["model"] = self.model
        if self.precision is not None:
            out["precision"] = self.precision
        return out


class Target(_Model):
    """One platform under test."""

    name: Name = Field(description="Short unique name used in records and reports.")
    endpoint: Endpoint | None = Field(
        None, description="The server to measure. Omit when `serve` starts a local engine."
    )
    serve: LocalServer | None = Field(
        None, description="Start a local engine on 127.0.0.1 for this target."
    )
    platform: Platform = Field(default_factory=Platform, description="Hardware facts.")
    price: Price | None = Field(
        None, description="What a chip costs per hour (rate, catalog id, or owned capex); "
        "without it the target gets no bill."
    )
    costs: TargetCosts = Field(
        default_factory=TargetCosts, description="Bill items beyond chip-hours, utilization."
    )
    energy: Energy = Field(
        default_factory=Energy, description="Energy probe and reporting boundary (L0-L4)."
    )
    availability: Availability | None = Field(
        None, description="Where and when this hardware can be had: regions, quota, lead time, "
        "reservations, failover (docs/capacity.md)."
    )
    portability: TargetPortability | None = Field(
        None, description="What moving to this target took: code diff, compile logs, "
        "fallback traces, tools, hours, artifact check (docs/portability.md)."
    )
    exit: ExitSpec | None = Field(
        None, description="What leaving this target would take: exports, lost functions, "
        "exit-cost inputs, managed-service answers (docs/portability.md)."
    )


    @model_validator(mode="after")
    def _reachable(self) -> Target:
        if self.endpoint is None and self.serve is None:
            raise ValueError("a target needs `endpoint` (a server to measure) or `serve`")
        return self


class Tasks(_Model):
    """Where prompts come from."""

    source: str = Field(
        "builtin:arithmetic",
        description="builtin:NAME (a generator), jsonl:PATH (your tasks) or text:PROMPT "
        "(one fixed prompt, no checking).",
    )
    count: int = Field(100, ge=1, description="Number of tasks to draw.")
    seed: int = Field(0, description="Seed for task generation and sampling order.")
    max_tokens: int = Field(64, ge=1, description="max_tokens sent with each request.")
    attempts: int = Field(1, ge=1, description="Attempts per task (pass@1, cost of pass).")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Generator knobs (difficulty), see docs/tasks.md."
    )


ArrivalKind = Literal["concurrency", "constant", "poisson", "gamma"]


class LoadPoint(_Model):
    """A family of load points: one arrival process swept over several levels."""

    concurrency: list[int] | None = Field(
        None, description="Closed loop: this many requests in flight, one point per level."
    )
    constant_rps: list[float] | None = Field(None, description="Open loop, evenly spaced.")
    poisson_rps: list[float] | None = Field(None, description="Open loop, Poisson arrivals.")
    gamma_rps: list[float] | None = Field(
        None, description="Open loop, gamma inter-arrivals; see burstiness."
    )
    burstiness: float = Field(
        1.0, gt=0, description="Gamma shape: 1 is Poisson, <1 burstier, >1 smoother."
    )
    warmup_requests: int = Field(0, ge=0, description="Requests sent first and excluded.")
    warmup_s: float = Field(0.0, ge=0, description="Seconds at the start that are excluded.")
    min_duration_s: float = Field(0.0, ge=0, description="Run at least this long ...")
    min_requests: int | None = Field(
        None, ge=1, description="... and at least this many requests (default: every task "
        "times attempts once).",
    )
    max_duration_s: float = Field(
        120.0, gt=0, description="... or stop at this duration, whichever comes first."
    )
    max_in_flight: int = Field(
        4096, ge=1, description="Open loop: cap on outstanding requests (a safety valve)."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> LoadPoint:
        kinds = [k for k in ("concurrency", "constant_rps", "poisson_rps", "gamma_rps")
                 if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(
                "give exactly one of concurrency, constant_rps, poisson_rps, gamma_rps "
                f"(got {', '.join(kinds) or 'none'})"
            )
        levels = getattr(self, kinds[0])
        if not levels or any(v <= 0 for v in levels):
            raise ValueError(f"{kinds[0]} needs one or more positive levels")
        if self.min_duration_s > self.max_duration_s:
            raise ValueError("min_duration_s is larger than max_duration_s")
        return self

    @property
    def kind(self) -> ArrivalKind:
        if self.concurrency is not None:
            return "concurrency"
        if self.constant_rps is not None:
            return "constant"
        if self.poisson_rps is not None:
            return "poisson"
        return "gamma"

    @property
    def levels(self) -> list[float]:
        for k in ("concurrency", "constant_rps", "poisson_rps", "gamma_rps"):
            v = getattr(self, k)
            if v is not None:
                return [float(x) for x in v]
        raise AssertionError("validated to have one kind")


class SLO(_Model):
    """Service-level objectives. A request is *good* when it meets every threshold given;
    a load point *meets the SLO* when the chosen percentile of each metric does."""

    ttft_ms: float | None = Field(None, gt=0, description="Time to first token bound.")
    tpot_ms: float | None = Field(None, gt=0, description="Time per output token bound.")
    e2e_ms: float | None = Field(None, gt=0, description="End-to-end latency bound.")
    percentile: float = Field(95.0, gt=0, le=100, description="Percentile held to the bounds.")
    max_error_rate: float = Field(0.01, ge=0, le=1, description="Most errors a point may have.")


class Sweep(_Model):
    """A search for the highest Poisson rate that still meets the SLO, after the fixed points:
    bisection between the last passing and the first failing rate (docs/demand-and-faults.md)."""

    max_steps: int = Field(4, ge=1, le=50, description="Most extra load points the search runs.")
    point_s: float = Field(3.0, gt=0, description="Seconds each search point sends for.")
    max_s: float = Field(60.0, gt=0, description="Most seconds the whole search may take per "
                         "target (a step that would pass it is not started).")
    rel_tol: float = Field(0.05, gt=0, description="Stop when the bracket (high - low) / low is "
                           "at most this.")
    max_rate_rps: float | None = Field(None, gt=0, description="Never offer more than this "
                                       "(caps the doubling while every point passes).")


class Quality(_Model):
    """The quality level a target must reach for its answers to count."""

    min_accuracy: float | None = Field(None, ge=0, le=1, description="Absolute accuracy floor.")
    relative_to: str | None = Field(
        None, description="Reference target name: accuracy must be >= relative_fraction of it."
    )
    relative_fraction: float = Field(0.99, gt=0, le=1, description="MLPerf-style 99%.")
    min_output_tokens: float | None = Field(
        None, ge=0, description="Floor on mean output tokens per request (MLPerf-style)."
    )
    fail_exit: bool = Field(False, description="`acceval run` exits 3 when a target fails.")


class Output(_Model):
    dir: str = Field("runs", description="Where run folders are written.")


class Study(_Model):
    """A comparison of targets on one task set at one quality level."""

    name: Name = Field(description="Study name; run folders are named <name>-<UTC time>.")
    description: str = Field("", description="Free text shown in the report.")
    seed: int = Field(0, description="Base seed for arrivals (each dimension derives its own).")
    tasks: Tasks = Field(default_factory=Tasks, description="The task set.")
    targets: list[Target] = Field(description="The platforms to compare.", min_length=1)
    load: list[LoadPoint] = Field(
        default_factory=lambda: [LoadPoint(concurrency=[1])], description="Load points."
    )
    slo: SLO = Field(default_factory=SLO, description="Latency objectives.")
    quality: Quality = Field(default_factory=Quality, description="Quality level.")
    output: Output = Field(default_factory=Output, description="Output location.")
    costs: StudyCosts = Field(
        default_factory=StudyCosts, description="Study-wide prices, horizon, sensitivity ranges."
    )
    demand: Demand | None = Field(
        None, description="Real demand (hourly rates over a day or week) to size a fleet "
        "against, for utilization and cost under demand (docs/capacity.md)."
    )
    portability: StudyPortability | None = Field(
        None, description="Reference target and performance contract for the portability "
        "levels (docs/portability.md)."
    )
    sweep: Sweep | None = Field(
        None, description="Search for the highest Poisson rate meeting the SLO after the fixed "
        "load points (docs/demand-and-faults.md)."
    )
    interruption: Interruption | None = Field(
        None, description="A fault injected into one target during one load point, and its "
        "recovery measured (docs/demand-and-faults.md)."
    )


    @model_validator(mode="after")
    def _cross(self) -> Study:
        names = [t.name for t in self.targets]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"target names must be unique; repeated: {', '.join(dupes)}")
        if self.quality.relative_to and self.quality.relative_to not in names:
            raise ValueError(
                f"quality.relative_to names '{self.quality.relative_to}', which is not a target "
                f"(targets: {', '.join(names)})"
            )
        ref = self.portability.reference if self.portability else None
        if ref and ref not in names:
            raise ValueError(f"portability.reference names '{ref}', which is not a target "
                             f"(targets: {', '.join(names)})")
        if self.interruption is not None:
            check_interruption(self.interruption, {t.name: t.serve is not None
                                                   for t in self.targets})
        return self


# --- loading ---------------------------------------------------------------------------------

def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or "[" in str(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` (to suggest field names)."""
    model: Any = Study
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if field is None:
            return None
        ann = field.annotation
        for cand in (*getattr(ann, "__args__", ()), ann):
            inner = getattr(cand, "__args__", None)
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                model = cand
                break
            if inner:
                hit = [a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)]
                if hit:
                    model = hit[0]
                    break
        else:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _hint(err: Any) -> str:
    kind = err["type"]
    loc = tuple(err["loc"])
    if kind == "extra_forbidden":
        owner = _model_at(loc)
        if owner is not None:
            allowed = list(owner.model_fields)
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            if close:
                return f"unknown field; did you mean '{close[0]}'? allowed: {', '.join(allowed)}"
            return f"unknown field; allowed: {', '.join(allowed)}"
        return "remove this field"
    if kind == "missing":
        owner = _model_at(loc)
        desc = ""
        if owner is not None and loc and loc[-1] in owner.model_fields:
            desc = owner.model_fields[str(loc[-1])].description or ""
        return f"add it{': ' + desc if desc else ''}"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"expected a {kind.split('_')[0]} value"
    if kind == "literal_error":
        return str(err.get("ctx", {}).get("expected", ""))
    if kind.startswith(("greater_than", "less_than")):
        return "check the allowed range in docs/study-reference.md"
    return "see docs/study-reference.md"


def study_from_dict(data: Any, *, source: str = "study") -> Study:
    """Validate a parsed study; raise :class:`StudyError` naming every bad field."""
    if not isinstance(data, dict):
        raise StudyError(
            f"{source}: the top level must be a mapping of fields (name, targets, ...)"
        )
    try:
        return Study.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            msg = err["msg"].removeprefix("Value error, ")
            problems.append((_loc(tuple(err["loc"])), msg, _hint(err)))
        raise StudyError(f"{source}: {len(problems)} problem(s) in the study", problems) from None


def load_study(path: str | Path) -> Study:
    """Read and validate a study YAML file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyError(f"{p}: no such study file") from None
    except OSError as exc:
        raise StudyError(f"{p}: cannot read ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise StudyError(f"{p}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    return study_from_dict(data, source=str(p))


def study_to_yaml(study: Study) -> str:
    """The study as it ran. Secrets are never part of a study (keys live in the environment)."""
    return yaml.safe_dump(study.model_dump(mode="json", exclude_defaults=False), sort_keys=False)


# --- what-if overrides -----------------------------------------------------------------------

def _set_path(node: Any, parts: list[str], value: Any, full: str) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, list):
        # Lists of named items (targets) are addressed by name, or '*' for all of them.
        hits = [item for item in node if isinstance(item, dict)
                and (head == "*" or item.get("name") == head)]
        if not hits:
            names = [str(item.get("name")) for item in node if isinstance(item, dict)]
            raise StudyError(f"override {full}: no item named '{head}'",
                             [(full, f"no item named '{head}'",
                               f"use one of: {', '.join(names)} or '*'")])
        if not rest:
            raise StudyError(f"override {full}: give a field of the item, not the item",
                             [(full, "path ends at a list item", "add a field name")])
        for item in hits:
            _set_path(item, rest, value, full)
        return
    if not isinstance(node, dict):
        raise StudyError(f"override {full}: '{head}' is not inside a section",
                         [(full, "path goes through a value", "check the path")])
    if not rest:
        node[head] = value
        return
    if node.get(head) is None:
        node[head] = {}
    _set_path(node[head], rest, value, full)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """A copy of a study dict with ``path=value`` overrides applied (values parsed as YAML).

    Paths are dotted; targets are addressed by name: ``targets.h200.price.usd_per_hour=40``,
    ``targets.*.energy.pue=1.4``, ``slo.ttft_ms=300``. The result is validated by the caller.
    """
    import copy

    out = copy.deepcopy(data)
    for item in overrides:
        path, sep, raw = item.partition("=")
        if not sep or not path:
            raise StudyError(f"override '{item}': expected path=value",
                             [(item, "missing '='", "e.g. slo.ttft_ms=300")])
        _set_path(out, path.split("."), yaml.safe_load(raw), path)
    return out
