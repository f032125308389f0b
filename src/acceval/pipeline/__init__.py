"""The pipeline's front door: validate a study, execute it, resume an interrupted run.

Its parts, each owning one responsibility: :mod:`.measure` (the run as a whole),
:mod:`.target_run` (one target), :mod:`.scaleout` (the Ray wiring), :mod:`.signals`,
:mod:`.disk_guard`, :mod:`.journal` and :mod:`.resume`. Only the command line and the
library API import it (a layer test)."""

from __future__ import annotations

from acceval.analysis import load_result, point_specs
from acceval.pipeline.measure import check_study, execute, execute_file, resume
from acceval.pipeline.resume import ResumePlan, resume_plan

__all__ = ["ResumePlan", "check_study", "execute", "execute_file", "load_result", "point_specs",
           "resume", "resume_plan"]
