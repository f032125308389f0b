"""Scalar cost formulas, each one documented in docs/economics.md with its source.

Pure functions of plain numbers; :mod:`acceval.economics.bill` composes them.
"""

from __future__ import annotations

import math

HOURS_PER_MONTH = 730.0   # 8760 / 12, the cloud billing convention
HOURS_PER_YEAR = 8760.0
J_PER_KWH = 3.6e6


def crf(rate: float, years: float) -> float:
    """Capital recovery factor CRF(r, n) = r(1+r)^n / ((1+r)^n - 1); 1/n when r = 0."""
    if years <= 0:
        raise ValueError("years must be > 0")
    if rate == 0:
        return 1.0 / years
    g: float = (1.0 + rate) ** years
    return rate * g / (g - 1.0)


def owned_usd_per_hour(
    capex_usd: float, lifetime_years: float, interest_rate: float,
    hosting_usd_per_month: float | None = None,
) -> float:
    """Hourly cost of owned hardware without electricity: capex x CRF / 8760 + hosting / 730."""
    hourly = capex_usd * crf(interest_rate, lifetime_years) / HOURS_PER_YEAR
    if hosting_usd_per_month is not None:
        hourly += hosting_usd_per_month / HOURS_PER_MONTH
    return hourly


def cost_per_mtok(usd_per_hour: float, tokens_per_s: float) -> float:
    """InferenceX: cost per million tokens = $/h / (tok/s x 3600 / 1e6); inf at zero tokens."""
    if tokens_per_s <= 0:
        return math.inf
    return usd_per_hour / (tokens_per_s * 3600.0 / 1e6)


def cost_of_pass(cost_per_attempt_usd: float, success_rate: float) -> float:
    """Cost-of-Pass (Erol et al. 2025): expected cost of a correct answer, C / R; inf at R = 0."""
    if success_rate <= 0:
        return math.inf
    return cost_per_attempt_usd / success_rate


def best_of_n_cost(cost_per_attempt_usd: float, success_rate: float, n: int) -> float:
    """Best-of-n with a perfect verifier: n x C / (1 - (1 - R)^n)."""
    p = 1.0 - (1.0 - success_rate) ** n
    return math.inf if p <= 0 else n * cost_per_attempt_usd / p


def tokens_per_s_per_mw(tokens_per_s: float, power_w: float) -> float:
    """InferenceX tpPerMw: tokens/s per MW of power at the stated boundary."""
    if power_w <= 0:
        raise ValueError("power_w must be > 0")
    return tokens_per_s * 1e6 / power_w
