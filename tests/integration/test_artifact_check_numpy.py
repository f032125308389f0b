"""Artifact portability without torch: ONNX Runtime GenAI and the NumPy reference engine load
the same built-in folders and answer alike, logits included; damaged copies fail with the
reason (checksum, answers, non-finite logits, a load failure)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from acceval.models import MANIFEST, resolve_model
from acceval.portability import check_artifact, write_manifest
from helpers.artifacts import corrupt_copy


def _copy(name: str, dst: Path) -> Path:
    # Only fp32 ONNX is compared; leaving int4/int8 out keeps the copy small.
    shutil.copytree(resolve_model(f"builtin:{name}").root, dst,
                    ignore=shutil.ignore_patterns("ort-int*", MANIFEST))
    write_manifest(dst)
    return dst


@pytest.fixture(scope="module")
def tiny_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy("tiny", tmp_path_factory.mktemp("artifact-np") / "tiny")


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the demo's install ([local] only): torch and transformers cannot be imported."""
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "transformers", None)


@pytest.mark.usefixtures("no_torch")
@pytest.mark.parametrize(("model", "n"), [("tiny", 200), ("small", 200)])
def test_builtin_models_move_between_ortgenai_and_numpy(model: str, n: int,
                                                        tmp_path: Path) -> None:
    path = _copy(model, tmp_path / model)
    r = check_artifact(path, runtime_a="ortgenai", runtime_b="numpy", n_prompts=n)
    assert r.verdict == "pass", r.reasons
    assert r.manifest_status == "verified" and r.load_errors == {}
    assert r.prompts == n and r.agreement_rate == 1.0
    card = resolve_model(f"builtin:{model}").card["evaluation"]["results"]["ortgenai-fp32"]
    assert r.accuracy_a == r.accuracy_b == card["exact_match_first200"]
    assert r.logits_compared == n
    assert r.max_abs_logit_diff is not None and r.max_abs_logit_diff < 1e-4  # fp32 both


@pytest.mark.usefixtures("no_torch")
def test_builtin_spec_works_as_is() -> None:
    r = check_artifact("builtin:tiny", runtime_a="ortgenai", runtime_b="numpy", n_prompts=8)
    assert r.verdict == "pass", r.reasons
    assert r.manifest_status == "verified"



@pytest.mark.usefixtures("no_torch")
def test_corrupted_copy_fails_with_clear_reasons(tiny_copy: Path, tmp_path: Path) -> None:
    bad = corrupt_copy(tiny_copy, tmp_path / "bad")
    r = check_artifact(bad, runtime_a="ortgenai", runtime_b="numpy", n_prompts=8)
    assert r.verdict == "fail"
    assert r.manifest_status == "mismatch"
    assert r.reasons[0] == "checksum mismatch: model.safetensors: sha256 mismatch"
    assert any(x.startswith("answers disagree") for x in r.reasons)
    assert "non-finite logits (NaN/inf) in one runtime" in r.reasons
    assert r.agreement_rate is not None and r.agreement_rate < 1.0


@pytest.mark.usefixtures("no_torch")
def test_corruption_is_caught_without_a_manifest_too(tiny_copy: Path, tmp_path: Path) -> None:
    bad = corrupt_copy(tiny_copy, tmp_path / "bad")
    (bad / MANIFEST).unlink()
    r = check_artifact(bad, runtime_a="ortgenai", runtime_b="numpy", n_prompts=8)
    assert r.manifest_status == "unverified"
    assert r.verdict == "fail"
    assert "non-finite logits (NaN/inf) in one runtime" in r.reasons
    assert r.logits_non_finite is True and r.max_abs_logit_diff is None
    assert r.model_dump(mode="json")["logits_non_finite"] is True


@pytest.mark.usefixtures("no_torch")
def test_a_broken_header_is_a_numpy_load_failure(tiny_copy: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny_copy, bad)
    weights = bad / "model.safetensors"
    weights.write_bytes(b"\x00" * 16 + weights.read_bytes()[16:])
    r = check_artifact(bad, runtime_a="ortgenai", runtime_b="numpy", n_prompts=2)
    assert r.verdict == "fail"
    assert list(r.load_errors) == ["numpy"]
    assert any(x.startswith("numpy could not load or run the artifact") for x in r.reasons)
