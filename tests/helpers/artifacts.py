"""A deliberately damaged copy of a model folder, for artifact-check tests."""

from __future__ import annotations

import shutil
from pathlib import Path


def corrupt_copy(src: Path, dst: Path) -> Path:
    """Copy ``src`` to ``dst`` and overwrite 8 KiB in the middle of the weights with 0xFF
    (fp32 0xffffffff is NaN), leaving the safetensors header intact."""
    shutil.copytree(src, dst)
    weights = dst / "model.safetensors"
    data = bytearray(weights.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 8192] = b"\xff" * 8192
    weights.write_bytes(bytes(data))
    return dst
