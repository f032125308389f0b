"""The models that ship with acceval: resolving ``builtin:NAME`` and checking their manifest.

A built-in model lives in ``acceval/data/models/<name>/``: the HF-format folder at the top
(config.json, model.safetensors, tokenizer.json, ...) for the transformers engine, one prebuilt
ONNX Runtime GenAI folder per precision (``ort-fp32``, ``ort-int8``, ``ort-int4``), the
evaluation set ``heldout.tsv``, a ``card.json`` saying how it was made and how accurate each
precision is, and a ``MANIFEST.json`` with the sha256 and size of every other file.
A plain local directory works too: an HF folder, an ORT GenAI folder, or a folder laid out
like a built-in one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from acceval.errors import UsageError

BUILTIN_PREFIX = "builtin:"
MANIFEST = "MANIFEST.json"
PRECISIONS = ("fp32", "int8", "int4")


@dataclass(frozen=True, slots=True)
class ModelArtifact:
    """Where a model's files are, for one precision."""

    name: str                 # "tiny" for builtin:tiny, the folder name otherwise
    spec: str                 # what the user wrote
    root: Path                # the model folder
    hf_dir: Path | None       # HF-format weights + tokenizer (transformers engine)
    ort_dir: Path | None      # ONNX Runtime GenAI folder for `precision`
    precision: str | None
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def tokenizer_json(self) -> Path:
        for d in (self.hf_dir, self.ort_dir, self.root):
            if d is not None and (d / "tokenizer.json").is_file():
                return d / "tokenizer.json"
        raise UsageError(f"model '{self.spec}' has no tokenizer.json in {self.root}")

    def ort_precisions(self) -> list[str]:
        return [p for p in PRECISIONS if (self.root / f"ort-{p}").is_dir()]


def models_dir() -> Path:
    return Path(str(files("acceval") / "data" / "models"))


def builtin_models() -> list[str]:
    """Names of the shipped models, e.g. ``["small", "tiny"]`` (use as ``builtin:NAME``)."""
    root = models_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())


def resolve_model(spec: str, precision: str | None = None) -> ModelArtifact:
    """Find the files for ``builtin:NAME`` or a local directory, at one ORT precision.

    ``precision`` picks the ``ort-<precision>`` folder; ``None`` means fp32 when present.
    Raises :class:`UsageError` naming what exists when the model or precision is missing.
    """
    if precision is not None and precision not in PRECISIONS:
        raise UsageError(f"unknown precision '{precision}'; choose one of {', '.join(PRECISIONS)}")
    if spec.startswith(BUILTIN_PREFIX):
        name = spec[len(BUILTIN_PREFIX):]
        root = models_dir() / name
        if not name or not (root / MANIFEST).is_file():
            known = ", ".join(BUILTIN_PREFIX + n for n in builtin_models()) or "none"
            raise UsageError(f"no built-in model '{spec}'; built-in models: {known}")
    else:
        root = Path(spec).expanduser()
        if not root.is_dir():
            raise UsageError(
                f"model '{spec}' is neither builtin:NAME nor a directory; "
                f"built-in models: {', '.join(builtin_models()) or 'none'}"
            )
        name = root.resolve().name
    card = _read_json(root / "card.json")
    hf_dir = root if (root / "config.json").is_file() else None
    ort_dir = _ort_dir(root, precision, spec)
    return ModelArtifact(name=name, spec=spec, root=root, hf_dir=hf_dir, ort_dir=ort_dir,
                         precision=(precision or ("fp32" if ort_dir else None)), card=card)


def _ort_dir(root: Path, precision: str | None, spec: str) -> Path | None:
    if (root / "genai_config.json").is_file():  # the folder itself is an ORT GenAI model
        return root
    wanted = precision or "fp32"
    sub = root / f"ort-{wanted}"
    if sub.is_dir():
        return sub
    if precision is None:
        return None
    have = [p.name[len("ort-"):] for p in sorted(root.glob("ort-*")) if p.is_dir()]
    raise UsageError(
        f"model '{spec}' has no {precision} ONNX build; available: {', '.join(have) or 'none'}"
    )


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else {}


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_manifest(root: Path) -> dict[str, Any]:
    """The manifest of every file under ``root`` except the manifest itself."""
    entries = {
        p.relative_to(root).as_posix(): {"sha256": file_digest(p), "size": p.stat().st_size}
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    return {"version": 1, "files": entries}


def verify_manifest(path: Path | str) -> list[str]:
    """Problems with a model folder against its MANIFEST.json; an empty list means intact.

    Checks every listed file's size and sha256, and reports files that are not listed.
    """
    root = Path(path)
    mpath = root / MANIFEST
    if not mpath.is_file():
        return [f"{mpath}: missing"]
    try:
        listed = json.loads(mpath.read_text())["files"]
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{mpath}: unreadable ({exc})"]
    problems: list[str] = []
    for rel, want in sorted(listed.items()):
        p = root / rel
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif p.stat().st_size != want["size"]:
            problems.append(f"{rel}: size {p.stat().st_size} != {want['size']}")
        elif file_digest(p) != want["sha256"]:
            problems.append(f"{rel}: sha256 mismatch")
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and p.name != MANIFEST and rel not in listed and "__pycache__" not in rel:
            problems.append(f"{rel}: not in manifest")
    return problems
