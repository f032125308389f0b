"""Published worked examples: Cost-of-Pass (Erol et al., arXiv 2504.13359) and SemiAnalysis
InferenceX's cost per million tokens and tokens per megawatt."""

import math

import pytest

from acceval.economics import (
    Measured,
    Price,
    best_of_n_cost,
    build_cost_inputs,
    compute_bill,
    cost_of_pass,
    cost_per_mtok,
    crf,
    load_catalog,
    owned_usd_per_hour,
    tokens_per_s_per_mw,
)


def test_inferencex_cost_per_million_tokens_worked_example() -> None:
    # H100 at 1,000 tok/s/GPU and $1.30/GPU-hr -> $0.361/Mtok
    assert cost_per_mtok(1.30, 1000) == pytest.approx(0.3611, abs=1e-4)


def test_inferencex_tokens_per_mw_worked_example() -> None:
    # 1000 x 1000 / 1.73 kW all-in -> 578k tok/s per MW
    assert tokens_per_s_per_mw(1000, 1730) == pytest.approx(578_034.7, rel=1e-6)


def test_worked_example_through_the_bill_and_the_catalog() -> None:
    # The same example end to end: catalog price ix-h100-costh ($1.30), one hour at 1000 tok/s.
    cat = load_catalog()
    ci = build_cost_inputs(
        "h100", chips=1, price=Price(catalog="ix-h100-costh"), catalog=cat,
        measured_values=Measured(duration_s=3600, requests=100, correct=100,
                                 output_tokens=3_600_000),
    )
    bill = compute_bill(ci)
    assert bill.cost_per_mtok_output_usd == pytest.approx(0.3611, abs=1e-4)
    assert ci.usd_per_chip_hour.origin == "catalog"
    assert ci.usd_per_chip_hour.date == "2026-04-03"


def test_cost_of_pass_is_cost_per_attempt_over_success_rate() -> None:
    # C = n_in*c_in + n_out*c_out = 1000*1e-6 + 500*4e-6 = $0.003 per attempt; R = 0.6
    c = 1000 * 1e-6 + 500 * 4e-6
    assert cost_of_pass(c, 0.6) == pytest.approx(0.005)
    assert cost_of_pass(c, 0.0) == math.inf


def test_retry_and_best_of_n_forms() -> None:
    assert best_of_n_cost(0.01, 0.5, 1) == pytest.approx(0.02)          # = C / R for n = 1
    assert best_of_n_cost(0.01, 0.5, 2) == pytest.approx(0.02 / 0.75)   # 2C / (1 - 0.25)
    assert best_of_n_cost(0.01, 0.0, 3) == math.inf


def test_capital_recovery_factor() -> None:
    assert crf(0.0, 4) == pytest.approx(0.25)
    assert crf(0.10, 4) == pytest.approx(0.315471, abs=1e-6)
    with pytest.raises(ValueError):
        crf(0.1, 0)


def test_owned_hourly_rate() -> None:
    # $35,040 over 4 years at 0% = $1/h; hosting $73/month = $0.10/h
    assert owned_usd_per_hour(35_040, 4, 0.0, 73.0) == pytest.approx(1.10)
    assert owned_usd_per_hour(35_040, 4, 0.0) == pytest.approx(1.0)
