"""The library's front door: what ``import acceval`` offers, loaded when first used.

``acceval.run(study)`` measures, ``acceval.analyze(study, log, records)`` computes,
``acceval.render(result, fmt)`` phrases; ``load_study`` and ``load_result`` read files.
The names resolve lazily (PEP 562) so that importing a concept (``acceval.study``) does not
load the stages that compose it.
"""

from __future__ import annotations

from pathlib import Path

from acceval.analysis import analyze, load_result
from acceval.pipeline import execute, execute_file
from acceval.report import render
from acceval.run_result import RunResult
from acceval.study import Study, load_study


def run(study: Study | str | Path, *, out_dir: Path | None = None, progress: bool = False,
        preflight: bool = True) -> tuple[RunResult, Path]:
    """Run a study (a :class:`Study` or the path of a study file) and return its result and
    run folder, exactly as ``acceval run`` does."""
    if isinstance(study, str | Path):
        return execute_file(Path(study), out_dir=out_dir, progress=progress,
                            preflight=preflight)
    return execute(study, base_dir=Path.cwd(), out_dir=out_dir, progress=progress,
                   preflight=preflight)


__all__ = ["RunResult", "Study", "analyze", "load_result", "load_study", "render", "run"]
