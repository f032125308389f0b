"""Economics: the whole bill, cost per correct task, the frontier, sensitivity, and energy at
an honest boundary. Pure functions; every input carries provenance. See docs/economics.md
and docs/energy.md.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
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
    from acceval.economics.catalog import (
        Catalog,
        Fact,
        Hardware,
        Instance,
        PriceEntry,
        load_catalog,
    )
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

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "BillItemResult": "acceval.economics.bill", "BillResult": "acceval.economics.bill",
    "CostInputs": "acceval.economics.bill", "FrontierEntryResult": "acceval.economics.bill",
    "FrontierResult": "acceval.economics.bill", "bill_items": "acceval.economics.bill",
    "compute_bill": "acceval.economics.bill", "frontier": "acceval.economics.bill",
    "Catalog": "acceval.economics.catalog", "Fact": "acceval.economics.catalog",
    "Hardware": "acceval.economics.catalog", "Instance": "acceval.economics.catalog",
    "PriceEntry": "acceval.economics.catalog", "load_catalog": "acceval.economics.catalog",
    "BoundaryComponents": "acceval.economics.energy",
    "EnergyComponentResult": "acceval.economics.energy",
    "EnergyProvenance": "acceval.economics.energy", "EnergyResult": "acceval.economics.energy",
    "device_energy_from_power": "acceval.economics.energy",
    "energy_at_boundary": "acceval.economics.energy",
    "energy_outputs": "acceval.economics.energy",
    "best_of_n_cost": "acceval.economics.formulas",
    "cost_of_pass": "acceval.economics.formulas", "cost_per_mtok": "acceval.economics.formulas",
    "crf": "acceval.economics.formulas", "owned_usd_per_hour": "acceval.economics.formulas",
    "tokens_per_s_per_mw": "acceval.economics.formulas", "Measured": "acceval.economics.inputs",
    "build_cost_inputs": "acceval.economics.inputs",
    "cost_inputs_for": "acceval.economics.inputs",
    "estimate_energy": "acceval.economics.inputs", "resolve_rate": "acceval.economics.inputs",
    "SourcedValue": "acceval.economics.provenance",
    "FlipResult": "acceval.economics.sensitivity",
    "SensitivityResult": "acceval.economics.sensitivity",
    "TornadoBarResult": "acceval.economics.sensitivity",
    "sensitivity": "acceval.economics.sensitivity", "Price": "acceval.economics.spec",
    "Sensitivity": "acceval.economics.spec", "StudyCosts": "acceval.economics.spec",
    "Swing": "acceval.economics.spec", "TargetCosts": "acceval.economics.spec",
    "Energy": "acceval.probes.spec"})

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
