"""``acceval report`` has Arrow allocate from jemalloc with no decay (what the analysis frees
goes back to the system: docs/benchmarks.md), unless the user chose a pool; other commands
keep the system allocator, and a pyarrow without jemalloc gets the system one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[2] / "fixtures" / "demo-quick-run"

_AFTER = ("import os, pyarrow as pa; "
          "print(os.environ['ARROW_DEFAULT_MEMORY_POOL'], pa.default_memory_pool().backend_name)")


def _python(code: str, pool: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    return out.split()[-2:]


def _cli(args: list[str], pool: str | None) -> list[str]:
    code = ("from acceval.cli import main; "
            f"main.main(args={args!r}, standalone_mode=False); " + _AFTER)
    return _python(code, pool)


def test_report_asks_for_jemalloc_and_other_commands_for_the_system_allocator(
        tmp_path: Path) -> None:
    report = ["report", str(FIXTURE), "--format", "json", "--out", str(tmp_path / "r.json")]
    assert _cli(report, None) == ["jemalloc", "jemalloc"]
    assert (tmp_path / "r.json").stat().st_size > 0
    assert _cli(["catalog"], None) == ["system", "system"]


def test_a_pool_the_user_chose_is_kept(tmp_path: Path) -> None:
    report = ["report", str(FIXTURE), "--format", "json", "--out", str(tmp_path / "r.json")]
    assert _cli(report, "mimalloc") == ["mimalloc", "mimalloc"]


def test_returning_pool_without_jemalloc_falls_back_to_the_system_allocator() -> None:
    code = ("from acceval.results.store import returning_pool; print(returning_pool()); "
            + _AFTER)
    assert _python(code, "jemalloc") == ["jemalloc", "jemalloc"]
    assert _python(code, "mimalloc") == ["mimalloc", "system"]
