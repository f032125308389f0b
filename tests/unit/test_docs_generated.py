"""The generated references in docs/ match the code (run `make docs` to refresh them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.docs import GENERATED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("rel", sorted(GENERATED))
def test_generated_doc_is_current(rel: str) -> None:
    committed = (ROOT / rel).read_text(encoding="utf-8")
    assert committed == GENERATED[rel]() + "\n", f"{rel} is stale: run `make docs`"


def test_study_reference_lists_every_section() -> None:
    text = GENERATED["docs/study-reference.md"]()
    for section in ("## Study", "## Target", "## Endpoint", "## LoadFamily", "## Concurrency",
                    "## GammaRate", "## SLO", "## Quality"):
        assert section in text
    assert "| `base_url` |" in text
