import pytest
from pydantic import ValidationError

from acceval.economics import Energy, Price, StudyCosts, Swing, TargetCosts
from acceval.errors import StudyError
from acceval.study import study_from_dict


def test_price_needs_a_rate_a_catalog_id_or_owned_capex() -> None:
    with pytest.raises(ValidationError, match="usd_per_hour, catalog"):
        Price()
    with pytest.raises(ValidationError, match="capex_usd is for pricing: owned"):
        Price(capex_usd=1000)
    assert Price(pricing="owned", capex_usd=1000).lifetime_years == 4.0


def test_utilization_bounds_and_extra_fields() -> None:
    with pytest.raises(ValidationError):
        TargetCosts(utilization=0)
    with pytest.raises(ValidationError):
        TargetCosts(utilization=1.5)
    with pytest.raises(ValidationError):
        Energy(pue=0.9)
    with pytest.raises(ValidationError):
        Energy.model_validate({"probe": "nvml", "boundery": "node"})


def test_swing_is_relative_or_absolute() -> None:
    assert Swing(pct=30).bounds(10) == pytest.approx((7.0, 13.0))
    assert Swing(low=0.3, high=0.9).bounds(1.0) == (0.3, 0.9)
    with pytest.raises(ValidationError):
        Swing(pct=10, low=1, high=2)
    with pytest.raises(ValidationError):
        Swing(low=2, high=1)


def test_defaults_declared_in_the_brief() -> None:
    s = StudyCosts().sensitivity
    assert s.price.pct == 30 and s.engineering_hours.pct == 50
    assert (s.utilization.low, s.utilization.high) == (0.3, 0.9)


def test_study_file_carries_price_costs_energy() -> None:
    study = study_from_dict({
        "name": "s",
        "targets": [{
            "name": "h200", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
            "platform": {"hardware": "h200", "chips": 8},
            "price": {"catalog": "aws-p5e-48xlarge-cb"},
            "costs": {"utilization": 0.4, "engineering_hours": 16},
            "energy": {"probe": "nvml", "boundary": "facility", "pue": 1.15},
        }],
        "costs": {"engineer_usd_per_hour": 120, "sensitivity": {"price": {"pct": 10}}},
    })
    t = study.targets[0]
    assert t.price is not None and t.price.catalog == "aws-p5e-48xlarge-cb"
    assert t.costs.utilization == 0.4 and t.energy.pue == 1.15
    assert study.costs.sensitivity.price.pct == 10
    assert study.costs.sensitivity.utilization.low == 0.3     # other defaults kept


def test_bad_economics_field_is_named_with_its_path() -> None:
    with pytest.raises(StudyError) as err:
        study_from_dict({"name": "s", "targets": [{
            "name": "a", "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
            "costs": {"utilisation": 0.5}}]})
    assert "targets[0].costs.utilisation" in str(err.value)
    assert "utilization" in str(err.value)


def test_every_field_has_a_description() -> None:
    from acceval.economics.spec import Sensitivity

    for model in (Price, TargetCosts, Swing, Sensitivity, StudyCosts, Energy):
        for name, f in model.model_fields.items():
            assert f.description, f"{model.__name__}.{name} has no description"
