"""A measured rate above its planned upper bound is flagged with its likely cause (the bound
is a ceiling: the plan's inputs are what is wrong), never shown as an efficiency above 100 %
without a word."""

from __future__ import annotations

from acceval.claims.plan import above_bound_flag


def test_above_the_bound_is_flagged_with_the_likely_cause() -> None:
    flag = above_bound_flag(1.0796, "measured")
    assert flag.startswith("implausible: measured 108 % of the planned upper bound")
    assert "under load" in flag and "not used for any comparison" in flag
    assert "too low for this hardware" in above_bound_flag(1.5, "catalog")


def test_at_or_below_the_bound_has_no_flag() -> None:
    assert above_bound_flag(1.0, "measured") == ""
    assert above_bound_flag(0.12, "catalog") == ""
    assert above_bound_flag(None, "measured") == ""
