from pathlib import Path

import pytest

from acceval.economics import Measured, Price, build_cost_inputs, load_catalog, resolve_rate
from acceval.errors import StudyError

BRIEF_CHIPS = {"trn2", "trn3", "h100", "h200", "b200", "mi300x", "tpu-v5e", "tpu-v6e", "tpu-7x"}


def test_shipped_catalog_has_the_chips_with_sources() -> None:
    cat = load_catalog()
    assert set(cat.hardware) >= BRIEF_CHIPS
    assert {"aws-c7i-large", "aws-c7i-xlarge", "laptop"} <= set(cat.hardware)
    for hw in cat.hardware.values():
        for fact in (hw.memory, hw.memory_bandwidth, hw.peak_fp8, hw.peak_bf16, hw.tdp,
                     hw.allin_power):
            if fact is not None:
                assert fact.source and fact.unit


def test_figures_match_the_reference_and_unpublished_ones_stay_missing() -> None:
    cat = load_catalog()
    h200 = cat.hardware["h200"]
    assert (h200.tdp_w, h200.allin_power_w) == (700, 1730)
    assert h200.memory_bytes == 143771 * 2**20           # as nvidia-smi and NVIDIA's MLPerf list it
    assert cat.hardware["trn3"].peak_fp8 is not None
    assert cat.hardware["trn3"].peak_fp8.value == 2517
    assert cat.hardware["trn2"].memory_gb == pytest.approx(96 * 1.073741824)   # 96 GiB
    for chip in ("trn2", "trn3", "tpu-v5e", "tpu-v6e", "tpu-7x"):
        assert cat.hardware[chip].tdp is None, chip                  # not published
    assert cat.hardware["tpu-v5e"].peak_fp8 is None
    assert cat.hardware["laptop"].memory is None


def test_instance_price_is_divided_by_chips() -> None:
    cat = load_catalog()
    p = cat.prices["aws-p5e-48xlarge-cb"]
    assert p.chip_rate_usd_per_hour == pytest.approx(43.26 / 8)
    assert p.date == "2025-01-01" and p.instance == "p5e.48xlarge"
    assert cat.instances["trn2.48xlarge"].chips == 16


def test_user_catalog_overrides_and_extends_by_id(tmp_path: Path) -> None:
    f = tmp_path / "cat.yaml"
    f.write_text(
        "prices:\n"
        "  - {id: aws-p5e-48xlarge-cb, hardware: h200, provider: me, pricing: reserved,\n"
        "     usd_per_chip_hour: 4.0, source: my contract, date: '2026-10-01', grade: V}\n"
        "  - {id: my-trn3, hardware: trn3, provider: AWS, pricing: reserved,\n"
        "     usd_per_chip_hour: 2.5, source: quote, date: '2026-10-01'}\n"
    )
    cat = load_catalog(f)
    assert cat.prices["aws-p5e-48xlarge-cb"].chip_rate_usd_per_hour == 4.0
    assert cat.prices["my-trn3"].hardware == "trn3"
    assert "h100" in cat.hardware                                   # the rest is kept
    rate = resolve_rate("trn3", Price(catalog="my-trn3"), cat)
    assert rate.usd_per_chip_hour.origin == "catalog"
    assert rate.usd_per_chip_hour.source == "quote [S]"


def test_bad_user_catalog_says_where(tmp_path: Path) -> None:
    f = tmp_path / "cat.yaml"
    f.write_text("prices:\n  - {id: x, hardware: h100, provider: p, pricing: cheap,"
                 " usd_per_chip_hour: 1, source: s}\n")
    with pytest.raises(StudyError, match=r"prices\[0\]\.pricing"):
        load_catalog(f)
    with pytest.raises(StudyError, match="cannot read"):
        load_catalog(tmp_path / "missing.yaml")


def test_unknown_price_id_and_contradicting_pricing() -> None:
    cat = load_catalog()
    m = Measured(duration_s=1, requests=1, correct=1)
    with pytest.raises(StudyError, match="no price 'nope'"):
        build_cost_inputs("a", chips=1, price=Price(catalog="nope"), catalog=cat,
                          measured_values=m)
    with pytest.raises(StudyError, match="contradicts"):
        build_cost_inputs("a", chips=1, price=Price(catalog="ix-h100-costh", pricing="spot"),
                          catalog=cat, measured_values=m)


def test_owned_tco_rate_includes_energy_but_capex_does_not() -> None:
    cat = load_catalog()
    assert resolve_rate("a", Price(catalog="ix-h100-costh"), cat).includes_energy
    owned = resolve_rate("a", Price(pricing="owned", capex_usd=30_000), cat, "h100")
    assert not owned.includes_energy
    assert owned.power_kw.value == 1.73 and owned.power_kw.origin == "catalog"


def test_scale_up_figures_carry_sources_and_dates_and_gaps_stay_missing() -> None:
    cat = load_catalog()
    scale = {hid: (hw.scale_up_bandwidth, hw.chips_per_node, hw.chips_per_domain)
             for hid, hw in cat.hardware.items()}
    for hid in ("trn2", "trn3", "h100", "h200", "b200", "mi300x", "mi355x"):
        node = scale[hid][1]
        assert node is not None and node.source and node.date, hid
    for hid in ("trn2", "trn3", "h100", "h200", "b200", "mi300x"):
        link = scale[hid][0]
        assert link is not None and link.source and link.date and link.note, hid
    assert (cat.hardware["trn3"].chips_per_domain.value,  # type: ignore[union-attr]
            cat.hardware["trn2"].chips_per_domain.value) == (144, 64)  # type: ignore[union-attr]
    assert cat.hardware["h200"].scale_up_bandwidth.value == 450  # type: ignore[union-attr]
    mi355x = cat.hardware["mi355x"]
    # No primary source gave MI355X's dense peaks or its XGMI bandwidth: absent, not guessed.
    assert mi355x.peak_fp8 is None and mi355x.peak_bf16 is None
    assert mi355x.scale_up_bandwidth is None
    assert cat.hardware_problem("h200") is None
    assert "did you mean 'h200'" in (cat.hardware_problem("h20") or "")
