"""The package's documented API is exactly these names, and each one works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import acceval

API = {"AccevalError", "GateFailed", "MissingExtra", "RunResult", "Study", "StudyError",
       "TargetError", "UsageError", "__version__", "analyze", "load_result", "load_study",
       "render", "run"}


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert set(acceval.__all__) == API
    for name in API:
        assert getattr(acceval, name) is not None, name
    assert set(dir(acceval)) >= API
    public = {n for n, v in vars(acceval).items()
              if not n.startswith("_") and not isinstance(v, type(sys))} - {"annotations", "Any"}
    assert public <= API


def test_the_api_objects_are_the_stages() -> None:
    from acceval.analysis import analyze, load_result
    from acceval.report import render
    from acceval.run_result import RunResult

    assert acceval.analyze is analyze and acceval.load_result is load_result
    assert acceval.render is render and acceval.RunResult is RunResult


def test_importing_the_package_loads_no_stage() -> None:
    code = ("import sys, acceval; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('acceval'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert "acceval.pipeline" not in out and "acceval.analysis" not in out


def test_load_study_and_render_through_the_package(tmp_path: Path) -> None:
    from helpers import run_fixture

    result = run_fixture.build(tmp_path / "run")
    again = acceval.load_result(tmp_path / "run")
    assert again.verdict == result.verdict
    assert result.verdict.headline in acceval.render(again, "md")
    study = tmp_path / "s.yaml"
    study.write_text("name: s\ntargets:\n  - name: a\n    endpoint: {base_url: "
                     "'http://127.0.0.1:9/v1', model: m}\n", encoding="utf-8")
    assert acceval.load_study(study).targets[0].name == "a"
