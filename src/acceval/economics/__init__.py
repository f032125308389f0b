"""Economics: the whole bill, cost per correct task, the frontier, sensitivity, and energy at
an honest boundary. Pure functions; every input carries provenance. See docs/economics.md
and docs/energy.md.
"""

from acceval.economics.bill import (
    Bill,
    BillItem,
    CostInputs,
    Frontier,
    FrontierEntry,
    bill_items,
    compute_bill,
    frontier,
)
from acceval.economics.catalog import Catalog, Fact, Hardware, Instance, PriceEntry, load_catalog
from acceval.economics.energy import (
    BoundaryComponents,
    EnergyComponent,
    EnergyEstimate,
    EnergyOutputs,
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
from acceval.economics.provenance import Sourced
from acceval.economics.sensitivity import Flip, SensitivityReport, TornadoBar, sensitivity
from acceval.economics.spec import Price, Sensitivity, StudyCosts, Swing, TargetCosts
from acceval.probes.spec import Energy

__all__ = [
    "Bill", "BillItem", "BoundaryComponents", "Catalog", "CostInputs", "Energy",
    "EnergyComponent", "EnergyEstimate", "EnergyOutputs", "Fact", "Flip", "Frontier",
    "FrontierEntry", "Hardware", "Instance", "Measured", "Price", "PriceEntry", "Sensitivity",
    "SensitivityReport", "Sourced", "StudyCosts", "Swing", "TargetCosts", "TornadoBar",
    "best_of_n_cost", "bill_items", "build_cost_inputs", "compute_bill", "cost_inputs_for",
    "cost_of_pass", "cost_per_mtok", "crf", "device_energy_from_power", "energy_at_boundary",
    "energy_outputs", "estimate_energy", "frontier", "load_catalog", "owned_usd_per_hour",
    "resolve_rate", "sensitivity", "tokens_per_s_per_mw",
]
