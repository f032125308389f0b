"""The study-file section the agents own: ``agents:``, workflows measured end to end.

Which scenarios run, how often, under which perturbations and limits, and against which
agent targets. An agent target is reached through the OpenAI chat API with tools (any
endpoint serving a tool-calling model), or is the built-in scripted policy, which acceval
serves itself through the same API. Each target has its own price, so a correct workflow is
billed like every other correct task (docs/agents.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from acceval.economics.spec import Platform, Price, TargetCosts
from acceval.names import Name
from acceval.targets.spec import Endpoint, checked_base_url, checked_env_name

Perturbation = Literal["expired_session", "popup", "layout", "language"]
PERTURBATIONS: tuple[Perturbation, ...] = ("expired_session", "popup", "layout", "language")
#: How every report names the built-in scripted policy.
SCRIPTED_LABEL = "scripted policy"
#: The scripted policy's habits (docs/agents.md, *Scripted policies*).
Style = Literal["careful", "hasty", "liar", "reckless", "mismatched", "stale", "asks_human"]
STYLES: tuple[Style, ...] = ("careful", "hasty", "liar", "reckless", "mismatched", "stale",
                             "asks_human")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ScriptedPolicy(_Model):
    """The built-in scripted policy: it follows each scenario's reference path, recovers from
    the perturbations it recognises, and errs at the declared rates per step. It is a test
    double for a tool-calling model, and every report labels it as one."""

    wrong_click: float = Field(0.0, ge=0, le=1, description="Chance per browser action "
                               "(click, type or navigate) of acting on another element (or "
                               "page) than the intended one, unnoticed.")
    skip_confirm: float = Field(0.0, ge=0, le=1, description="Chance per irreversible action "
                                "of performing it without calling `confirm` first.")
    premature_done: float = Field(0.0, ge=0, le=1, description="Chance per browser action of "
                                  "saying `done` instead of acting (a premature done).")
    think_ms: float = Field(0.0, ge=0, le=10_000, description="Declared thinking time per "
                            "reply, in ms (the server waits this long before answering).")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of the policy's own errors.")
    style: Style = Field("careful", description="Its habit at irreversible actions and "
                         "ends: careful (confirms right before), hasty (acts unconfirmed "
                         "first, confirms after a refusal), reckless (never confirms, says "
                         "done after a refusal), mismatched (first confirms another action), "
                         "stale (confirms a step too early), liar (says done instead of the "
                         "first irreversible action), asks_human (asks a human once, then "
                         "careful). The error rates above apply on top.")


class Gate(_Model):
    """The confirmation gate on irreversible requests (docs/agents.md, *The gate*)."""

    mode: Literal["enforce", "count"] = Field(
        "enforce", description="enforce: an irreversible request without a matching "
        "confirmation right before it is refused (never reaches the app); count: it goes "
        "through, and what would have been refused is recorded.")
    window_steps: int = Field(1, ge=1, le=100, description="How many steps before the "
                              "irreversible action its confirmation may come (1: the "
                              "previous step).")


class LocalEngine(_Model):
    """A local engine acceval starts behind its OpenAI-compatible server for this agent
    target (``acceval serve``'s engines; the run's composer starts it)."""

    engine: str = Field(description="Engine name, e.g. mock.")
    options: dict[str, Any] = Field(default_factory=dict, description="Engine options (for "
                                    "mock: tool_policy, seed, ...).")


class ProxiedModel(_Model):
    """The model endpoint a user's agent program calls, reached through acceval's recording
    proxy: acceval serves an OpenAI-compatible proxy on 127.0.0.1 during each episode, hands
    its URL to the program (OPENAI_BASE_URL, ACCEVAL_MODEL_URL), forwards every request here
    and records each call's tokens (from the answer's `usage`) and latency, so the episode's
    tokens and model time are measured as for acceval's own loop."""

    base_url: str = Field(description="The upstream's base URL up to and including /v1, "
                          "e.g. http://127.0.0.1:8000/v1; the program's requests to "
                          "{proxy}/v1/PATH go to {base_url}/PATH.")
    api_key_env: str | None = Field(None, description="Name of the environment variable "
                                    "holding the upstream's API key. The proxy sends it and "
                                    "never writes it anywhere; the variable is removed from "
                                    "the program's environment (it needs no key of its own).")
    timeout_s: float = Field(300.0, gt=0, le=3600, description="Per-request timeout of the "
                             "upstream, whole response.")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return checked_base_url(v)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        return checked_env_name(v)


class AgentCommand(_Model):
    """A user's own agent program, launched once per episode in its own process group. Its
    environment holds ACCEVAL_MCP_URL (the tools over MCP), ACCEVAL_API_URL (the same over
    plain HTTP), ACCEVAL_GOAL (the task message) and ACCEVAL_SYSTEM_PROMPT; it acts through
    the tools until it calls `done` or exits (docs/agents.md, *Bring your own agent*)."""

    argv: list[str] = Field(min_length=1, description="The program and its arguments, e.g. "
                            "[python, my_agent.py].")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment "
                                "variables for the program (never secrets: name them in "
                                "your own environment instead).")
    grace_s: float = Field(5.0, gt=0, le=600, description="After `done`, how long the "
                           "program may take to exit before its process group is ended.")
    model: ProxiedModel | None = Field(None, description="The model endpoint the program "
                                       "calls, through acceval's recording proxy (its URL in "
                                       "OPENAI_BASE_URL): the episode's tokens and model time "
                                       "are then measured. Without it they are not.")

    @model_validator(mode="before")
    @classmethod
    def _argv_alone(cls, v: Any) -> Any:
        return {"argv": v} if isinstance(v, list) else v


