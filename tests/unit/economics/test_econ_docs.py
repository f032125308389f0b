"""docs/economics.md and docs/energy.md name every bill item, swing and probe the code has."""

from pathlib import Path

from acceval.economics import Measured, Price, Sensitivity, bill_items, build_cost_inputs
from acceval.plugins import BUILTINS
from acceval.probes import make_probe
from acceval.probes.spec import BOUNDARY_LEVELS, Energy

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_economics_doc_names_every_item_and_swing() -> None:
    text = (DOCS / "economics.md").read_text()
    ci = build_cost_inputs("t", chips=1, price=Price(usd_per_hour=1.0),
                           measured_values=Measured(duration_s=1, requests=1, correct=1))
    for item in bill_items(ci):
        assert f"| {item.name} |" in text, item.name
    for name in Sensitivity.model_fields:
        assert name.split("_")[0] in text, name


def test_energy_doc_names_every_level_and_probe() -> None:
    text = (DOCS / "energy.md").read_text()
    for level in BOUNDARY_LEVELS:
        assert f"`{level}`" in text
    for probe in BUILTINS["acceval.probes"]:
        assert f"| `{probe}` |" in text
        url = "http://127.0.0.1:9400/metrics" if probe == "dcgm" else None
        assert type(make_probe(Energy(probe=probe, exporter_url=url), pids=[1])).__name__ in text
