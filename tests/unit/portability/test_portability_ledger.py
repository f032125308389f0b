"""Migration ledger: code diffs between two git refs or two folders, warm-up, compile logs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceval.errors import UsageError
from acceval.portability import (
    TargetPortability,
    build_ledger,
    dir_code_change,
    git_code_change,
    warmup_from_records,
)
from acceval.portability.ledger import first_sent
from acceval.results.records import Record, records_to_table

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "portability"
MS = 1_000_000

SERVE_CUDA = "import torch\nmodel = load()\nmodel.to('cuda')\nserve(model)\n"
SERVE_NEURON = ("import torch\nimport torch_neuronx\nmodel = load()\nmodel.to('neuron')\n"
                "serve(model)\n")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q")
    _git(r, "config", "user.email", "t@example.com")
    _git(r, "config", "user.name", "t")
    (r / "serve.py").write_text(SERVE_CUDA)
    (r / "README.md").write_text("docs\n")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "cuda")
    _git(r, "tag", "cuda")
    (r / "serve.py").write_text(SERVE_NEURON)
    (r / "neuron.cfg").write_text("lnc=2\nbuckets=128,256\n")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "neuron")
    _git(r, "tag", "neuron")
    return r


def test_git_code_change_counts_lines_and_files(repo: Path) -> None:
    c = git_code_change(repo, "cuda", "neuron")
    # serve.py: +2 (import, .to('neuron')) -1 (.to('cuda')); neuron.cfg: +2
    assert (c.lines_added, c.lines_removed, c.files_changed) == (4, 1, 2)
    assert c.reference_lines == 5  # serve.py 4 + README 1 at the base ref
    assert c.unchanged_fraction == pytest.approx(4 / 5)
    assert c.evidence.kind == "command" and "diff --numstat cuda neuron" in c.evidence.detail
    limited = git_code_change(repo, "cuda", "neuron", ["serve.py"])
    assert (limited.lines_added, limited.lines_removed, limited.files_changed) == (2, 1, 1)
    assert limited.reference_lines == 4


def test_git_bad_ref_is_a_usage_error(repo: Path) -> None:
    with pytest.raises(UsageError, match="failed"):
        git_code_change(repo, "cuda", "no-such-ref")


def test_dir_code_change_matches_git(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "serve.py").write_text(SERVE_CUDA)
    (a / "README.md").write_text("docs\n")
    (b / "serve.py").write_text(SERVE_NEURON)
    (b / "README.md").write_text("docs\n")
    (b / "neuron.cfg").write_text("lnc=2\nbuckets=128,256\n")
    (a / "w.bin").write_bytes(b"\x00\xff\xfe")
    (b / "w.bin").write_bytes(b"\x00\xff\xfd")
    c = dir_code_change(a, b)
    assert (c.lines_added, c.lines_removed) == (4, 1)
    assert {f.path for f in c.files} == {"serve.py", "neuron.cfg", "w.bin"}
    assert next(f for f in c.files if f.path == "w.bin").added is None  # binary
    assert c.reference_lines == 5


def _rec(i: int, sent_ms: float, e2e_ms: float, ttft_ms: float, err: bool = False) -> Record:
    sent = int(sent_ms * MS)
    return Record(target="t", load_index=0, load_label="c1", request_id=i, task_id=str(i),
                  sent_ns=sent, first_token_ns=sent + int(ttft_ms * MS),
                  done_ns=sent + int(e2e_ms * MS), error_kind="http" if err else None)


def test_warmup_first_request_against_median() -> None:
    recs = [_rec(1, 5, 100, 50), _rec(0, 0, 900, 800), _rec(2, 10, 120, 60),
            _rec(3, 15, 110, 55), _rec(4, 1, 5000, 5000, err=True)]
    w = warmup_from_records(records_to_table(recs), "t")
    assert w is not None
    assert w.first_e2e_ms == pytest.approx(900)  # request 0 was sent first
    assert w.median_e2e_ms == pytest.approx(110)  # errors excluded
    assert w.first_ttft_ms == pytest.approx(800) and w.median_ttft_ms == pytest.approx(55)
    assert w.penalty_ms == pytest.approx(790)
    assert warmup_from_records(records_to_table(recs[:1]), "t") is None


def test_ledger_collects_evidence_for_every_line(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "compile.log"
    log.write_text("graph 1: Compilation took 812.5 seconds\nserver up\n"
                   "graph 2: compiled in 30 s\n")
    spec = TargetPortability.model_validate({
        "code": {"repo": str(repo), "base": "cuda", "head": "neuron"},
        "compile_log": {"path": "compile.log"},
        "fallback_logs": [{"path": str(FIX / "neuron_compile_documented.log")},
                          {"path": "missing.log"}],
        "tools": [{"name": "neuron-explorer", "purpose": "profile",
                   "evidence": "https://awsdocs-neuron.readthedocs-hosted.com/"},
                  {"name": "neuron-top"}],
        "adaptation_hours": 60,
        "limitations": ["chunked prefill not supported"],
    })
    recs = [_rec(0, 0, 900, 800), _rec(1, 5, 100, 50), _rec(2, 10, 120, 60)]
    led = build_ledger("t", spec, reference="h200", base_dir=tmp_path, startup_s=42.0,
                       records=records_to_table(recs))
    items = [e.item for e in led.entries]
    assert items == ["code_changed", "startup_s", "compile_s_from_log", "compile_s",
                     "first_request", "fallback_ops", "debug_tool", "debug_tool",
                     "adaptation_hours", "limitation"]
    compile_entry = led.get("compile_s_from_log")
    assert compile_entry is not None and compile_entry.value == pytest.approx(842.5)
    assert compile_entry.evidence.kind == "file"
    used = led.get("compile_s")   # the log beats the local start-up (42 s), which stands beside
    assert used is not None and used.value == pytest.approx(842.5)
    assert used.evidence.kind == "file" and "measured start-up 42 s" in used.evidence.detail
    kinds = {e.item: e.evidence.kind for e in led.entries}
    assert kinds["startup_s"] == "measurement" and kinds["adaptation_hours"] == "declared"
    tools = [e.evidence.kind for e in led.entries if e.item == "debug_tool"]
    assert tools == ["url", "declared"]
    assert led.problems and "missing.log" in led.problems[0]
    d = led.result().model_dump(mode="json")
    assert d["entries"][0]["value"]["lines_added"] == 4
    assert d["entries"][5]["value"]["fallback_count"] == 3
    # The structured values come back typed from result.json, their derived fields recomputed.
    back = type(led.result()).model_validate_json(led.result().model_dump_json())
    assert back.entries[0].value == led.entries[0].value


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=40),
       st.integers(min_value=1, max_value=8))
def test_the_first_sends_are_a_stable_sorts_first(stamps: list[int], n: int) -> None:
    # Few distinct stamps, so ties at the edge are the usual case.
    sent = np.array(stamps, dtype=np.float64)
    expected = np.argsort(sent, kind="stable")[:n]
    assert first_sent(sent, n).tolist() == expected.tolist()
