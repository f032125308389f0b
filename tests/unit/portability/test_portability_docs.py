"""docs/portability.md names every study-file field of the portability sections."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from acceval.portability import spec

DOC = (Path(__file__).resolve().parents[3] / "docs" / "portability.md").read_text()
MODELS = [spec.TargetPortability, spec.CodeDiff, spec.CompileLog, spec.LogFile, spec.Tool,
          spec.ArtifactSpec, spec.ExitSpec, spec.Answer, spec.ManagedService, spec.Contract,
          spec.StudyPortability]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_is_documented(model: type[BaseModel]) -> None:
    missing = [f for f in model.model_fields if f not in DOC]
    assert not missing, f"docs/portability.md does not mention {model.__name__}: {missing}"


def test_worked_exit_cost_example_is_in_the_doc() -> None:
    assert "$103,335.40" in DOC
