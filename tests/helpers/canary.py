"""The secret canary's parts (tests/e2e/test_secret_canary.py, and the private-Ray run in
tests/integration/test_scaleout_ray.py): a server that echoes the API key it is sent
everywhere it can, a study against it, and searches of every file and stream for the key."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from helpers.cli import run_cli, write_study

KEY = "sk-canary-7c1f0e9a4b2d"


class Echo(BaseHTTPRequestHandler):
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


@contextlib.contextmanager
def echo_server() -> Iterator[str]:
    """A loopback server that echoes the key it is sent (:class:`Echo`); yields its URL."""
    Echo.refuse_models = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def leaks(folder: Path) -> list[str]:
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


def canary_study(tmp_path: Path, base: str, levels: tuple[int, ...] = (1, 2)) -> Path:
    return write_study(tmp_path / "s.yaml", {
        "name": "canary",
        "tasks": {"source": "builtin:arithmetic", "count": 8, "seed": 1, "max_tokens": 4},
        "targets": [{"name": "echo",
                     "endpoint": {"base_url": f"{base}/v1", "model": "m", "stream": False,
                                  "api_key_env": "CANARY_KEY"},
                     "telemetry": {"metrics_url": f"{base}/metrics", "interval_s": 0.2}}],
        "load": [{"concurrency": list(levels)}],
    })


class Cli:
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


def records_text(run_dir: Path) -> str:
    table = pq.read_table(run_dir / "records.parquet", columns=["output_text", "error_detail"])
    return json.dumps(table.to_pylist())
