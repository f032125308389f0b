"""The study file: schema, loading and validation.

A study names the targets, the tasks, the load points, the SLOs and the quality level.
It is validated once at the edge (pydantic, ``extra="forbid"``, frozen) and passed down.
Every bad field is reported with its dotted path and a hint.

Each section's schema belongs to the concept that uses it (``targets.spec.Endpoint``, the
``loadgen.spec`` load families, ``metrics.spec.SLO``, ``economics.spec.Price``, ...); this
module composes them into a ``Study`` and re-exports their names. The concepts never import
this module (tests/unit/test_layers.py).
"""

from __future__ import annotations

import difflib
import re
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from acceval.agents.spec import Agents
from acceval.capacity.spec import Availability, Demand
from acceval.claims.spec import Claims, PlanSpec
from acceval.economics.spec import Platform, Price, StudyCosts, TargetCosts
from acceval.errors import StudyError
from acceval.input_files import YAML_MAX_DEPTH, load_yaml, read_yaml
from acceval.interruption.spec import Interruption, check_interruption
from acceval.loadgen.spec import ArrivalKind, Concurrency, LoadFamily, LoadPoint, Sweep
from acceval.metrics.spec import SLO, Quality
from acceval.names import Name
from acceval.portability.spec import ExitSpec, StudyPortability, TargetPortability
from acceval.probes.spec import Energy
from acceval.scaleout.spec import Execution
from acceval.seeds import Seed
from acceval.serve.spec import LocalServer
from acceval.targets.spec import Endpoint
from acceval.tasks.spec import Tasks
from acceval.telemetry.spec import Telemetry
from acceval.training.spec import Training


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)




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
    telemetry: Telemetry = Field(
        default_factory=Telemetry, description="The server's own /metrics, scraped during the "
        "run (running, waiting, KV cache, prefix cache, tokens; docs/telemetry.md)."
    )


    @model_validator(mode="after")
    def _reachable(self) -> Target:
        if self.endpoint is None and self.serve is None:
            raise ValueError("a target needs `endpoint` (a server to measure) or `serve`")
        if (self.endpoint is not None and self.serve is not None
                and "transport" in self.serve.model_fields_set
                and self.serve.transport != self.endpoint.transport):
            raise ValueError("serve.transport and endpoint.transport differ: with an "
                             "`endpoint`, set the transport there only")
        if (self.endpoint is not None and self.serve is not None
                and "receive_stamps" in self.serve.model_fields_set
                and self.serve.receive_stamps != self.endpoint.receive_stamps):
            raise ValueError("serve.receive_stamps and endpoint.receive_stamps differ: with "
                             "an `endpoint`, set them there only")
        return self


def _one_client() -> list[LoadPoint]:
    return [Concurrency(concurrency=[1])]


class Output(_Model):
    """Where run folders go."""

    dir: str = Field("runs", min_length=1, description="Where run folders are written.")

    @field_validator("dir")
    @classmethod
    def _path(cls, v: str) -> str:
        if any(not c.isprintable() for c in v):
            raise ValueError("holds a control character; give a folder path")
        return v


#: The one study-wide problem that belongs to a field: ``study_from_dict`` files it under
#: ``targets`` with :data:`NOTHING_TO_MEASURE_HINT`.
NOTHING_TO_MEASURE = "the study measures nothing: no targets, agents or training section"
NOTHING_TO_MEASURE_HINT = ("add `targets:` (inference platforms), or an `agents:` (agent "
                           "workflows) or `training:` (training platforms) section; targets "
                           "may be left out only when one of those is there")


