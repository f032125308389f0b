"""How fast the 24 h fleet what-if runs at 1,000 req/s (acceval.capacity.simulate_fleet).

Scenarios (one day, one-second steps, Poisson arrivals, a replica carries 40 rps within the
SLO, 20 % headroom):

- flat-healthy: 1,000 rps all day, no failures (the vectorised fast path only);
- business-failures: business-hours shape peaking at 1,000 rps, MTBF 6 h, 600 s restarts;
- business-n+1: the spare-capacity what-if (two simulations: N and N+1);
- flat-overloaded: a fleet sized for 90 % of the demand, so a queue exists almost every
  second (the per-second backlog loop runs all day: the slow path).

Prints a table and refreshes the "## Fleet simulation" section of docs/benchmarks.md.
Usage: ``.venv/bin/python benchmarks/simulate.py [--repeat 5] [--no-write]``
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from acceval.capacity import (
    DemandProfile,
    builtin_profile,
    plan_fleet,
    simulate_fleet,
    spare_capacity_whatif,
)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
HEADING = "## Fleet simulation"
MU = 40.0


def _scenarios() -> dict[str, Callable[[], Any]]:
    flat = DemandProfile((1000.0,) * 24)
    day = builtin_profile("business-hours", 1000.0)
    flat_plan = plan_fleet(flat, MU, headroom=0.2)
    day_plan = plan_fleet(day, MU, headroom=0.2)
    tight_plan = plan_fleet(DemandProfile((900.0,) * 24), MU)  # replicas for 90 % of it
    return {
        "flat-healthy": lambda: simulate_fleet(flat, flat_plan, mtbf_h=None, seed=1),
        "business-failures": lambda: simulate_fleet(day, day_plan, mtbf_h=6, restart_s=600,
                                                    seed=1),
        "business-n+1": lambda: spare_capacity_whatif(day, day_plan, mtbf_h=6, restart_s=600,
                                                      seed=1, usd_per_replica_hour=40.0),
        "flat-overloaded": lambda: simulate_fleet(flat, tight_plan, mtbf_h=None, seed=1),
    }


def _arrivals(r: Any) -> int:
    if hasattr(r, "with_spares"):
        return int(r.without.arrivals + r.with_spares.arrivals)
    return int(r.arrivals)


def _outcome(r: Any) -> str:
    if hasattr(r, "with_spares"):
        return (f"N: {r.without.slo_attainment:.4%} on time; N+1: "
                f"{r.with_spares.slo_attainment:.4%}; +{r.extra_replica_hours:g} replica-h")
    return f"{r.slo_attainment:.4%} on time, {r.lost:,.0f} lost, {r.failures} failures"


def run(repeat: int) -> list[dict[str, Any]]:
    rows = []
    for name, fn in _scenarios().items():
        fn()  # warm caches and imports
        walls = []
        result = None
        for _ in range(repeat):
            t0 = time.perf_counter_ns()
            result = fn()
            walls.append((time.perf_counter_ns() - t0) / 1e9)
        med = statistics.median(walls)
        n_requests = _arrivals(result)
        rows.append({"scenario": name, "requests": n_requests, "wall_s": med,
                     "min_s": min(walls), "max_s": max(walls),
                     "req_per_wall_s": n_requests / med, "outcome": _outcome(result)})
    return rows


def table(rows: list[dict[str, Any]], repeat: int) -> str:
    cpu = platform.processor() or platform.machine()
    lines = [
        HEADING, "",
        "`benchmarks/simulate.py`: one simulated day (86,400 one-second steps) of "
        "`acceval.capacity.simulate_fleet` at 1,000 req/s, median of "
        f"{repeat} runs after a warm-up run. Machine: {os.cpu_count()} cores ({cpu}), "
        f"Python {sys.version.split()[0]}, numpy {np.__version__}. "
        "\"Simulated requests\" counts the Poisson arrivals drawn for the day (both runs for "
        "N+1); the model is a per-second "
        "fluid queue, so the cost does not grow with the request rate (docs/capacity.md).", "",
        "| scenario | simulated requests | wall (median) | min–max | simulated req per wall s "
        "| outcome |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(f"| {r['scenario']} | {r['requests']:,} | {r['wall_s'] * 1e3:.0f} ms | "
                     f"{r['min_s'] * 1e3:.0f}–{r['max_s'] * 1e3:.0f} ms | "
                     f"{r['req_per_wall_s']:.3g} | {r['outcome']} |")
    lines += ["", "Refresh with `.venv/bin/python benchmarks/simulate.py`.", ""]
    return "\n".join(lines)


def write_section(section: str, path: Path = DOC) -> None:
    """Replace this benchmark's section in ``path`` (or append it), leaving the rest alone."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        new = pattern.sub(lambda _: section.rstrip("\n") + "\n\n", text, count=1)
    else:
        new = text.rstrip("\n") + "\n\n" + section
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    rows = run(args.repeat)
    section = table(rows, args.repeat)
    print(section)
    if not args.no_write:
        write_section(section)
        print(f"updated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
