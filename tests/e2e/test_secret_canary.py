"""The API key never reaches a file or a stream, even from a server that echoes it (issue
30): its `Server` header, its `/version` answer, its completions and error bodies, its
`/metrics` page and a 401 at preflight all carry the key this server was sent. Every command
that contacts a server (run with telemetry, preflight, validate --preflight), and those that
re-render or move what was stored (report in every format, export, import), run against it;
every file they write and every stream they print is searched for the key."""

from __future__ import annotations

import json
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
                self._send(200, json.dumps({"data": [{"id": "m", "owner": auth}]}).encode())
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
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).calls += 1
        if type(self).calls % 4 == 0:
            self._send(500, json.dumps({"error": f"overloaded for {auth}"}).encode())
            return
        body = {"id": "x", "object": "text_completion", "model": "m",
                "choices": [{"index": 0, "text": f"42 {auth}", "finish_reason": "stop"}],
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


def _study(tmp_path: Path, base: str) -> Path:
    return write_study(tmp_path / "s.yaml", {
        "name": "canary",
        "tasks": {"source": "builtin:arithmetic", "count": 8, "seed": 1, "max_tokens": 4},
        "targets": [{"name": "echo",
                     "endpoint": {"base_url": f"{base}/v1", "model": "m", "stream": False,
                                  "api_key_env": "CANARY_KEY"},
                     "telemetry": {"metrics_url": f"{base}/metrics", "interval_s": 0.2}}],
        "load": [{"concurrency": [1, 2]}],
    })


def test_no_command_stores_or_prints_a_key_the_server_echoes(
        tmp_path: Path, echo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANARY_KEY", KEY)
    study = _study(tmp_path, echo)
    streams: list[tuple[str, str]] = []

    def cli(*args: str) -> int:
        proc = run_cli(*args, cwd=tmp_path)
        streams.append((" ".join(args[:2]), proc.stdout + proc.stderr))
        return proc.returncode

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
    assert "401" in streams[-1][1]

    leaks = _leaks(tmp_path)
    leaks += [f"stream of `acceval {cmd}`" for cmd, text in streams if KEY in text]
    assert leaks == []
