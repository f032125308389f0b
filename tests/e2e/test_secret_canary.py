"""The API key never reaches a file or a stream, even from a server that echoes it (issue
30): its `Server` header, its `/version` answer, its completions, chat replies (content and
tool calls) and error bodies, its `/metrics` page and a 401 at preflight all carry the key
this server was sent. Every command path that contacts a server (run with telemetry,
preflight, validate --preflight, the agents: an
agent endpoint, an agent program of the user's that calls the server itself, and one that
calls it through the recording proxy, which holds the key), and those
that re-render or move what was stored (report in every format, export, import), run
against it; every file they write (Ray's own session folder included) and every stream they
print is searched for the key. A run whose load generators are Ray actors is searched the same
way, Ray's own session folder included, by the private-Ray test in
tests/integration/test_scaleout_ray.py (one private Ray started for both purposes)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers.canary import KEY, Cli, Echo, canary_study, echo_server, leaks
from helpers.cli import write_study


@pytest.fixture
def echo() -> Iterator[str]:
    with echo_server() as url:
        yield url


def test_no_command_stores_or_prints_a_key_the_server_echoes(
        tmp_path: Path, echo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANARY_KEY", KEY)
    study = canary_study(tmp_path, echo)
    cli = Cli(tmp_path)
    assert cli("validate", str(study), "--preflight") == 0
    assert cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress") in (0, 3)
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    stored = json.loads((run_dir / "result.json").read_text())
    fingerprint = stored["log"]["targets"][0]["fingerprint"]
    # The server did echo it: what the run kept says so, redacted.
    assert "[redacted]" in fingerprint["server"] and "[redacted]" in str(fingerprint["version"])
    for fmt in ("console", "md", "json", "html"):
        assert cli("report", str(run_dir), "--format", fmt, "--out",
                   str(tmp_path / f"report.{fmt}")) == 0
    assert cli("report", str(run_dir), "--recompute", "--format", "json") == 0
    assert cli("export", str(run_dir), "--out", str(tmp_path / "exported")) == 0
    exported = sorted((tmp_path / "exported").glob("*.json"))
    assert exported
    assert cli("import", *map(str, exported), "--format", "vllm", "--out",
               str(tmp_path / "imported")) == 0

    Echo.refuse_models = True  # a 401 that echoes the key, printed where CI logs keep it
    assert cli("validate", str(study), "--preflight") == 2
    assert cli("run", str(study), "--out", str(tmp_path / "runs2"), "--no-progress") == 2
    assert "401" in cli.last

    assert leaks(tmp_path) + cli.leaks() == []


PROGRAM = """
import json, os, sys, urllib.request
key = os.environ["CANARY_KEY"]
ask = urllib.request.Request(
    os.environ["ECHO_URL"] + "/chat/completions", data=json.dumps({"model": "m"}).encode(),
    headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
said = json.load(urllib.request.urlopen(ask))["choices"][0]["message"]["content"]
print("the model said", said, flush=True)
print("and to stderr:", said, file=sys.stderr, flush=True)
done = urllib.request.Request(os.environ["ACCEVAL_API_URL"] + "/tools/done",
                              data=json.dumps({"summary": said}).encode(),
                              headers={"content-type": "application/json"})
print(urllib.request.urlopen(done).read().decode())
"""

PROXIED = """
import json, os, sys, urllib.request
assert "CANARY_KEY" not in os.environ, "the proxy's key reached the program"
ask = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps({"model": "m"}).encode(),
    headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
             "Content-Type": "application/json"})
with urllib.request.urlopen(ask) as answer:
    said = json.load(answer)["choices"][0]["message"]["content"]
    print("the model said", said, "with", answer.headers["X-Echo"], flush=True)
done = urllib.request.Request(os.environ["ACCEVAL_API_URL"] + "/tools/done",
                              data=json.dumps({"summary": said}).encode(),
                              headers={"content-type": "application/json"})
print(urllib.request.urlopen(done).read().decode())
"""


def test_the_agents_store_or_print_no_key(
        tmp_path: Path, echo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent endpoint whose replies (content, a `done` call's summary) echo the key, one
    whose 401 echoes it, the user's own agent program that calls the server with the key
    from its environment, prints the reply and hands it to `done`, and one that calls it
    through the recording proxy, which holds the key (the server echoes it through the
    proxy, in the reply and a header)."""
    from acceval.agents.browser import unavailable

    assert unavailable() is None, unavailable()
    monkeypatch.setenv("CANARY_KEY", KEY)
    program = tmp_path / "agent.py"
    program.write_text(PROGRAM, encoding="utf-8")
    proxied = tmp_path / "proxied.py"
    proxied.write_text(PROXIED, encoding="utf-8")
    endpoint = {"base_url": f"{echo}/v1", "api_key_env": "CANARY_KEY"}
    study = write_study(tmp_path / "s.yaml", {"name": "canary-agents", "agents": {
        "trials": 1, "only": ["switch-language"], "max_steps": 3, "targets": [
            {"name": "model", "endpoint": {**endpoint, "model": "m"}},
            {"name": "refused", "endpoint": {**endpoint, "model": "refuse"}},
            {"name": "program", "command": {"argv": [sys.executable, str(program)],
                                            "env": {"ECHO_URL": f"{echo}/v1"}}},
            {"name": "proxied", "command": {"argv": [sys.executable, str(proxied)],
                                            "model": endpoint}}]}})
    cli = Cli(tmp_path)
    assert cli("validate", str(study), "--preflight") == 0, cli.last
    code = cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress")
    assert code in (0, 1, 3), cli.last
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    steps = pq.read_table(run_dir / "agents" / "steps.parquet").to_pylist()
    said = {r["target"]: r["arguments"] for r in steps if r["tool"] == "done"}
    # Each agent did reach the server and pass its echo on; what was kept is redacted.
    assert all("[redacted]" in said[n] for n in ("model", "program", "proxied")), said
    (program_log,) = (run_dir / "agents" / "logs").glob("program-*.log")
    assert program_log.read_text().count("[redacted]") == 2
    (proxied_log,) = (run_dir / "agents" / "logs").glob("proxied-*.log")
    assert proxied_log.read_text().count("[redacted]") == 2  # the reply, the header
    calls = pq.read_table(run_dir / "agents" / "model_calls.parquet").to_pylist()
    assert [(c["target"], c["status"], c["prompt_tokens"]) for c in calls] == [
        ("proxied", 200, 5)]
    assert "401" in (run_dir / "agents" / "log.json").read_text()
    for fmt in ("md", "html"):
        assert cli("report", str(run_dir), "--format", fmt, "--out",
                   str(tmp_path / f"report.{fmt}")) == 0
    assert leaks(tmp_path) + cli.leaks() == []
