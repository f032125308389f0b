"""Vendor claims and what a chip could do: the claim ledger (claims keep their axes), claims
checked against a run, and the roofline planner (``acceval plan``). Planned numbers are
labelled planned and never mixed with measured ones (docs/planning.md)."""

from acceval.claims.against import Side, check_claim
from acceval.claims.ledger import gather, ledger_rows, shipped_claims
from acceval.claims.plan import PlanTarget, plan_target, resolve_shape

__all__ = ["PlanTarget", "Side", "check_claim", "gather", "ledger_rows", "plan_target",
           "resolve_shape", "shipped_claims"]
