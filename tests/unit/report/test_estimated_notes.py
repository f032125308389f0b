"""The verdict's list of numbers that rest on estimates: an energy probe that read nothing
says so, never "the None boundary"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from acceval.report._econ import TargetEcon
from acceval.report.html import _estimated_html


def test_an_energy_probe_that_read_nothing_says_not_measured() -> None:
    result = cast(Any, SimpleNamespace(targets=[SimpleNamespace(name="trn2"),
                                                SimpleNamespace(name="h200")]))
    econ = {"trn2": TargetEcon(estimated=("horizon_months (assumption)",),
                               energy_complete=False, energy_level=None),
            "h200": TargetEcon(energy_complete=False, energy_level="device",
                               energy_origin="estimated")}
    page = _estimated_html(result, econ)
    assert "None" not in page
    assert "<b>trn2</b>: horizon_months (assumption), energy not measured" in page
    assert "energy (estimated), energy stops at the device boundary" in page
