"""Bring your own flow: a scenario file describing flows on a web app the user runs.

A scenario file (YAML) lists flows on a loopback web app: where each starts, its goal, the
irreversible requests the gate guards (method and path pattern, the field naming the object),
the final-state check (an HTTP GET whose JSON must contain given values, or a DOM query on a
page), an optional reset request sent before each episode, and the number of actions its
shortest path takes. It is validated like a study: ``extra="forbid"``, errors naming the field
path in the file. :class:`FlowApp` is such an app as the episode's environment sees it
(:class:`acceval.agents.env.World`). docs/agents.md, *Bring your own flow*, has an example.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from acceval.agents.flowproxy import PerturbingProxy
from acceval.agents.gate import Guard
from acceval.errors import StudyError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class GuardSpec(_Model):
    """An irreversible request of the flow, which the gate guards."""

    action: str = Field(min_length=1, description="Its name, as the agent confirms it.")
    method: str = Field("POST", description="HTTP method.")
    path: str = Field(min_length=1, description="Path pattern, e.g. /notes/*/publish.")
    object_field: str | None = Field(None, description="The form, JSON or query field whose "
                                     "values a confirmation must name.")
    describe: str = Field("", description="What the object is, told to the agent.")


class HttpCheck(_Model):
    """The final state is right when GET ``url`` answers JSON containing ``json``."""

    url: str = Field(description="A URL or a path on the app.")
    json_: dict[str, Any] = Field(alias="json", description="Values the answer must hold "
                                  "(a subset: nested objects compared key by key).")


class DomCheck(_Model):
    """The final state is right when the page at ``url`` has an element matching
    ``selector`` (whose text contains ``text``, when given)."""

    url: str = Field(description="A URL or a path on the app.")
    selector: str = Field(min_length=1, description="A CSS selector.")
    text: str | None = Field(None, description="Text the element must contain.")


class Check(_Model):
    http: HttpCheck | None = None
    dom: DomCheck | None = None

    @model_validator(mode="after")
    def _one(self) -> Check:
        if (self.http is None) == (self.dom is None):
            raise ValueError("give exactly one of `http` (a GET whose JSON must match) or "
                             "`dom` (a CSS selector on a page)")
        return self


class ResetRequest(_Model):
    method: Literal["GET", "POST", "PUT", "DELETE"] = "POST"
    url: str = Field(description="A URL or a path on the app.")


class FlowSpec(_Model):
    id: str = Field(pattern=r"^[\w.-]+$", description="Short unique id.")
    start_url: str = Field(description="Where the episode starts (http://127.0.0.1:PORT/...).")
    goal: str = Field(min_length=1, description="The task, as the agent is told it.")
    steps: int = Field(ge=1, le=500, description="Browser actions on the shortest path.")
    irreversible: list[GuardSpec] = Field(default_factory=list)
    check: Check
    reset: ResetRequest | None = Field(None, description="Sent before each episode, so "
                                       "that trials start from the same state.")
    perturbations: list[Literal["popup", "expired_session", "layout"]] = Field(
        default_factory=list, description="Perturbations this flow may meet (the study's "
        "`agents.perturbations` picks among them): acceval's reverse proxy in front of the "
        "app switches them on (docs/agents.md).")

    @field_validator("start_url")
    @classmethod
    def _http(cls, v: str) -> str:
        u = urlsplit(v)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("start_url must be an http(s) URL, e.g. http://127.0.0.1:8080/")
        return v


class ScenarioFile(_Model):
    scenarios: list[FlowSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ScenarioFile:
        ids = [s.id for s in self.scenarios]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"scenario ids must be unique; repeated: {', '.join(dupes)}")
        return self


@dataclass(frozen=True, slots=True)
class FlowScenario:
    """One flow, as an episode runs it (the attributes a built-in scenario also has)."""

    id: str
    goal: str
    start: str                 # the path the episode starts on
    base_url: str              # the app's origin
    steps: int
    guards: tuple[Guard, ...]
    check_spec: Check
    reset: ResetRequest | None = None
    perturbations: tuple[str, ...] = ()
    signed_in: bool = False
    path: tuple[Any, ...] = field(default=())

    @property
    def irreversible(self) -> bool:
        return bool(self.guards)


def _flow(spec: FlowSpec) -> FlowScenario:
    u = urlsplit(spec.start_url)
    start = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return FlowScenario(
        id=spec.id, goal=spec.goal, start=start, base_url=f"{u.scheme}://{u.netloc}",
        steps=spec.steps, check_spec=spec.check, reset=spec.reset,
        perturbations=tuple(dict.fromkeys(spec.perturbations)),
        guards=tuple(Guard(g.action, g.method, g.path, g.object_field, g.describe)
                     for g in spec.irreversible))


def load_flows(path: Path) -> list[FlowScenario]:
    """The flows of a scenario file; a :class:`StudyError` naming each bad field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"{path}: cannot read the scenario file", [
            ("agents.scenarios", f"cannot read {path}: {exc.strerror}",
             "give the path of a scenario file (docs/agents.md)")]) from None
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: not YAML", [("agents.scenarios", str(exc), "")]) from None
    try:
        parsed = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        problems = [(f"{path.name}: " + ".".join(str(p) for p in e["loc"]),
                     e["msg"].removeprefix("Value error, "), "see docs/agents.md, *Bring your "
                     "own flow*") for e in exc.errors()]
        raise StudyError(f"{path}: {len(problems)} problem(s) in the scenario file",
                         problems) from None
    return [_flow(s) for s in parsed.scenarios]


