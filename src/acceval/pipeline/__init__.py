"""The pipeline's front door: validate a study, execute it, resume an interrupted run.

Its parts, each owning one responsibility: :mod:`.measure` (the run as a whole),
:mod:`.target_run` (one target), :mod:`.scaleout` (the Ray wiring), :mod:`.signals`,
:mod:`.disk_guard`, :mod:`.journal` and :mod:`.resume`. Only the command line and the
library API import it (a layer test)."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.analysis import load_result, point_specs
    from acceval.checks import check_study
    from acceval.pipeline.measure import execute, execute_file, resume
    from acceval.pipeline.resume import ResumePlan, resume_plan

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "load_result": "acceval.analysis", "point_specs": "acceval.analysis",
    "check_study": "acceval.checks", "execute": "acceval.pipeline.measure",
    "execute_file": "acceval.pipeline.measure", "resume": "acceval.pipeline.measure",
    "ResumePlan": "acceval.pipeline.resume", "resume_plan": "acceval.pipeline.resume"})

__all__ = ["ResumePlan", "check_study", "execute", "execute_file", "load_result", "point_specs",
           "resume", "resume_plan"]