class AgentTarget(_Model):
    """One agent under test: a model behind an endpoint, or the scripted policy."""

    name: Name = Field(
        description="Short unique name used in records and reports.")
    endpoint: Endpoint | None = Field(None, description="An OpenAI-compatible endpoint "
                                      "serving a tool-calling model (chat API with tools).")
    policy: ScriptedPolicy | None = Field(None, description="Serve the built-in scripted "
                                          "policy for this target instead of an endpoint.")
    serve: LocalEngine | None = Field(None, description="A local engine acceval starts for "
                                      "this target, e.g. the mock with options.tool_policy "
                                      "(a scripted tool-calling model).")
    command: AgentCommand | None = Field(None, description="Your own agent program, launched "
                                         "per episode; it acts through the tools served "
                                         "over MCP and HTTP (`[program, args...]` for short).")
    platform: Platform = Field(default_factory=Platform, description="Hardware facts.")
    price: Price | None = Field(None, description="What a chip costs per hour; without it "
                                "the target gets no cost per correct workflow.")
    costs: TargetCosts = Field(default_factory=TargetCosts,
                               description="Bill items beyond chip-hours, utilization.")

    @model_validator(mode="after")
    def _one_source(self) -> AgentTarget:
        given = [k for k in ("endpoint", "policy", "serve", "command")
                 if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("an agent target needs exactly one of `endpoint` (a tool-calling "
                             "model), `policy` (the built-in scripted policy), `serve` (a "
                             "local engine) or `command` (your own agent program); it has "
                             f"{', '.join(given) or 'none'}")
        return self

    @property
    def source(self) -> str:
        """How reports name where the agent's replies come from."""
        if self.policy is not None:
            return SCRIPTED_LABEL
        if self.serve is not None:
            style = self.serve.options.get("tool_policy")
            return f"local {self.serve.engine} engine" + (
                f" ({SCRIPTED_LABEL}: {style})" if style else "")
        if self.command is not None:
            return "command: " + " ".join(self.command.argv)
        assert self.endpoint is not None
        return f"{self.endpoint.base_url} ({self.endpoint.model})"

    @property
    def key_env(self) -> str | None:
        """The environment variable holding the API key this target's model is reached with
        (its endpoint's, or its program's proxied model's): redacted wherever acceval keeps
        or prints text."""
        if self.endpoint is not None:
            return self.endpoint.api_key_env
        if self.command is not None and self.command.model is not None:
            return self.command.model.api_key_env
        return None

    @property
    def scripted(self) -> bool:
        return self.policy is not None or (
            self.serve is not None and self.serve.options.get("tool_policy") is not None)

    # What the bill reads of a target beyond its price (acceval.economics.inputs.BilledTarget).
    @property
    def portability(self) -> None:
        return None

    @property
    def availability(self) -> None:
        return None


class Perturbations(_Model):
    """Which perturbations episodes meet, and how many episodes meet one."""

    kinds: list[Perturbation] = Field(
        default_factory=list, description="Any of expired_session, popup, layout, language.")
    share: float = Field(0.5, ge=0, le=1, description="Share of episodes that meet one "
                         "perturbation (drawn from `kinds`) after a random step.")


class Agents(_Model):
    """Agent workflows on the built-in web application, measured end to end."""

    scenarios: str = Field(
        "builtin:shop", min_length=1, description="The scenario set: `builtin:shop` (the "
        "built-in shop), `builtin:NAME` for a scenario pack installed in the "
        "`acceval.scenarios` plugin group, or the path of a scenario file describing flows "
        "on your own web app (relative to the study file; docs/agents.md).")
    only: list[str] = Field(default_factory=list,
                            description="Run only these scenario ids (default: all).")
    trials: int = Field(3, ge=1, le=1000, description="Trials per scenario and target "
                        "(pass^k is reported for k up to this).")
    perturbations: Perturbations = Field(default_factory=Perturbations,
                                         description="Perturbations switched on.")
    gate: Gate = Field(default_factory=Gate, description="The confirmation gate (`count` "
                       "or `enforce` alone is short for its mode).")
    max_steps: int = Field(30, ge=1, le=500, description="Tool calls per episode before it "
                           "is stopped.")
    timeout_s: float = Field(120.0, gt=0, le=3600, description="Wall time per episode before "
                             "it is stopped.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of the episode plan (which "
                      "perturbation after which step); the same for every target.")
    targets: list[AgentTarget] = Field(min_length=1, description="The agents to compare.")

    @field_validator("gate", mode="before")
    @classmethod
    def _gate_mode(cls, v: Any) -> Any:
        return {"mode": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _check(self) -> Agents:
        from acceval.agents.scenarios import SCENARIOS

        unknown = [s for s in self.only if s not in SCENARIOS]
        if unknown and self.scenarios == "builtin:shop":
            raise ValueError(f"agents.only names unknown scenario(s) {', '.join(unknown)}; "
                             f"known: {', '.join(SCENARIOS)}")
        names = [t.name for t in self.targets]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"agent target names must be unique; repeated: {', '.join(dupes)}")
        return self


__all__ = ["PERTURBATIONS", "SCRIPTED_LABEL", "STYLES", "AgentCommand", "AgentTarget", "Agents",
           "Gate", "LocalEngine", "Perturbation", "Perturbations", "ProxiedModel", "ScriptedPolicy",
           "Style"]