def contains(have: Any, want: Any) -> bool:
    """Whether ``have`` holds ``want``: objects key by key (extra keys allowed), anything
    else equal."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and contains(have[k], v)
                                              for k, v in want.items())
    return bool(have == want)


class FlowApp:
    """A user's app as the episode's environment (:class:`acceval.agents.env.World`): no
    server-side record of effects (stray actions are not judged); an episode that meets a
    perturbation reaches the app through a :class:`PerturbingProxy` (:meth:`serve`); the
    final state is read by the flow's check."""

    def __init__(self) -> None:
        self.effects: list[dict[str, Any]] = []
        self.proxy: PerturbingProxy | None = None
        self.perturbation: Any = None    # the proxy's, once switched on

    async def serve(self, origin: str) -> str:
        """Put the perturbing proxy in front of the app; returns the address to browse."""
        self.proxy = PerturbingProxy(origin)
        return await self.proxy.start()

    async def close(self) -> None:
        if self.proxy is not None:
            await self.proxy.stop()

    async def begin(self, scenario: Any) -> tuple[str, str] | None:
        if scenario.reset is not None:
            import aiohttp

            url = urljoin(scenario.base_url + "/", scenario.reset.url)
            async with aiohttp.ClientSession() as s, s.request(
                    scenario.reset.method, url, timeout=aiohttp.ClientTimeout(total=30)) as r:
                if r.status >= 400:
                    raise RuntimeError(f"the reset request {url} answered HTTP {r.status}")
        return None

    def perturb(self, kind: str) -> None:
        if self.proxy is None:
            raise ValueError(f"perturbation {kind!r}: the episode was not served through "
                             "the perturbing proxy")
        self.proxy.perturb(kind)
        self.perturbation = self.proxy.perturbation

    def mark_onset(self) -> None:
        if self.proxy is not None:
            self.proxy.mark_onset()

    async def problem(self, scenario: Any, tab: Any) -> str | None:
        check: Check = scenario.check_spec
        if check.http is not None:
            return await _http_problem(scenario.base_url, check.http)
        assert check.dom is not None
        if tab is None:
            return "no page to check"
        why: str | None = await tab.check_dom(urljoin(scenario.base_url + "/", check.dom.url),
                                              check.dom.selector, check.dom.text)
        return why


async def _http_problem(base_url: str, check: HttpCheck) -> str | None:
    import aiohttp

    url = urljoin(base_url + "/", check.url)
    try:
        async with aiohttp.ClientSession() as s, s.get(
                url, timeout=aiohttp.ClientTimeout(total=30)) as r:
            text = await r.text()
            if r.status != 200:
                return f"GET {url} answered HTTP {r.status}"
    except aiohttp.ClientError as exc:
        return f"GET {url} failed: {exc}"
    try:
        have = json.loads(text)
    except ValueError:
        return f"GET {url} did not answer JSON"
    if contains(have, check.json_):
        return None
    return f"GET {url} answered {text[:300]}, which does not hold {json.dumps(check.json_)}"


__all__ = ["FlowApp", "FlowScenario", "ScenarioFile", "contains", "load_flows"]
