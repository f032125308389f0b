"""Declared inputs are never silently replaced, through the real analysis: the compile time,
availability without a demand profile, and energy from the catalog TDP."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.verdict_runs import Spec, build


def test_a_declared_compile_time_wins_and_the_ledger_and_bill_agree(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "compile.log").write_text("neuronx-cc: compilation finished in 909.5 s\n")
    declared = Spec("declared", extra=(("costs", {"compile_s": 900}),
                                       ("portability", {"compile_log": {"path": "compile.log"}})),
                    startup_s=0.24)
    logged = Spec("logged", extra=(("portability", {"compile_log": {"path": "compile.log"}}),),
                  startup_s=0.24)
    r = build(run, [declared, logged], costs={"expected_requests_per_month": 1e6})
    for name, want, origin in (("declared", 900.0, "assumption"), ("logged", 909.5, "measured")):
        t = r.target(name)
        assert t.economics is not None and t.portability is not None
        bill = t.economics.points[0].bill
        assert bill.inputs["compile_s"].value == pytest.approx(want)
        assert bill.inputs["compile_s"].origin == origin
        assert bill.inputs["compile_s_measured"].value == pytest.approx(0.24)  # kept beside
        entry = t.portability.ledger.entry("compile_s")
        assert entry is not None and entry.value == pytest.approx(want)  # one field, both uses
        compile_item = bill.item("compile")
        assert compile_item is not None and compile_item.usd is not None


def test_availability_is_assessed_without_a_demand_profile(tmp_path: Path) -> None:
    blocked = Spec("blocked", 0.5, extra=(("platform", {"chips": 16}),
                                          ("availability", {"regions": ["us-east-1"],
                                                            "quota_chips": 8})))
    r = build(tmp_path / "run", [blocked, Spec("open", 1.0)])
    t = r.target("blocked")
    assert r.study.demand is None
    assert t.availability is not None and t.availability.status == "blocked"
    st = r.verdict.standing("blocked")
    assert st is not None and not st.qualified
    assert any("blocked" in x for x in st.reasons)
    assert r.verdict.winner == "open"  # the cheaper target cannot be had


def test_the_default_probe_estimates_energy_from_the_catalog_tdp(tmp_path: Path) -> None:
    h200 = Spec("h200", extra=(("platform", {"hardware": "h200", "chips": 1}),))
    r = build(tmp_path / "run", [h200])
    t = r.target("h200")
    assert t.energy is not None and t.energy.joules is not None
    assert t.energy.origin == "estimated"
    point = t.point(t.energy.load_label)
    assert point is not None and point.summary.duration_s is not None
    # 700 W (the catalog's H200 TDP) for the measured window, an upper bound.
    assert t.energy.provenance.components[0].joules == pytest.approx(
        700.0 * point.summary.duration_s, rel=1e-6)
