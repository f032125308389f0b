"""Vendor claims and what a chip could do: the claim ledger (claims keep their axes), claims
checked against a run, and the roofline planner (``acceval plan``). Planned numbers are
labelled planned and never mixed with measured ones (docs/planning.md)."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.claims.against import Side, check_claim
    from acceval.claims.ledger import gather, ledger_rows, shipped_claims
    from acceval.claims.plan import PlanTarget, plan_target, resolve_shape

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "Side": "acceval.claims.against", "check_claim": "acceval.claims.against",
    "gather": "acceval.claims.ledger", "ledger_rows": "acceval.claims.ledger",
    "shipped_claims": "acceval.claims.ledger", "PlanTarget": "acceval.claims.plan",
    "plan_target": "acceval.claims.plan", "resolve_shape": "acceval.claims.plan"})

__all__ = ["PlanTarget", "Side", "check_claim", "gather", "ledger_rows", "plan_target",
           "resolve_shape", "shipped_claims"]
