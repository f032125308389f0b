import pytest

from acceval.probes import NvmlProbe


def test_energy_is_the_counter_difference_in_joules(
        nvml_recording, install_pynvml, make_fake_pynvml) -> None:
    fake = make_fake_pynvml(nvml_recording)
    install_pynvml(fake)
    probe = NvmlProbe()
    assert probe.available() == (True, "")
    probe.start(0)
    s1 = probe.sample()
    s2 = probe.sample()
    energy = [s.value for s in s1 + s2 if s.metric == "energy_j"]
    e = nvml_recording["energy_mj"]
    assert energy == pytest.approx([(e[1] - e[0]) / 1000, (e[2] - e[0]) / 1000])
    power = next(s for s in s1 if s.metric == "power_w")
    assert power.value == pytest.approx(nvml_recording["power_mw"][0] / 1000)
    assert power.unit == "W" and power.device == "gpu0" and not power.estimated
    mem = next(s for s in s1 if s.metric == "memory_used_bytes")
    assert mem.value == nvml_recording["memory_used"][0]
    assert {s.metric for s in s1} >= {"gpu_util_pct", "mem_util_pct"}
    probe.stop()
    assert fake._state["init"] == 0              # every nvmlInit matched by nvmlShutdown


def test_without_an_energy_counter_power_is_integrated_and_labelled(
        nvml_recording, install_pynvml, make_fake_pynvml) -> None:
    install_pynvml(make_fake_pynvml(nvml_recording, energy_supported=False))
    probe = NvmlProbe()
    probe.start(0)
    first = probe.sample()
    assert not [s for s in first if s.metric == "energy_j"]   # one point: nothing yet, not 0
    second = probe.sample()
    (e,) = [s for s in second if s.metric == "energy_j"]
    assert e.estimated and e.value > 0


def test_missing_package_or_driver_is_reported_not_zero(
        nvml_recording, install_pynvml, make_fake_pynvml) -> None:
    install_pynvml(None)
    ok, why = NvmlProbe().available()
    assert not ok and "acceval[nvml]" in why
    fake = make_fake_pynvml(nvml_recording)

    def broken() -> None:
        raise fake.NVMLError("Driver Not Loaded")

    fake.nvmlInit = broken
    install_pynvml(fake)
    ok, why = NvmlProbe().available()
    assert not ok and "Driver Not Loaded" in why
    install_pynvml(make_fake_pynvml(nvml_recording, count=1))
    ok, why = NvmlProbe(devices=[3]).available()
    assert not ok and "index 3" in why
