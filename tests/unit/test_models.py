"""acceval.models: the shipped artifacts match their manifest; specs resolve to folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acceval.errors import UsageError
from acceval.models import (
    MANIFEST,
    PRECISIONS,
    build_manifest,
    builtin_models,
    models_dir,
    resolve_model,
    verify_manifest,
)

SHIPPED_LIMIT_BYTES = 25 * 1024 * 1024


def test_the_builtin_models_ship() -> None:
    assert {"tiny", "small"} <= set(builtin_models())


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_shipped_artifacts_match_their_manifest(name: str) -> None:
    assert verify_manifest(models_dir() / name) == []


def test_everything_shipped_fits_the_size_budget() -> None:
    total = sum(p.stat().st_size for p in models_dir().rglob("*") if p.is_file())
    assert 0 < total <= SHIPPED_LIMIT_BYTES


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_card_records_accuracy_for_every_shipped_precision(name: str) -> None:
    art = resolve_model(f"builtin:{name}")
    results = art.card["evaluation"]["results"]
    assert art.ort_precisions() == list(PRECISIONS)
    for p in art.ort_precisions():
        assert 0.0 <= results[f"ortgenai-{p}"]["exact_match"] <= 1.0
    assert results["transformers-fp32"]["exact_match"] >= (0.95 if name == "tiny" else 0.0)
    assert art.card["training"]["seed"] == int(art.card["training"]["seed"])


def test_builtin_spec_resolves_per_precision() -> None:
    art = resolve_model("builtin:tiny", "int4")
    assert art.name == "tiny" and art.precision == "int4"
    assert art.ort_dir == models_dir() / "tiny" / "ort-int4"
    assert art.hf_dir == models_dir() / "tiny"
    assert (art.ort_dir / "genai_config.json").is_file()
    assert art.tokenizer_json.name == "tokenizer.json"


def test_default_precision_is_fp32() -> None:
    art = resolve_model("builtin:tiny")
    assert art.precision == "fp32" and art.ort_dir is not None and art.ort_dir.name == "ort-fp32"


def test_unknown_builtin_names_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"builtin:tiny"):
        resolve_model("builtin:nope")


def test_unknown_precision_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="fp32, int8, int4"):
        resolve_model("builtin:tiny", "fp8")


def test_missing_precision_lists_what_exists(tmp_path: Path) -> None:
    root = tmp_path / "m"
    shutil.copytree(models_dir() / "tiny", root, ignore=shutil.ignore_patterns("ort-int4"))
    with pytest.raises(UsageError, match="available: fp32, int8"):
        resolve_model(str(root), "int4")


def test_a_local_copy_resolves_like_the_builtin(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    shutil.copytree(models_dir() / "tiny", root)
    art = resolve_model(str(root), "int8")
    assert art.name == "mine" and art.ort_dir == root / "ort-int8" and art.hf_dir == root
    assert verify_manifest(root) == []


def test_an_ort_folder_itself_resolves(tmp_path: Path) -> None:
    art = resolve_model(str(models_dir() / "tiny" / "ort-int8"))
    assert art.ort_dir == models_dir() / "tiny" / "ort-int8" and art.hf_dir is None


def test_a_path_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="neither builtin:NAME nor a directory"):
        resolve_model(str(tmp_path / "absent"))


@pytest.fixture
def copy_of_tiny(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    shutil.copytree(models_dir() / "tiny", root)
    return root


def test_manifest_catches_a_changed_byte(copy_of_tiny: Path) -> None:
    target = copy_of_tiny / "model.safetensors"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    assert verify_manifest(copy_of_tiny) == ["model.safetensors: sha256 mismatch"]


def test_manifest_catches_truncated_missing_and_extra_files(copy_of_tiny: Path) -> None:
    (copy_of_tiny / "ort-int4" / "genai_config.json").write_text("{}")
    (copy_of_tiny / "tokenizer_config.json").unlink()
    (copy_of_tiny / "ort-fp32" / "stray.bin").write_bytes(b"x")
    problems = verify_manifest(copy_of_tiny)
    assert any(p.startswith("ort-int4/genai_config.json: size") for p in problems)
    assert "tokenizer_config.json: missing" in problems
    assert "ort-fp32/stray.bin: not in manifest" in problems
    assert len(problems) == 3


def test_manifest_missing_or_unreadable(copy_of_tiny: Path) -> None:
    (copy_of_tiny / MANIFEST).write_text("not json")
    assert "unreadable" in verify_manifest(copy_of_tiny)[0]
    (copy_of_tiny / MANIFEST).unlink()
    assert verify_manifest(copy_of_tiny) == [f"{copy_of_tiny / MANIFEST}: missing"]


def test_build_manifest_round_trips(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"hello")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"")
    (tmp_path / MANIFEST).write_text(json.dumps(build_manifest(tmp_path)))
    listed = json.loads((tmp_path / MANIFEST).read_text())["files"]
    assert listed["a"] == {
        "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "size": 5}
    assert set(listed) == {"a", "sub/b"}
    assert verify_manifest(tmp_path) == []


CHATS = [
    [("user", "123+456=")],
    [("system", "be brief"), ("user", "12+"), ("assistant", "ignored"), ("user", "34=")],
    [("user", "")],
]


@pytest.mark.parametrize("name", ["tiny", "small"])
@pytest.mark.parametrize("folder", ["", "ort-fp32", "ort-int8", "ort-int4"])
def test_shipped_chat_template_renders_what_the_local_engines_render(
        name: str, folder: str) -> None:
    """vLLM answers /v1/chat/completions only with a template in tokenizer_config.json; it
    must give the prompt acceval's own engines build for the same messages (the user turns'
    text, nothing added), so a chat task gets one answer on every server."""
    from transformers import AutoTokenizer

    from acceval.engines.batching import BatchedEngine

    tok = AutoTokenizer.from_pretrained(str(models_dir() / name / folder))
    assert tok.chat_template
    for chat in CHATS:
        messages = [{"role": r, "content": c} for r, c in chat]
        rendered = tok.apply_chat_template(messages, tokenize=False)
        assert rendered == BatchedEngine.render_chat(None, chat)  # type: ignore[arg-type]
