from pathlib import Path

import pytest

from acceval.probes import RaplProbe
from acceval.probes.rapl import counter_delta


def _zone(root: Path, name: str, zone: str, uj: int, max_uj: int = 262_143_328_850) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "name").write_text(zone + "\n")
    (d / "energy_uj").write_text(f"{uj}\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return d


def test_counter_delta_handles_wraparound() -> None:
    assert counter_delta(100, 250, 1000) == 150
    assert counter_delta(900, 50, 1000) == 150


def test_reads_package_zones_with_wraparound(tmp_path: Path) -> None:
    pkg = _zone(tmp_path, "intel-rapl:0", "package-0", 999_000_000, max_uj=1_000_000_000)
    _zone(tmp_path, "intel-rapl:0:0", "core", 5)          # inside the package: not summed
    probe = RaplProbe(tmp_path)
    assert probe.available() == (True, "")
    probe.start(0)
    (pkg / "energy_uj").write_text("4000000\n")           # wrapped: +1 J before, +4 J after
    (s,) = probe.sample()
    assert s.metric == "energy_j" and s.device == "package-0"
    assert s.value == pytest.approx(5.0)
    (pkg / "energy_uj").write_text("6000000\n")
    assert probe.stop()[0].value == pytest.approx(7.0)


def test_dram_zone_only_when_asked(tmp_path: Path) -> None:
    _zone(tmp_path, "intel-rapl:0", "package-0", 0)
    _zone(tmp_path, "intel-rapl:0:1", "dram", 0)
    probe = RaplProbe(tmp_path, include_dram=True)
    probe.start(0)
    assert {s.device for s in probe.sample()} == {"package-0", "intel-rapl:0:1-dram"}


def test_unreadable_or_absent_rapl_says_why(tmp_path: Path) -> None:
    ok, why = RaplProbe(tmp_path).available()
    assert not ok and "no RAPL package zones" in why
    d = _zone(tmp_path, "intel-rapl:0", "package-0", 1)
    (d / "energy_uj").write_text("not a number\n")
    ok, why = RaplProbe(tmp_path).available()
    assert not ok and "cannot read" in why
