import os
import time
from pathlib import Path

import pytest

from acceval.economics import Energy
from acceval.probes import (
    CpuTimeProbe,
    ProbeSampler,
    Sample,
    energy_between,
    make_probe,
    read_samples,
    table_to_samples,
)


def _burn(cpu_s: float) -> None:
    end = time.process_time() + cpu_s
    x = 0
    while time.process_time() < end:
        x += 1


def test_cpu_probe_measures_this_process_for_real() -> None:
    probe = CpuTimeProbe([os.getpid()], watts_per_core=15.0)
    assert probe.available() == (True, "")
    probe.start(time.perf_counter_ns())
    _burn(0.3)
    samples = probe.stop()
    cpu = next(s for s in samples if s.metric == "cpu_s")
    energy = next(s for s in samples if s.metric == "energy_j")
    assert cpu.value >= 0.25
    assert energy.value == pytest.approx(cpu.value * 15.0)
    assert energy.estimated and not cpu.estimated


def test_cpu_probe_refuses_missing_processes() -> None:
    ok, why = CpuTimeProbe([2**22 + 12345], watts_per_core=10).available()
    assert not ok and "does not exist" in why
    assert CpuTimeProbe([], watts_per_core=10).available()[0] is False


class _Broken:
    name = "broken"

    def available(self) -> tuple[bool, str]:
        return True, ""

    def start(self, t0_ns: int) -> None:
        pass

    def sample(self) -> list[Sample]:
        raise RuntimeError("device fell off the bus")

    def stop(self) -> list[Sample]:
        return []


class _Absent(_Broken):
    name = "absent"

    def available(self) -> tuple[bool, str]:
        return False, "no such device here"


def test_sampler_streams_samples_to_parquet(tmp_path: Path) -> None:
    t0 = time.perf_counter_ns()
    cpu = CpuTimeProbe([os.getpid()], watts_per_core=10.0)
    sampler = ProbeSampler([cpu, _Broken(), _Absent()], tmp_path, t0_ns=t0, interval_s=0.02,
                           flush_s=0.02)
    with sampler:
        _burn(0.2)
    assert sampler.unavailable == {"absent": "no such device here"}
    assert sampler.errors == {"broken": "device fell off the bus"}
    assert (tmp_path / "samples.parquet").exists()
    assert not (tmp_path / "samples.parts").exists()
    samples = table_to_samples(read_samples(tmp_path))
    energy = [s for s in samples if s.metric == "energy_j"]
    assert len(energy) >= 2
    joules = energy_between(samples, energy[0].t_ns, energy[-1].t_ns, probe="cpu")
    assert joules is not None and joules >= 0.15 * 10.0


def test_read_samples_accepts_an_interrupted_run(tmp_path: Path) -> None:
    from acceval.probes import SampleWriter

    w = SampleWriter(tmp_path)
    w.write([Sample(1, "x", "energy_j", 1.0, "J")])
    w.write([Sample(2, "x", "energy_j", 2.0, "J")])
    assert read_samples(tmp_path).num_rows == 2          # parts only, never finalized


def test_energy_between_interpolates_and_sums_devices() -> None:
    s = [Sample(0, "nvml", "energy_j", 0.0, "J", "gpu0"),
         Sample(1000, "nvml", "energy_j", 100.0, "J", "gpu0"),
         Sample(0, "nvml", "energy_j", 0.0, "J", "gpu1"),
         Sample(1000, "nvml", "energy_j", 50.0, "J", "gpu1"),
         Sample(0, "nvml", "power_w", 400.0, "W", "gpu0")]
    assert energy_between(s, 250, 750) == pytest.approx(50.0 + 25.0)
    assert energy_between(s, 250, 2000) is None          # outside the series: unknown, not 0
    assert energy_between([], 0, 1) is None


def test_make_probe_follows_the_energy_section(tmp_path: Path) -> None:
    assert make_probe(Energy()) is None
    cpu = make_probe(Energy(probe="cpu", watts_per_core=12.0), pids=[os.getpid()])
    assert isinstance(cpu, CpuTimeProbe) and cpu.watts_per_core == 12.0
    rapl = make_probe(Energy(probe="rapl"), root=tmp_path)
    assert rapl is not None and rapl.available()[0] is False
    assert make_probe(Energy(probe="nvml")) is not None
    assert make_probe(Energy(probe="neuron"), root=tmp_path) is not None
