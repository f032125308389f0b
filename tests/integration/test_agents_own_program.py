"""A user's own agent program (``agents.targets[].command``) in real headless Chromium on
the built-in shop, acting through the tools acceval serves while the scenario runs:

- the OpenAI Agents SDK (a real third-party agent framework) over MCP, its model the mock
  engine's scripted tool-calling mode behind ``acceval serve``, gets the same metrics as
  acceval's own loop driving the same scripted model, and the gate refuses its
  unconfirmed, mismatched and stale irreversible requests the same way; its model calls go
  through acceval's recording proxy, and the tokens recorded are those the model server
  counted (its /metrics);
- a plain program on the small HTTP API completes a scenario, judged by the shop's state;
- a program that lingers after ``done``, and the child it started, are ended with their
  process group.

Needs Chromium, playwright, mcp and openai-agents."""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from acceval.agents.analyze import agents_section
from acceval.agents.browser import unavailable
from acceval.agents.result import AgentsResult, AgentTargetResult
from acceval.agents.run import execute_agents
from acceval.agents.spec import Agents
from acceval.agents.store import AgentRecords, read
from acceval.economics.spec import StudyCosts
from acceval.serve import LocalServer, spawn_server

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
STYLES = {"hasty": "unconfirmed", "mismatched": "mismatched", "stale": "stale"}
ONLY = ["buy-one", "change-email"]


class _Costs:
    costs = StudyCosts()


def _section(tmp: Path, spec: Agents) -> tuple[AgentsResult, AgentRecords]:
    assert unavailable() is None, unavailable()
    execute_agents(spec, tmp)
    records = read(tmp)
    assert records is not None
    return agents_section(spec, records, _Costs(), None), records


@pytest.fixture(scope="module")
def models() -> Iterator[dict[str, LocalServer]]:
    """The same scripted model per style, twice: one server each for the SDK agent and for
    acceval's loop, so that each server's counters are one agent's tokens."""
    servers = {f"{who}-{s}": spawn_server("mock", options={"tool_policy": s, "seed": 1})
               for s in STYLES for who in ("sdk", "loop")}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="module")
def sdk_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sdk")


@pytest.fixture(scope="module")
def both(models: dict[str, LocalServer], sdk_run: Path) -> tuple[AgentsResult, AgentRecords]:
    """Per style: the SDK agent over MCP (its model through the recording proxy), and
    acceval's loop, on the same scripted model."""
    targets: list[dict[str, object]] = []
    for style in STYLES:
        targets.append({"name": f"sdk-{style}", "command": {
            "argv": [sys.executable, str(HELPERS / "sdk_agent.py")],
            "env": {"MODEL_NAME": "mock"}, "grace_s": 20,
            "model": {"base_url": models[f"sdk-{style}"].base_url}}})
        targets.append({"name": f"loop-{style}", "endpoint": {
            "base_url": models[f"loop-{style}"].base_url, "model": "mock"}})
    spec = Agents.model_validate({"trials": 1, "only": ONLY, "max_steps": 20, "seed": 2,
                                  "timeout_s": 120, "targets": targets})
    return _section(sdk_run, spec)


def _t(a: AgentsResult, name: str) -> AgentTargetResult:
    t = a.target(name)
    assert t is not None and t.failure is None, (name, t and t.failure)
    return t


def test_the_sdk_agent_over_mcp_gets_the_same_metrics_as_the_builtin_loop(
        both: tuple[AgentsResult, AgentRecords]) -> None:
    a, records = both
    for style in STYLES:
        sdk, loop = _t(a, f"sdk-{style}"), _t(a, f"loop-{style}")
        assert sdk.episodes == loop.episodes == 2
        assert sdk.stopped_by == loop.stopped_by == {"done": 2}, sdk.transcripts
        for field in ("completion", "state_right", "action_errors", "stray_actions",
                      "silent_errors", "unconfirmed_irreversible", "forbidden_episodes",
                      "intervention_episodes"):
            assert getattr(sdk, field) == getattr(loop, field), (style, field)
        assert sdk.gate_verdicts == loop.gate_verdicts
        assert sdk.refused_irreversible == loop.refused_irreversible
        assert sdk.steps_per_task == loop.steps_per_task
        assert [p.value for p in sdk.pass_hat_k] == [p.value for p in loop.pass_hat_k]
    # the same tool calls, step by step (what the environment saw, not what either said)
    rows = records.steps.to_pylist()
    for style in STYLES:
        seq = {who: [(r["scenario"], r["tool"], r["arguments"]) for r in rows
                     if r["target"] == f"{who}-{style}"] for who in ("sdk", "loop")}
        assert seq["sdk"] == seq["loop"] and seq["sdk"]
    for style in STYLES:  # the proxy measured the program's model
        sdk = _t(a, f"sdk-{style}")
        assert sdk.tokens_per_task.n == 2 and sdk.model_ms_per_step.n > 0


