"""Economics: the whole bill, cost per correct task, the frontier, sensitivity, and energy at
an honest boundary. Pure functions; every input carries provenance. See docs/economics.md
and docs/energy.md.
"""

from acceval.economics.bill import (
    BillItemResult,
    BillResult,
    CostInputs,
    FrontierEntryResult,
    FrontierResult,
    bill_items,
    compute_bill,
    frontier,
)
from acceval.economics.catalog import Catalog, Fact, Hardware, Instance, PriceEntry, load_catalog
from acceval.economics.energy import (
    BoundaryComponents,
    EnergyComponentResult,
    EnergyProvenance,
    EnergyResult,
    device_energy_from_power,
    energy_at_boundary,
    energy_outputs,
)
from acceval.economics.formulas import (
    best_of_n_cost,
    cost_of_pass,
    cost_per_mtok,
    crf,
    owned_usd_per_hour,
    tokens_per_s_per_mw,
)
from acceval.economics.inputs import (
    Measured,
    build_cost_inputs,
    cost_inputs_for,
    estimate_energy,
    resolve_rate,
)
from acceval.economics.provenance import SourcedValue
from acceval.economics.sensitivity import (
    FlipResult,
    SensitivityResult,
    TornadoBarResult,
    sensitivity,
)
from acceval.economics.spec import Price, Sensitivity, StudyCosts, Swing, TargetCosts
from acceval.probes.spec import Energy

__all__ = [
    "BillItemResult", "BillResult", "BoundaryComponents", "Catalog", "CostInputs", "Energy",
    "EnergyComponentResult", "EnergyProvenance", "EnergyResult", "Fact", "FlipResult",
    "FrontierEntryResult", "FrontierResult", "Hardware", "Instance", "Measured", "Price",
    "PriceEntry", "Sensitivity", "SensitivityResult", "SourcedValue", "StudyCosts", "Swing",
    "TargetCosts", "TornadoBarResult",
    "best_of_n_cost", "bill_items", "build_cost_inputs", "compute_bill", "cost_inputs_for",
    "cost_of_pass", "cost_per_mtok", "crf", "device_energy_from_power", "energy_at_boundary",
    "energy_outputs", "estimate_energy", "frontier", "load_catalog", "owned_usd_per_hour",
    "resolve_rate", "sensitivity", "tokens_per_s_per_mw",
]
