"""The API key never reaches a file or a stream, even from a server that echoes it (issue
30): its `Server` header, its `/version` answer, its completions, chat replies (content and
tool calls) and error bodies, its `/metrics` page and a 401 at preflight all carry the key
this server was sent. Every command path that contacts a server (run with telemetry,
preflight, validate --preflight, a run whose load generators are Ray actors, the agents: an
agent endpoint, an agent program of the user's that calls the server itself, and one that
calls it through the recording proxy, which holds the key), and those
that re-render or move what was stored (report in every format, export, import), run
against it; every file they write (Ray's own session folder included) and every stream they
print is searched for the key."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers.cli import run_cli, write_study

KEY = "sk-canary-7c1f0e9a4b2d"


class _Echo(BaseHTTPRequestHandler):
    """Answers with whatever Authorization it was sent, everywhere it can."""

    refuse_models = False
    calls = 0

    def version_string(self) -> str:  # the Server header
        return f"echo/1.0 ({self.headers.get('Authorization', '')})"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Echo", self.headers.get("Authorization", ""))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization", "")
        if self.path.endswith("/models"):
            if type(self).refuse_models:
                self._send(401, json.dumps({"error": f"bad key {auth}"}).encode())
            else:
                self._send(200, json.dumps({"data": [{"id": "m", "owner": auth},
                                                     {"id": "refuse", "owner": auth}]}).encode())
        elif self.path.endswith("/version"):
            self._send(200, json.dumps({"version": f"1.0 built for {auth}"}).encode())
        elif self.path.endswith("/metrics"):
            page = (f"# HELP vllm:num_requests_running {auth}\n"
                    "# TYPE vllm:num_requests_running gauge\n"
                    f'vllm:num_requests_running{{who="{auth}"}} 1\n')
            self._send(200, page.encode(), "text/plain; version=0.0.4")
        else:
            self._send(404, f"no {self.path} for {auth}".encode(), "text/plain")

    def do_POST(self) -> None:
        auth = self.headers.get("Authorization", "")
        sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/chat/completions"):
            self._chat(auth, json.loads(sent or b"{}"))
            return
        type(self).calls += 1
        if type(self).calls % 4 == 0:
            self._send(500, json.dumps({"error": f"overloaded for {auth}"}).encode())
            return
        body = {"id": "x", "object": "text_completion", "model": "m",
                "choices": [{"index": 0, "text": f"42 {auth}", "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}
        self._send(200, json.dumps(body).encode())

    def _chat(self, auth: str, sent: dict[str, object]) -> None:
        """An agent's model: it says the key, and calls `done` with the key as its summary
        (or, for the model named `refuse`, a 401 that echoes it)."""
        if sent.get("model") == "refuse":
            self._send(401, json.dumps({"error": f"bad key {auth}"}).encode())
            return
        call = {"id": "c1", "type": "function",
                "function": {"name": "done", "arguments": json.dumps({"summary": auth})}}
        body = {"id": "y", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": f"finished for {auth}",
                    "tool_calls": [call]}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}
        self._send(200, json.dumps(body).encode())


@pytest.fixture
def echo() -> Iterator[str]:
    _Echo.refuse_models = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _leaks(folder: Path) -> list[str]:
    """Every file under ``folder`` that holds the key: bytes for text, every string value of
    every column for Parquet (compressed pages would hide it from a byte search)."""
    out = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        if f.suffix == ".parquet":
            table = pq.read_table(f)
            for name in table.column_names:
                col = table[name]
                text = pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
                if text and any(KEY in (v or "") for v in col.to_pylist()):
                    out.append(f"{f}:{name}")
            continue
        if KEY.encode() in f.read_bytes():
            out.append(str(f))
    return out


def _study(tmp_path: Path, base: str, levels: tuple[int, ...] = (1, 2)) -> Path:
    return write_study(tmp_path / "s.yaml", {
        "name": "canary",
        "tasks": {"source": "builtin:arithmetic", "count": 8, "seed": 1, "max_tokens": 4},
        "targets": [{"name": "echo",
                     "endpoint": {"base_url": f"{base}/v1", "model": "m", "stream": False,
                                  "api_key_env": "CANARY_KEY"},
                     "telemetry": {"metrics_url": f"{base}/metrics", "interval_s": 0.2}}],
        "load": [{"concurrency": list(levels)}],
    })


class _Cli:
    """Runs the command line, keeping what each command printed."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.streams: list[tuple[str, str]] = []

    def __call__(self, *args: str) -> int:
        proc = run_cli(*args, cwd=self.cwd)
        self.streams.append((" ".join(args[:2]), proc.stdout + proc.stderr))
        return proc.returncode

    def leaks(self) -> list[str]:
        return [f"stream of `acceval {cmd}`" for cmd, text in self.streams if KEY in text]

    @property
    def last(self) -> str:
        return self.streams[-1][1]


def _records_text(run_dir: Path) -> str:
    table = pq.read_table(run_dir / "records.parquet", columns=["output_text", "error_detail"])
    return json.dumps(table.to_pylist())


def test_no_command_stores_or_prints_a_key_the_server_echoes(
        tmp_path: Path, echo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANARY_KEY", KEY)
    study = _study(tmp_path, echo)
    cli = _Cli(tmp_path)
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

    _Echo.refuse_models = True  # a 401 that echoes the key, printed where CI logs keep it
    assert cli("validate", str(study), "--preflight") == 2
    assert cli("run", str(study), "--out", str(tmp_path / "runs2"), "--no-progress") == 2
    assert "401" in cli.last

    assert _leaks(tmp_path) + cli.leaks() == []


@pytest.mark.timing  # Ray's node must come up within Ray's own 30 s: on a loaded host it may not
def test_a_run_with_ray_load_generators_stores_or_prints_no_key(
        tmp_path: Path, echo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --clients 2`: the records cross Ray (the actors read the key from their
    environment and stream what the server echoed); the private Ray's session folder, put
    under the test's own folder by RAY_TMPDIR, is searched too."""
    pytest.importorskip("ray")
    monkeypatch.setenv("CANARY_KEY", KEY)
    ray_tmp = Path(tempfile.mkdtemp(prefix="acr-", dir="/tmp"))  # Ray's sockets: short paths
    monkeypatch.setenv("RAY_TMPDIR", str(ray_tmp))
    cli = _Cli(tmp_path)
    try:
        study = _study(tmp_path, echo, levels=(2,))
        code = cli("run", str(study), "--out", str(tmp_path / "runs"), "--no-progress",
                   "--clients", "2")
        if code == 1 and "could not start or join a private Ray" in cli.last:
            pytest.skip(f"Ray's node did not come up on this host: {cli.last[-200:]}")
        assert code in (0, 3), cli.last
        (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
        log = json.loads((run_dir / "result.json").read_text())["log"]
        assert log["execution"]["backend"] == "ray"
        assert len(log["targets"][0]["load_generators"]) == 2
        # The echo came through the generators, and was kept redacted.
        assert "[redacted]" in _records_text(run_dir)
        assert list(ray_tmp.glob("ray/session_*/logs/*")), "the run's Ray logged elsewhere"
        assert cli("report", str(run_dir), "--format", "md") == 0
        leaks = _leaks(tmp_path) + _leaks(ray_tmp) + cli.leaks()
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert leaks == []


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
    cli = _Cli(tmp_path)
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
    assert _leaks(tmp_path) + cli.leaks() == []
