"""What `acceval run` would crash on, `acceval validate` refuses: each case names the field
(or the file) and exits 2, without a traceback."""

from __future__ import annotations

import contextlib
import copy
import io
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from acceval.cli import entry
from acceval.input_files import YAML_MAX_DEPTH

GOOD: dict[str, Any] = {
    "name": "gaps",
    "tasks": {"source": "builtin:arithmetic", "count": 3},
    "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}],
    "load": [{"concurrency": [1], "max_duration_s": 5}],
}


def _with(path: str, value: Any) -> dict[str, Any]:
    """GOOD with ``value`` at a dotted path (list items by index)."""
    data = copy.deepcopy(GOOD)
    node: Any = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[int(last) if isinstance(node, list) else last] = value
    return data


def _endpoint(**fields: Any) -> dict[str, Any]:
    return _with("targets.0.endpoint", {**GOOD["targets"][0]["endpoint"], **fields})


STUDIES: dict[str, tuple[dict[str, Any], str]] = {
    "url without host": (_endpoint(base_url="http://"), "targets[0].endpoint.base_url"),
    "port out of range": (_endpoint(base_url="http://127.0.0.1:99999/v1"),
                          "targets[0].endpoint.base_url"),
    "bad IPv6 literal": (_endpoint(base_url="http://[::1"), "targets[0].endpoint.base_url"),
    "not an IPv6 address": (_endpoint(base_url="http://[zz]:80/v1"),
                            "targets[0].endpoint.base_url"),
    "ftp scheme": (_endpoint(base_url="ftp://host/v1"), "targets[0].endpoint.base_url"),
    "file scheme": (_endpoint(base_url="file:///etc/passwd"), "targets[0].endpoint.base_url"),
    "credentials in the url": (_endpoint(base_url="http://u:secret@127.0.0.1:9/v1"),
                               "targets[0].endpoint.base_url"),
    "space in the url": (_endpoint(base_url="http://a b/v1"), "targets[0].endpoint.base_url"),
    "nan rate": (_with("load", [{"poisson_rps": [math.nan]}]), "load[0].poisson_rps[0]"),
    "inf rate": (_with("load", [{"constant_rps": [math.inf]}]), "load[0].constant_rps[0]"),
    "rate x duration too many sends": (_with("load", [{"poisson_rps": [1e308]}]), "load[0]"),
    "nan price": (_with("targets.0.price", {"usd_per_hour": math.nan}),
                  "targets[0].price.usd_per_hour"),
    "inf slo bound": (_with("slo", {"ttft_ms": math.inf}), "slo.ttft_ms"),
    "nan percentile": (_with("slo", {"percentile": math.nan}), "slo.percentile"),
    "inf max duration": (_with("load", [{"concurrency": [1], "max_duration_s": math.inf}]),
                         "load[0].max_duration_s"),
    "1e308 max duration": (_with("load", [{"concurrency": [1], "max_duration_s": 1e308}]),
                           "load[0].max_duration_s"),
    "31 days of warm-up": (_with("load", [{"concurrency": [1], "warmup_s": 31 * 86_400}]),
                           "load[0].warmup_s"),
    "nan timeout": (_endpoint(timeout_s=math.nan), "targets[0].endpoint.timeout_s"),
    "inf sweep step": (_with("sweep", {"point_s": math.inf}), "sweep.point_s"),
    "inf interruption": (_with("interruption", {"target": "a", "at_s": math.inf, "down_s": 1,
                                                "action": "command", "command": "true"}),
                         "interruption.at_s"),
    "negative seed": (_with("seed", -1), "seed"),
    "seed past 2**32": (_with("seed", 2**32), "seed"),
    "negative task seed": (_with("tasks.seed", -1), "tasks.seed"),
    "300-character name": (_with("name", "a" * 300), "name"),
    "name with a trailing newline": (_with("name", "gaps\n"), "name"),
    "target name with a newline": (_with("targets.0.name", "a\n"), "targets[0].name"),
    "name with a path separator": (_with("name", "a/b"), "name"),
    "name with a control character": (_with("name", "a\x01b"), "name"),
    "non-latin-1 header value": (_endpoint(headers={"X-Team": "☃"}),
                                 "targets[0].endpoint.headers.X-Team"),
    "header value with a line break": (_endpoint(headers={"X-Team": "a\r\nInjected: 1"}),
                                       "targets[0].endpoint.headers.X-Team"),
    "header name with a space": (_endpoint(headers={"X Team": "a"}),
                                 "targets[0].endpoint.headers"),
    "duplicate Content-Length": (_endpoint(headers={"Content-Length": "1"}),
                                 "targets[0].endpoint.headers"),
    "api_key_env not a variable name": (_endpoint(api_key_env="A=B"),
                                        "targets[0].endpoint.api_key_env"),
    "a billion tasks": (_with("tasks.count", 10**9), "tasks.count"),
    "output.dir under /proc": (_with("output", {"dir": "/proc/acceval"}), "output.dir"),
    "output.dir under /sys": (_with("output", {"dir": "/sys/acceval"}), "output.dir"),
    "output.dir is /dev": (_with("output", {"dir": "/dev"}), "output.dir"),
    "output.dir with a NUL": (_with("output", {"dir": "a\x00b"}), "output.dir"),
    "task file is /dev/zero": (_with("tasks", {"source": "jsonl:/dev/zero"}), "tasks.source"),
    "task file is a folder": (_with("tasks", {"source": "jsonl:."}), "tasks.source"),
    "catalog is /dev/zero": (_with("costs", {"catalog": "/dev/zero"}), "costs.catalog"),
    "demand CSV is /dev/zero": (_with("demand", {"profile": "csv:/dev/zero"}),
                                "demand.profile"),
}


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = entry(list(argv))
    return code, out.getvalue()


