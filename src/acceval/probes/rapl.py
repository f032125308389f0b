"""Intel/AMD RAPL energy counters from ``/sys/class/powercap/intel-rapl:*``.

Each zone has ``name`` (``package-0``, ``dram``, ``core``...), ``energy_uj`` (a microjoule
counter) and ``max_energy_range_uj`` (where it wraps to 0). Package zones are read by default;
``core``/``uncore`` subzones are inside the package and would double count. Since kernel 5.10
``energy_uj`` is readable by root only; then the probe says so and reads nothing.
Boundary: CPU package (+ DRAM if asked), not the node (docs/energy.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acceval.probes.base import Sample, rel_ns

POWERCAP = Path("/sys/class/powercap")


@dataclass(slots=True)
class _Zone:
    name: str
    path: Path
    max_uj: int
    last_uj: int = 0
    total_uj: int = 0


def counter_delta(prev: int, now: int, max_range: int) -> int:
    """Counter increase from ``prev`` to ``now``, across at most one wraparound."""
    return now - prev if now >= prev else now + max_range - prev


class RaplProbe:
    """Cumulative joules per RAPL package (and optionally DRAM) zone since start."""

    name = "rapl"

    def __init__(self, root: Path = POWERCAP, include_dram: bool = False) -> None:
        self.root = Path(root)
        self.include_dram = include_dram
        self._zones: list[_Zone] = []
        self._t0_ns = 0

    def _find(self) -> list[_Zone]:
        zones = []
        for d in sorted(self.root.glob("intel-rapl:*")):
            try:
                name = (d / "name").read_text().strip()
            except OSError:
                continue
            if name.startswith("package") or (self.include_dram and name == "dram"):
                label = name if name.startswith("package") else f"{d.name}-{name}"
                max_uj = int((d / "max_energy_range_uj").read_text())
                zones.append(_Zone(label, d / "energy_uj", max_uj))
        return zones

    def available(self) -> tuple[bool, str]:
        try:
            zones = self._find()
        except (OSError, ValueError) as exc:
            return False, f"cannot read RAPL zones under {self.root}: {exc}"
        if not zones:
            return False, f"no RAPL package zones under {self.root} (not Intel/AMD, or a VM)"
        try:
            for z in zones:
                int(z.path.read_text())
        except PermissionError:
            return False, (f"permission denied reading {zones[0].path} (root-only since "
                           "Linux 5.10; grant read access or run as root)")
        except (OSError, ValueError) as exc:
            return False, f"cannot read {zones[0].path}: {exc}"
        return True, ""

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns
        self._zones = self._find()
        for z in self._zones:
            z.last_uj = int(z.path.read_text())
            z.total_uj = 0

    def sample(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        out = []
        for z in self._zones:
            now = int(z.path.read_text())
            z.total_uj += counter_delta(z.last_uj, now, z.max_uj)
            z.last_uj = now
            out.append(Sample(t, self.name, "energy_j", z.total_uj / 1e6, "J", z.name))
        return out

    def stop(self) -> list[Sample]:
        return self.sample()
