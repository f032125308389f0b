import math

import pytest

from acceval.economics import (
    BoundaryComponents,
    Energy,
    energy_at_boundary,
    energy_outputs,
    estimate_energy,
    load_catalog,
)

ALL = BoundaryComponents(node_overhead_w=300, psu_efficiency=0.9, network_w=50, pue=1.2)


def test_device_to_facility_adds_each_declared_component() -> None:
    est = energy_at_boundary(7000.0, "device", "facility", ALL, duration_s=10)
    # ((7000 + 300*10) / 0.9 + 50*10) * 1.2
    assert est.joules == pytest.approx(((7000 + 3000) / 0.9 + 500) * 1.2)
    assert est.level == "facility" and est.complete
    assert [c.origin for c in est.components] == ["measured"] + ["declared"] * 4
    assert sum(c.joules for c in est.components) == pytest.approx(est.joules)


def test_a_missing_component_stops_at_the_level_reached() -> None:
    comps = BoundaryComponents(node_overhead_w=300, pue=1.2)       # no PSU efficiency
    est = energy_at_boundary(7000.0, "device", "facility", comps, duration_s=10)
    assert est.level == "node" and not est.complete
    assert est.joules == pytest.approx(10_000.0)
    assert est.missing == ["psu_efficiency"]


def test_cannot_go_below_the_measured_level() -> None:
    with pytest.raises(ValueError, match="cannot report at device"):
        energy_at_boundary(1.0, "wall", "device", ALL, duration_s=1)


def test_no_measurement_is_none_not_zero() -> None:
    est = energy_at_boundary(None, "device", "device", ALL, duration_s=1)
    assert est.joules is None
    out = energy_outputs(est, correct=5, output_tokens=100, duration_s=1)
    assert out.joules_per_correct is None and out.tokens_per_s_per_mw is None


def test_energy_outputs_match_the_inferencex_power_example() -> None:
    # 1000 tok/s at 1.73 kW all-in for 10 s: 578k tok/s per MW, 1.73 J/token
    est = energy_at_boundary(17_300.0, "facility", "facility", ALL, duration_s=10)
    out = energy_outputs(est, correct=40, output_tokens=10_000, duration_s=10,
                         electricity_usd_per_kwh=0.1)
    assert out.tokens_per_s_per_mw == pytest.approx(578_034.7, rel=1e-6)
    assert out.joules_per_output_token == pytest.approx(1.73)
    assert out.joules_per_correct == pytest.approx(17_300 / 40)
    assert out.correct_per_kwh == pytest.approx(40 / (17_300 / 3.6e6))
    assert out.energy_cost_usd == pytest.approx(17_300 / 3.6e6 * 0.1)
    assert energy_outputs(est, correct=0, output_tokens=1, duration_s=10).joules_per_correct \
        == math.inf


def test_estimate_from_catalog_tdp_is_labelled_estimated() -> None:
    est = estimate_energy(Energy(boundary="device"), device_j=None, duration_s=10, chips=8,
                          catalog=load_catalog(), hardware="h200")
    assert est.joules == pytest.approx(700 * 8 * 10)
    assert est.origin == est.components[0].origin == "estimated"
    assert est.components[0].name == "tdp"
    assert "catalog TDP of h200" in est.components[0].detail
    assert "InferenceX" in est.components[0].detail            # the catalog's source
    declared = estimate_energy(Energy(device_tdp_w=500), device_j=None, duration_s=10,
                               catalog=load_catalog(), hardware="h200")
    assert declared.joules == pytest.approx(500 * 10)          # the declared TDP wins
    assert "energy.device_tdp_w" in declared.components[0].detail
    cpu = estimate_energy(Energy(probe="cpu", boundary="node", node_overhead_w=10),
                          device_j=50.0, duration_s=2)
    assert cpu.joules == pytest.approx(70.0)
    assert cpu.components[0].origin == "estimated"
    # Trainium: no TDP published, nothing measured -> no number at all
    none = estimate_energy(Energy(), device_j=None, duration_s=10, catalog=load_catalog(),
                           hardware="trn3")
    assert none.joules is None

