"""The built-in demo: a study shipped with the package, run through the same path as any study.

``--quick`` shrinks the task count and the load points so CI can run it as a test.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import yaml

from acceval.loadgen.spec import FAMILIES
from acceval.study import Study, study_from_dict

DEMO_STUDY = "demo.yaml"


def demo_study_text() -> str:
    return files("acceval").joinpath("data", "studies", DEMO_STUDY).read_text(encoding="utf-8")


def _shrink_load(point: dict[str, Any]) -> dict[str, Any]:
    out = dict(point)
    for key in (f.levels_key for f in FAMILIES.values()):
        if out.get(key) is not None:
            out[key] = out[key][:2]
    out["max_duration_s"] = min(float(out.get("max_duration_s", 120.0)), 10.0)
    out["min_duration_s"] = min(float(out.get("min_duration_s", 0.0)), 2.0)
    return out


def demo_study(*, quick: bool = False) -> Study:
    """The demo study; ``quick`` keeps every feature but fewer tasks and shorter points."""
    data = yaml.safe_load(demo_study_text())
    if quick:
        data["name"] = f"{data['name']}-quick"
        data["tasks"] = {**data["tasks"], "count": min(int(data["tasks"].get("count", 100)), 60)}
        data["load"] = [_shrink_load(p) for p in data.get("load", [])]
        if (data.get("demand") or {}).get("replay"):
            # A day in 4 s still walks every hour's rate; the fault keeps its place in it.
            data["demand"] = {**data["demand"], "replay": {**data["demand"]["replay"],
                                                           "compress_to_s": 4}}
        if data.get("interruption"):
            data["interruption"] = {**data["interruption"], "at_s": 1.5, "down_s": 1.0}
        if data.get("agents"):
            # One trial of three scenarios (1, 4 and 11 steps) still compares the two agents.
            data["agents"] = {**data["agents"], "trials": 1,
                              "only": ["switch-language", "buy-one", "update-and-buy"]}
        if data.get("training"):
            # Still three seeds (MLPerf scoring needs them) and the killed rank; a smaller
            # held-out evaluation and a shorter profiled window.
            tr = data["training"]
            for p in tr.get("platforms", []):
                if p.get("builtin"):
                    p["builtin"] = {**p["builtin"], "eval_sequences": 128,
                                    "profile_steps": [6, 7]}
    return study_from_dict(data, source=f"built-in {DEMO_STUDY}")
