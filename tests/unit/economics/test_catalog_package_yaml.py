"""The shipped catalog is package data and is parsed by libyaml (when PyYAML has it), to the
same values the bounded reader, which every user's file goes through, gives."""

from __future__ import annotations

from importlib import resources

import pytest

from acceval.economics import catalog
from acceval.input_files import load_yaml


@pytest.mark.parametrize("name", ["hardware.yaml", "prices.yaml"])
def test_the_shipped_files_read_as_the_bounded_reader_reads_them(name: str) -> None:
    text = (resources.files("acceval") / "data" / "catalog" / name).read_text("utf-8")
    fast = catalog._package_yaml(text)
    assert fast == load_yaml(text, source=name)
    assert isinstance(fast, dict) and fast  # the files are not empty
