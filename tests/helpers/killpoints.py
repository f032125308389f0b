"""SIGKILL a process at the k-th durable file step of a compaction (tests of crash safety)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import pyarrow.parquet as pq

_state = {"armed": False, "step": 0, "at": 0}


def _counted(fn: Callable[..., Any]) -> Callable[..., Any]:
    def step(*args: Any, **kwargs: Any) -> Any:
        if _state["armed"]:
            _state["step"] += 1
            if _state["step"] == _state["at"]:
                os.kill(os.getpid(), signal.SIGKILL)
        return fn(*args, **kwargs)
    return step


def install(at: int) -> None:
    """Count from now: the ``at``-th step is a SIGKILL."""
    _state.update(armed=True, step=0, at=at)


def _patch() -> None:
    for name in ("fsync", "replace", "rename", "unlink", "rmdir"):
        setattr(os, name, _counted(getattr(os, name)))
    pq.ParquetWriter.write_table = _counted(pq.ParquetWriter.write_table)  # type: ignore[method-assign]
    pq.ParquetWriter.close = _counted(pq.ParquetWriter.close)  # type: ignore[method-assign]
    pq.write_table = _counted(pq.write_table)


def arm_records_compaction(at: int) -> None:
    """Patch the file steps now, and start counting when the records are compacted."""
    _patch()
    from acceval.results import store

    original = store.compact_parts

    def compact(run_dir: Any, file: str, *args: Any, **kwargs: Any) -> Any:
        if file == store.RECORDS_FILE:
            install(at)
        try:
            return original(run_dir, file, *args, **kwargs)
        finally:
            _state["armed"] = False

    store.compact_parts = compact  # type: ignore[assignment]
