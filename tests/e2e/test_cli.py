"""The CLI end to end: validate, run, report, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from acceval.results.store import read_records
from helpers.cli import mock_target, run_cli, write_study


def _study(**over: object) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "e2e",
        "tasks": {"source": "builtin:arithmetic", "count": 40, "seed": 3, "max_tokens": 8},
        "targets": [
            mock_target("right", ttft_ms=5, itl_ms=1, answers="@tasks", correct_fraction=1.0),
            mock_target("wrong", ttft_ms=1, itl_ms=1, answers="@tasks", correct_fraction=0.0),
        ],
        "load": [{"concurrency": [4], "max_duration_s": 20}],
        "slo": {"ttft_ms": 500},
        "quality": {"min_accuracy": 0.9},
    }
    data.update(over)
    return data


def test_help_everywhere(cli_dir: Path) -> None:
    for cmd in ([], ["run"], ["serve"], ["validate"], ["report"]):
        res = run_cli(*cmd, "--help", cwd=cli_dir)
        assert res.returncode == 0, res.stderr
        assert "Usage:" in res.stdout


def test_validate_names_fields_and_exits_2(cli_dir: Path) -> None:
    bad = _study(load=[{"concurency": [1]}], slo={"ttft_ms": -1})
    res = run_cli("validate", str(write_study(cli_dir / "s.yaml", bad)), cwd=cli_dir)
    assert res.returncode == 2
    assert "load[0].concurency" in res.stderr and "did you mean 'concurrency'" in res.stderr
    assert "slo.ttft_ms" in res.stderr
    assert "Traceback" not in res.stderr


def test_validate_ok(cli_dir: Path) -> None:
    res = run_cli("validate", str(write_study(cli_dir / "s.yaml", _study())), cwd=cli_dir)
    assert res.returncode == 0, res.stderr
    # one family, not "1 load families"; and how long the load may hold the endpoints
    assert ("ok (2 targets, 1 load family; 2 load points, at most 40 s of load at their "
            "max_duration_s)") in res.stdout


def test_unknown_command_line_option_is_usage_error(cli_dir: Path) -> None:
    res = run_cli("run", "--bogus", cwd=cli_dir)
    assert res.returncode == 2


def test_run_writes_folder_and_gates_exit_3(cli_dir: Path) -> None:
    study = _study(quality={"min_accuracy": 0.9, "fail_exit": True})
    path = write_study(cli_dir / "s.yaml", study)
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress", cwd=cli_dir)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "quality gate failed for: wrong" in res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    assert {"study.yaml", "records.parquet", "result.json"} <= {p.name for p in run_dir.iterdir()}
    table = pq.read_table(run_dir / "records.parquet")
    assert table.num_rows == 80  # 40 tasks x 2 targets, nothing lost
    result = json.loads((run_dir / "result.json").read_text())
    assert result["schema_version"] == 2
    gates = {t["name"]: t["gate"]["passed"] for t in result["targets"]}
    assert gates == {"right": True, "wrong": False}
    acc = {t["name"]: t["accuracy"]["accuracy"] for t in result["targets"]}
    assert acc == {"right": 1.0, "wrong": 0.0}

    md = run_cli("report", str(run_dir), "--format", "md", cwd=cli_dir)
    assert md.returncode == 0, md.stderr
    assert "| right | pass |" in md.stdout and "| wrong | FAIL |" in md.stdout
    again = run_cli("report", str(run_dir), "--format", "json", "--recompute", cwd=cli_dir)
    recomputed = json.loads(again.stdout)
    assert [t["accuracy"] for t in recomputed["targets"]] == [
        t["accuracy"] for t in result["targets"]
    ]


def test_api_key_is_never_written(cli_dir: Path) -> None:
    import os

    from acceval.serve import spawn_server

    secret = "sk-test-SECRET-1234567890"
    with spawn_server("mock", options={"ttft_ms": 1}) as server:
        study = _study(targets=[{
            "name": "keyed",
            "endpoint": {"base_url": server.base_url, "model": "mock",
                         "api_key_env": "ACCEVAL_TEST_KEY"},
        }], quality={})
        path = write_study(cli_dir / "s.yaml", study)
        os.environ["ACCEVAL_TEST_KEY"] = secret
        try:
            res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                          cwd=cli_dir)
        finally:
            del os.environ["ACCEVAL_TEST_KEY"]
    assert res.returncode == 0, res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["targets"][0]["points"][0]["summary"]["ok"] == 40  # the key was accepted
    for p in (cli_dir / "runs").rglob("*"):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p
    assert secret not in res.stdout + res.stderr


def test_missing_key_variable_is_a_clear_error(cli_dir: Path) -> None:
    study = _study(targets=[{
        "name": "remote",
        "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                     "api_key_env": "ACCEVAL_NOT_SET_ANYWHERE"},
    }], quality={})
    path = write_study(cli_dir / "s.yaml", study)
    res = run_cli("validate", str(path), cwd=cli_dir)
    assert res.returncode == 0
    assert "ACCEVAL_NOT_SET_ANYWHERE is not set" in res.stdout
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress", cwd=cli_dir)
    assert res.returncode == 2  # the preflight stops it before anything is measured
    assert "target 'remote'" in res.stderr and "ACCEVAL_NOT_SET_ANYWHERE" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (cli_dir / "runs").exists()
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                  "--skip-preflight", cwd=cli_dir)
    assert res.returncode == 1
    assert "ACCEVAL_NOT_SET_ANYWHERE" in res.stderr
    assert "Traceback" not in res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    assert "ACCEVAL_NOT_SET_ANYWHERE" in result["targets"][0]["failure"]


def test_report_what_if_recomputes_without_rerunning(cli_dir: Path) -> None:
    study = _study(targets=[
        {**mock_target("right", ttft_ms=5, itl_ms=1, answers="@tasks", correct_fraction=1.0),
         "price": {"usd_per_hour": 1.0}},
    ], quality={})
    path = write_study(cli_dir / "s.yaml", study)
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress", cwd=cli_dir)
    assert res.returncode == 0, res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    base = json.loads((run_dir / "result.json").read_text())
    what = run_cli("report", str(run_dir), "--format", "json",
                   "--set", "targets.right.price.usd_per_hour=3", cwd=cli_dir)
    assert what.returncode == 0, what.stderr
    new = json.loads(what.stdout)
    old_cost = base["targets"][0]["economics"]["points"][0]["bill"]["cost_per_correct_usd"]
    new_cost = new["targets"][0]["economics"]["points"][0]["bill"]["cost_per_correct_usd"]
    assert new_cost > old_cost * 2  # the compute item tripled
    assert new["warnings"][0].startswith("what-if:")
    # the stored result is untouched
    assert json.loads((run_dir / "result.json").read_text()) == base
    html = run_cli("report", str(run_dir), "--format", "html", "--set", "slo.ttft_ms=1",
                   cwd=cli_dir)
    assert html.returncode == 0 and (run_dir / "report-whatif.html").exists()


def test_user_catalog_extends_the_builtin_one(cli_dir: Path) -> None:
    (cli_dir / "my-catalog.yaml").write_text(
        "prices:\n"
        "  - {id: my-cpu-box, hardware: cpu, provider: self, pricing: on_demand,\n"
        "     usd_per_chip_hour: 0.5,\n"
        "     source: 'our invoice', date: '2026-11'}\n", encoding="utf-8")
    study = _study(targets=[
        {**mock_target("right", ttft_ms=2, answers="@tasks", correct_fraction=1.0),
         "price": {"catalog": "my-cpu-box"}},
    ], quality={}, costs={"catalog": "my-catalog.yaml"})
    path = write_study(cli_dir / "s.yaml", study)
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress", cwd=cli_dir)
    assert res.returncode == 0, res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    econ = json.loads((run_dir / "result.json").read_text())["targets"][0]["economics"]
    bill = econ["points"][0]["bill"]
    rate = bill["inputs"]["usd_per_chip_hour"]
    assert rate["value"] == 0.5 and rate["origin"] == "catalog"
    assert "our invoice" in str(rate["source"])


def test_artifact_check_command_passes_and_fails_on_a_corrupted_copy(cli_dir: Path) -> None:
    from acceval.models import resolve_model
    from helpers.artifacts import corrupt_copy

    ok = run_cli("artifact-check", "builtin:small", "--prompts", "8", cwd=cli_dir)
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["verdict"] == "pass" and out["prompts"] == 8
    # the keys it has always printed; logits_non_finite only when logits were not finite
    assert list(out)[-3:] == ["verdict", "reasons", "wall_s"] and len(out) == 18
    bad = corrupt_copy(resolve_model("builtin:small").root, cli_dir / "small-copy")
    res = run_cli("artifact-check", str(bad), "--prompts", "8", cwd=cli_dir)
    assert res.returncode == 3
    assert "checksum mismatch" in res.stdout + res.stderr


def test_a_target_that_fails_every_request_makes_run_exit_1(cli_dir: Path) -> None:
    study = _study(targets=[
        mock_target("broken", error_rate=1.0, error_kinds=["http500"]),
        mock_target("fine", ttft_ms=1),
    ], quality={})
    path = write_study(cli_dir / "s.yaml", study)
    res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress", cwd=cli_dir)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "every request failed for: broken" in res.stderr
    assert "Traceback" not in res.stderr
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    assert (run_dir / "result.json").exists() and (run_dir / "report.html").exists()


def test_an_api_key_echoed_by_a_server_is_redacted_from_the_records(cli_dir: Path) -> None:
    import os
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    secret = "sk-echo-SECRET-0987654321"

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # /v1/models, for the preflight
            self._send(200, b'{"object": "list", "data": [{"id": "m"}]}')

        def do_POST(self) -> None:  # every request fails and echoes what it was sent
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            auth = self.headers.get("Authorization", "")
            self._send(401, json.dumps({"error": f"bad key: {auth}"}).encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        study = _study(targets=[{
            "name": "echo",
            "endpoint": {"base_url": f"http://127.0.0.1:{server.server_port}/v1",
                         "model": "m", "api_key_env": "ACCEVAL_ECHO_KEY"},
        }], quality={}, tasks={"source": "builtin:arithmetic", "count": 5, "seed": 1,
                               "max_tokens": 4})
        path = write_study(cli_dir / "s.yaml", study)
        os.environ["ACCEVAL_ECHO_KEY"] = secret
        try:
            res = run_cli("run", str(path), "--out", str(cli_dir / "runs"), "--no-progress",
                          cwd=cli_dir)
        finally:
            del os.environ["ACCEVAL_ECHO_KEY"]
    finally:
        server.shutdown()
        server.server_close()
    assert res.returncode == 1  # every request failed
    (run_dir,) = [p for p in (cli_dir / "runs").iterdir() if p.is_dir()]
    table = read_records(run_dir)
    details = [d for d in table["error_detail"].to_pylist() if d]
    assert details and all("[redacted]" in d for d in details)
    for p in (cli_dir / "runs").rglob("*"):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p
    assert secret not in res.stdout + res.stderr