def _validate(path: Path) -> str:
    code, out = _cli("validate", str(path))
    assert code == 2, out
    assert out.startswith("acceval: error: ") and "Traceback" not in out, out
    return out


@pytest.mark.parametrize("case", sorted(STUDIES))
def test_validate_names_the_field(tmp_path: Path, case: str) -> None:
    if case.startswith(("output.dir under /", "output.dir is /")) and not Path("/dev").is_dir():
        pytest.skip("no /proc, /sys or /dev here")
    data, field = STUDIES[case]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    out = _validate(path)
    assert f"  - {field}" in out, out


def test_output_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_with("output", {"dir": "taken"})), encoding="utf-8")
    assert "  - output.dir: " in _validate(path)


def test_an_api_key_that_cannot_be_a_header_names_its_variable_not_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCEVAL_GAPS_KEY", "sk-☃-secret")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_endpoint(api_key_env="ACCEVAL_GAPS_KEY")), encoding="utf-8")
    out = _validate(path)
    assert "targets[0].endpoint.api_key_env" in out and "ACCEVAL_GAPS_KEY" in out
    assert "secret" not in out


def _deep(levels: int) -> str:
    return "name: x\nx: " + "[" * levels + "]" * levels + "\n"


def _laughs() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def _alias_chain() -> str:
    lines = ["c0: &c0 [1]"] + [f"c{i}: &c{i} [*c{i - 1}]" for i in range(1, 2 * YAML_MAX_DEPTH)]
    return "\n".join(lines) + "\n"


FILES: dict[str, tuple[Callable[[], bytes], str]] = {
    "not UTF-8": (lambda: yaml.safe_dump(GOOD).encode() + b"description: caf\xe9\n",
                  "not UTF-8 text"),
    "nested thousands deep": (lambda: _deep(5000).encode(), "nested more than"),
    "billion laughs": (lambda: _laughs().encode(), "once its aliases are expanded"),
    "aliases nesting too deep": (lambda: _alias_chain().encode(), "nested more than"),
    "an alias inside itself": (lambda: b"name: x\nx: &x [*x]\n", "refers to the value"),
    "a NUL character": (lambda: b"name: x\x00\n", "not allowed in YAML"),
    "larger than the cap": (lambda: b"#" * (5 * 2**20), "larger than"),
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_a_study_file_validate_cannot_read_is_named(tmp_path: Path, case: str) -> None:
    make, words = FILES[case]
    path = tmp_path / "s.yaml"
    path.write_bytes(make())
    out = _validate(path)
    assert str(path) in out and words in out, out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_task_file_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "tasks.jsonl")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_with("tasks", {"source": "jsonl:tasks.jsonl"})),
                    encoding="utf-8")
    assert "  - tasks.source: the task file is not a regular file" in _validate(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_training_log_that_is_a_fifo_is_named_once_with_its_field(tmp_path: Path) -> None:
    """The bounded read names the log's own field; the content check that follows does not
    name the same file again with the section's field."""
    os.mkfifo(tmp_path / "p.log")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "training": {"platforms": [
        {"name": "a", "logs": {"runs": [{"path": "p.log"}]}}]}}), encoding="utf-8")
    out = _validate(path)
    assert "1 problem(s)" in out, out
    assert "  - training.platforms[0].logs.runs[0].path: " in out
    assert "p.log: the training log is not a regular file" in out
    assert out.count("not a regular file") == 1
