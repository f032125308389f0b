"""Files a run writes whole (result.json, report.html, the run journal): written under a
temporary name, flushed to disk and renamed, so a full disk or a kill leaves the old file or
the new one, never half of one."""

from __future__ import annotations

import os
from pathlib import Path


def durable_replace(tmp: Path, final: Path) -> None:
    """Rename ``tmp`` over ``final`` once its bytes are on disk, and make the rename durable:
    a power cut leaves the old file or the new one, never a zero-byte one."""
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    try:
        fd = os.open(final.parent, os.O_RDONLY)
    except OSError:
        return  # a platform without directory fsync
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_durable(path: Path, text: str) -> Path:
    """Write a whole text file under a temporary name, then rename it durably: a reader (or
    a full disk) never leaves a truncated report.html or result.json behind. On failure the
    temporary file is removed and the old file, if any, is kept."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        durable_replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


__all__ = ["durable_replace", "write_text_durable"]