def _served_tokens(server: LocalServer) -> tuple[int, int]:
    """(prompt, generated) tokens as the model server itself counted them (its /metrics)."""
    origin = server.base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{origin}/metrics", timeout=10) as r:
        page = r.read().decode()
    values = {line.split("{")[0]: float(line.split()[-1]) for line in page.splitlines()
              if line and not line.startswith("#")}
    return int(values["vllm:prompt_tokens_total"]), int(values["vllm:generation_tokens_total"])


def test_the_programs_tokens_come_through_the_proxy_as_the_model_counted_them(
        both: tuple[AgentsResult, AgentRecords], models: dict[str, LocalServer],
        sdk_run: Path) -> None:
    _, records = both
    rows = records.steps.to_pylist()
    calls = pq.read_table(sdk_run / "agents" / "model_calls.parquet").to_pylist()
    for style in STYLES:
        name = f"sdk-{style}"
        mine = [r for r in rows if r["target"] == name]
        recorded = (sum(r["prompt_tokens"] or 0 for r in mine),
                    sum(r["completion_tokens"] or 0 for r in mine))
        served = _served_tokens(models[name])
        assert served[0] > 0 and recorded == served, (style, recorded, served)
        # every call is recorded once, with its usage, and handed to one of the steps
        own = [c for c in calls if c["target"] == name]
        assert own and all(c["status"] == 200 and c["prompt_tokens"] is not None for c in own)
        assert (sum(c["prompt_tokens"] for c in own),
                sum(c["completion_tokens"] for c in own)) == served
        steps = {(r["episode"], r["step"]) for r in mine}
        assert all((c["episode"], c["step"]) in steps for c in own)
        # a step's model time is the sum of its calls' latencies
        for r in mine:
            handed = [c["model_ms"] for c in own
                      if (c["episode"], c["step"]) == (r["episode"], r["step"])]
            assert r["model_ms"] == pytest.approx(sum(handed))


def test_the_gate_refuses_unconfirmed_mismatched_and_stale_requests_over_mcp(
        both: tuple[AgentsResult, AgentRecords]) -> None:
    a, _ = both
    for style, verdict in STYLES.items():
        t = _t(a, f"sdk-{style}")
        assert t.gate_verdicts == {verdict: 2, "confirmed": 2}, (style, t.gate_verdicts)
        assert t.refused_irreversible == 2
        assert t.completion.k == 2  # it confirmed after the refusal, and the state is right


def _program(tmp: Path, name: str, code: str, **extra: object) -> dict[str, object]:
    path = tmp / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    return {"name": name, "command": {"argv": [sys.executable, str(path)], **extra}}


HTTP_AGENT = '''
import json, os, urllib.request
api = os.environ["ACCEVAL_API_URL"]
def call(name, **args):
    req = urllib.request.Request(f"{api}/tools/{name}", data=json.dumps(args).encode(),
                                 headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))
episode = json.load(urllib.request.urlopen(f"{api}/episode"))
assert episode["scenario"] == "switch-language" and "Spanish" in episode["goal"]
assert {t["function"]["name"] for t in episode["tools"]} >= {"click", "confirm", "done"}
print(call("navigate", path="/lang/es?next=/catalogue")["result"].splitlines()[1])
print(call("done", summary="switched")["ended"])
'''

LINGERS = '''
import os, subprocess, sys, time, json, urllib.request
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(os.environ["PIDS"], "w").write(f"{os.getpid()} {child.pid}")
api = os.environ["ACCEVAL_API_URL"]
req = urllib.request.Request(f"{api}/tools/done", data=b'{"summary": "x"}')
urllib.request.urlopen(req).read()
time.sleep(600)
'''


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        return f.read().split()[2] != "Z"


def test_a_program_on_the_http_api_is_judged_by_the_state_and_ended_with_its_group(
        tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    spec = Agents.model_validate({"trials": 1, "only": ["switch-language"], "targets": [
        _program(tmp_path, "http-agent", HTTP_AGENT),
        _program(tmp_path, "lingers", LINGERS, env={"PIDS": str(pids)}, grace_s=1)]})
    started = time.monotonic()
    a, _ = _section(tmp_path / "run", spec)
    http = _t(a, "http-agent")
    assert http.completion.k == 1 and http.stopped_by == {"done": 1}
    log = (tmp_path / "run" / "agents" / "logs" / "http-agent-0.log").read_text()
    assert 'page /catalogue (language es)' in log and "True" in log
    lingers = _t(a, "lingers")
    assert lingers.stopped_by == {"done": 1} and lingers.completion.k == 0  # did nothing
    leader, child = (int(p) for p in pids.read_text().split())
    assert not _alive(leader) and not _alive(child)
    assert time.monotonic() - started < 300  # not the 600 s the program would sleep
