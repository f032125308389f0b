"""Artifact portability on the built-in tiny model: two real local runtimes (ONNX Runtime
GenAI and transformers on torch) load the same folder and answer alike; a copy with flipped
bytes in its weights fails, with the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.models import MANIFEST, resolve_model
from acceval.portability import check_artifact, compare_manifest, write_manifest
from helpers.artifacts import corrupt_copy

N = 12  # prompts; enough to see agreement, quick on 2 cores


@pytest.fixture(scope="module")
def tiny_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = resolve_model("builtin:tiny").root
    dst = tmp_path_factory.mktemp("artifact") / "tiny"
    # Only fp32 ONNX is compared; leaving int4/int8 out keeps the copy small.
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("ort-int*", MANIFEST))
    write_manifest(dst)
    return dst


def test_tiny_model_moves_between_runtimes(tiny_copy: Path) -> None:
    r = check_artifact(tiny_copy, runtime_a="ortgenai", runtime_b="transformers", n_prompts=N)
    assert r.verdict == "pass", r.reasons
    assert r.manifest_status == "verified"
    assert r.prompts == N
    assert r.agreement_rate == 1.0
    assert r.accuracy_a == r.accuracy_b and r.accuracy_a is not None and r.accuracy_a > 0.9
    assert r.logits_compared == N
    assert r.max_abs_logit_diff is not None and r.max_abs_logit_diff < 1e-3  # fp32 both
    d = r.model_dump(mode="json")
    assert d["verdict"] == "pass" and "logits_non_finite" not in d and json.dumps(d)



def test_corrupted_copy_fails_with_reasons(tiny_copy: Path, tmp_path: Path) -> None:
    bad = corrupt_copy(tiny_copy, tmp_path / "bad")
    r = check_artifact(bad, n_prompts=4)
    assert r.verdict == "fail"
    assert r.manifest_status == "mismatch"
    assert r.reasons[0] == "checksum mismatch: model.safetensors: sha256 mismatch"
    assert any(x.startswith("answers disagree") for x in r.reasons)
    assert r.agreement_rate is not None and r.agreement_rate < 1.0


def test_corruption_is_caught_without_a_manifest_too(tiny_copy: Path, tmp_path: Path) -> None:
    bad = corrupt_copy(tiny_copy, tmp_path / "bad")
    (bad / MANIFEST).unlink()
    r = check_artifact(bad, n_prompts=4)
    assert r.manifest_status == "unverified"
    assert r.verdict == "fail"
    assert "non-finite logits (NaN/inf) in one runtime" in r.reasons
    assert r.logits_non_finite is True and r.max_abs_logit_diff is None
    assert r.model_dump(mode="json")["logits_non_finite"] is True


def test_manifest_written_before_a_move_detects_changes(tiny_copy: Path,
                                                        tmp_path: Path) -> None:
    before = json.loads((tiny_copy / MANIFEST).read_text())
    moved = tmp_path / "moved"
    shutil.copytree(tiny_copy, moved)
    assert compare_manifest(moved, before) == []
    (moved / "config.json").write_text("{}")
    (moved / "extra.bin").write_bytes(b"x")
    assert compare_manifest(moved, before) == [
        "config.json: size 2 != " + str(before["files"]["config.json"]["size"]),
        "extra.bin: not in manifest"]


def test_a_broken_header_is_a_load_failure(tiny_copy: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny_copy, bad)
    weights = bad / "model.safetensors"
    weights.write_bytes(b"\x00" * 16 + weights.read_bytes()[16:])
    r = check_artifact(bad, n_prompts=2, compare_logits=False)
    assert r.verdict == "fail"
    assert "transformers" in r.load_errors
    assert any("transformers could not load or run the artifact" in x for x in r.reasons)
