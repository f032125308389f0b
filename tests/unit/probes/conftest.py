import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "probes"


class FakeNVMLError(Exception):
    pass


def fake_pynvml(recording: dict[str, Any], *, energy_supported: bool = True,
                count: int = 1) -> types.ModuleType:
    """A stand-in for nvidia-ml-py fed with a recording in NVML's units (one poll per call)."""
    mod = types.ModuleType("pynvml")
    state = {"e": 0, "p": 0, "m": 0, "u": 0, "init": 0}

    def nxt(key: str, values: list[Any]) -> Any:
        v = values[min(state[key], len(values) - 1)]
        state[key] += 1
        return v

    def energy(h: int) -> int:
        if not energy_supported:
            raise FakeNVMLError("Not Supported")
        return int(nxt("e", recording["energy_mj"]))

    def init() -> None:
        state["init"] += 1

    def shutdown() -> None:
        state["init"] -= 1

    mod.NVMLError = FakeNVMLError  # type: ignore[attr-defined]
    mod.nvmlInit = init  # type: ignore[attr-defined]
    mod.nvmlShutdown = shutdown  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCount = lambda: count  # type: ignore[attr-defined]
    mod.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    mod.nvmlDeviceGetName = lambda h: recording["name"]  # type: ignore[attr-defined]
    mod.nvmlDeviceGetTotalEnergyConsumption = energy  # type: ignore[attr-defined]
    mod.nvmlDeviceGetPowerUsage = lambda h: nxt("p", recording["power_mw"])  # type: ignore[attr-defined]
    mod.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        total=recording["memory_total"], used=nxt("m", recording["memory_used"]),
        free=recording["memory_total"] - recording["memory_used"][0])
    mod.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        gpu=recording["utilization_gpu"][min(state["u"], 4)],
        memory=recording["utilization_memory"][min(state["u"], 4)])
    mod._state = state  # type: ignore[attr-defined]
    return mod


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def make_fake_pynvml():
    return fake_pynvml


@pytest.fixture
def nvml_recording() -> dict[str, Any]:
    return json.loads((FIXTURES / "nvml_h100.json").read_text())


@pytest.fixture
def install_pynvml(monkeypatch: pytest.MonkeyPatch):
    def install(mod: types.ModuleType | None) -> None:
        if mod is None:
            monkeypatch.setitem(sys.modules, "pynvml", None)   # import raises ImportError
        else:
            monkeypatch.setitem(sys.modules, "pynvml", mod)
    return install