class Study(_Model):
    """A comparison of targets on one task set at one quality level (inference targets,
    agent workflows, training platforms: at least one of the three)."""

    name: Name = Field(description="Study name; run folders are named <name>-<UTC time>.")
    description: str = Field("", description="Free text shown in the report.")
    seed: Seed = Field(0, description="Base seed for arrivals (each dimension derives its own); "
                       "0..2**32-1.")
    tasks: Tasks = Field(default_factory=Tasks, description="The task set.")
    targets: list[Target] = Field(
        default_factory=list, description="The inference platforms to compare; may be left "
        "out when the study has an `agents:` or `training:` section."
    )
    load: list[LoadPoint] = Field(
        default_factory=_one_client, description="Load families, "
        "one level key each: concurrency, constant_rps, poisson_rps or gamma_rps."
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
    claims: Claims | None = Field(
        None, description="Vendor claims shown beside the run (the ledger), and ratio claims "
        "checked against two of its targets (docs/planning.md)."
    )
    plan: PlanSpec | None = Field(
        None, description="The model the roofline planner sizes on each target's hardware: "
        "fit, largest batch, prefill and decode bounds, replica size, cost at the bound "
        "(docs/planning.md)."
    )
    agents: Agents | None = Field(
        None, description="Agent workflows on the built-in shop, measured end to end "
        "against their own agent targets (docs/agents.md)."
    )
    training: Training | None = Field(
        None, description="Training platforms trained to one quality target: time and cost "
        "to target, stability, restarts, goodput, MFU (docs/training.md)."
    )
    execution: Execution = Field(
        default_factory=Execution, description="Where the load is generated: this process, "
        "or load-generator actors on a Ray cluster, several per target (docs/scale-out.md)."
    )

    @model_validator(mode="after")
    def _cross(self) -> Study:
        if not self.targets and self.agents is None and self.training is None:
            raise ValueError(NOTHING_TO_MEASURE)
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
        checks = self.claims.check if self.claims else []
        for i, c in enumerate(checks):
            for role in ("subject", "comparator"):
                if getattr(c, role) not in names:
                    raise ValueError(f"claims.check[{i}].{role} names '{getattr(c, role)}', "
                                     f"which is not a target (targets: {', '.join(names)})")
        unknown = sorted(set(self.plan.targets) - set(names)) if self.plan else []
        if unknown:
            raise ValueError(f"plan.targets names {', '.join(unknown)}, not a target "
                             f"(targets: {', '.join(names)})")
        placed = sorted({p.target for p in self.execution.placement} - set(names))
        if placed:
            raise ValueError(f"execution.placement names {', '.join(placed)}, not a target "
                             f"(targets: {', '.join(names)})")
        if self.interruption is not None:
            check_interruption(self.interruption, {t.name: t.serve is not None
                                                   for t in self.targets})
        return self


# --- loading ---------------------------------------------------------------------------------

def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field holds (through Optional, list, dict, Annotated and unions)."""
    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        a = stack.pop(0)
        if isinstance(a, type) and issubclass(a, BaseModel):
            found.append(a)
        else:
            stack.extend(typing.get_args(a))
    return found


#: Names pydantic gives validator and union wrappers in an error's location.
_WRAPPER = re.compile(r"^(function-(after|before|wrap|plain)|tagged-union|union|nullable|"
                      r"lax-or-strict|json-or-python|definition-ref|chain)(\[|$)")


def _walk(loc: tuple[int | str, ...]) -> tuple[str, type[BaseModel] | None]:
    """The dotted path of an error location, and the model that owns its last field.

    Validator wrappers and the tag a discriminated union adds (``load[0]``'s family kind)
    are not part of the path a user writes."""
    path, owner = "", None
    model: type[BaseModel] | None = Study
    members: list[type[BaseModel]] = []
    for i, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
            continue
        # A wrapper's name (``function-after[_one(), Training]``), never the last part: a
        # key the user wrote may hold brackets too (``bad[0]``) and is kept.
        if i < len(loc) - 1 and _WRAPPER.match(part):
            continue
        tagged = {getattr(m, "kind", None): m for m in members} if len(members) > 1 else {}
        if part in tagged:
            model, members = tagged[part], []
            continue
        owner = model
        path += ("." if path else "") + part
        field = model.model_fields.get(part) if model is not None else None
        members = _models_in(field.annotation) if field is not None else []
        model = members[0] if len(members) == 1 else None
    return path or "(top level)", owner


def _loc(loc: tuple[int | str, ...]) -> str:
    return _walk(loc)[0]


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` (to suggest field names)."""
    return _walk(loc)[1]


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
    if kind == "finite_number":
        return "write a finite number (not .nan or .inf)"
    if kind.startswith(("greater_than", "less_than")):
        return "check the allowed range in docs/study-reference.md"
    return "see docs/study-reference.md"


def study_from_dict(data: Any, *, source: str = "study") -> Study:
    """Validate a parsed study; raise :class:`StudyError` naming every bad field."""
    if not isinstance(data, dict):
        raise StudyError(
            f"{source}: the top level must be a mapping of fields (name, targets, ...)",
            hint="start from `acceval demo --print-study`, or see docs/study-reference.md")
    try:
        return Study.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            msg = err["msg"].removeprefix("Value error, ")
            if msg == NOTHING_TO_MEASURE:
                problems.append(("targets", msg, NOTHING_TO_MEASURE_HINT))
                continue
            problems.append((_loc(tuple(err["loc"])), msg, _hint(err)))
        # The cross-field check runs only once every field is valid: said with the rest.
        nothing = (not data.get("targets") and data.get("agents") is None
                   and data.get("training") is None)
        if nothing and not any(p[0] == "targets" for p in problems):
            problems.append(("targets", NOTHING_TO_MEASURE, NOTHING_TO_MEASURE_HINT))
        raise StudyError(f"{source}: {len(problems)} problem(s) in the study", problems) from None


def load_study(path: str | Path) -> Study:
    """Read and validate a study YAML file (within the limits of :mod:`acceval.input_files`)."""
    p = Path(path)
    return study_from_dict(read_yaml(p, what="study file"), source=str(p))


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
        try:
            # The study's own limits: depth, aliases expanded (an alias bomb), characters.
            value = load_yaml(raw, source=f"--set {path}")
        except StudyError as exc:
            problem = str(exc).split(": ", 1)[-1]
            raise StudyError(f"override '{item[:200]}': the value is not valid YAML "
                             f"({problem})",
                             [(path, f"cannot parse {raw[:80]!r}",
                               "quote it, or write a number, a list [1, 2] or a mapping "
                               "{a: 1}")]) from None
        parts = path.split(".")
        if len(parts) > YAML_MAX_DEPTH:
            raise StudyError(f"override '{path[:200]}': the path is more than "
                             f"{YAML_MAX_DEPTH} fields deep",
                             [(path[:200], "too deep", "a study is about six levels deep; "
                               "check the path")])
        _set_path(out, parts, value, path)
    return out


__all__ = [
    "SLO", "ArrivalKind", "Availability", "Claims", "Concurrency", "Demand", "Endpoint",
    "Energy", "Execution", "ExitSpec", "Interruption", "LoadFamily", "LoadPoint", "LocalServer",
    "Output", "PlanSpec", "Platform", "Price", "Quality", "Study", "StudyCosts", "StudyPortability",
    "Sweep", "Target", "TargetCosts", "TargetPortability", "Tasks", "Training",
    "apply_overrides", "load_study",
    "study_from_dict", "study_to_yaml",
]
