"""Load families: one discriminated union, read from the same YAML as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.loadgen.spec import (
    Concurrency,
    ConstantRate,
    GammaRate,
    PoissonRate,
    family,
    load_point,
)
from acceval.pipeline import check_study
from acceval.study import study_from_dict

ROOT = Path(__file__).resolve().parents[3]
TARGETS = [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}}]


def _study(*load: dict[str, object]) -> dict[str, object]:
    return {"name": "lf", "targets": TARGETS, "load": list(load)}


def _problems(data: dict[str, object]) -> dict[str, tuple[str, str]]:
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    return {path: (msg, hint) for path, msg, hint in info.value.problems}


def test_each_levels_key_picks_its_family() -> None:
    s = study_from_dict(_study({"concurrency": [1, 4]}, {"constant_rps": [2]},
                               {"poisson_rps": [5.0]}, {"gamma_rps": [3], "burstiness": 0.5}))
    assert [type(f) for f in s.load] == [Concurrency, ConstantRate, PoissonRate, GammaRate]
    assert [(f.kind, f.loop) for f in s.load] == [
        ("concurrency", "closed"), ("constant", "open"), ("poisson", "open"), ("gamma", "open")]
    assert s.load[0].levels == [1.0, 4.0]


def test_each_family_names_its_points() -> None:
    assert load_point({"concurrency": [8]}).label(8) == "concurrency 8"
    assert load_point({"poisson_rps": [2.5]}).label(2.5) == "poisson 2.5 rps"
    assert load_point({"constant_rps": [3]}).label(3) == "constant 3 rps"
    gamma = load_point({"gamma_rps": [4], "burstiness": 0.25})
    assert gamma.label(4) == "gamma 4 rps (burstiness 0.25)"


def test_only_open_loops_have_a_schedule() -> None:
    assert len(ConstantRate.schedule(4.0, 1.0)) == 4
    with pytest.raises(ValueError, match="closed loop"):
        Concurrency.schedule(4.0, 1.0)
    with pytest.raises(ValueError, match="unknown arrival kind 'weibull'"):
        family("weibull")


def test_a_run_folder_of_0_1_0_still_validates() -> None:
    # study.yaml and result.json of 0.1.0 dumped every kind's key, the unused ones as null.
    old = {"concurrency": None, "constant_rps": None, "poisson_rps": [2.0, 5.0],
           "gamma_rps": None, "burstiness": 1.0, "warmup_requests": 0, "warmup_s": 0.0,
           "min_duration_s": 0.0, "min_requests": None, "max_duration_s": 120.0,
           "max_in_flight": 4096}
    (fam,) = study_from_dict(_study(old)).load
    assert isinstance(fam, PoissonRate) and fam.levels == [2.0, 5.0]


def test_exactly_one_levels_key() -> None:
    for load in ({"concurrency": [1], "poisson_rps": [2.0]}, {"warmup_s": 1}):
        ((path, (msg, _)),) = _problems(_study(load)).items()
        assert path == "load[0]" and "give exactly one of" in msg


def test_a_misspelt_levels_key_is_named_with_the_right_one() -> None:
    probs = _problems(_study({"concurency": [1]}))
    assert "did you mean 'concurrency'" in probs["load[0].concurency"][1]


def test_errors_inside_a_family_name_the_field_without_the_tag() -> None:
    probs = _problems(_study({"gamma_rps": [1], "warmup_x": 1}, {"poisson_rps": [-1]}))
    assert "did you mean 'warmup_s'" in probs["load[0].warmup_x"][1]
    assert "positive levels" in probs["load[1]"][0]
    probs = _problems(_study({"concurrency": [1.5]}))
    assert "load[0].concurrency[0]" in probs


def test_a_family_that_is_not_a_mapping() -> None:
    assert "is a mapping" in _problems(_study("nope"))["load[0]"][0]  # type: ignore[arg-type]


def test_the_default_is_one_client() -> None:
    (fam,) = study_from_dict({"name": "d", "targets": TARGETS}).load
    assert isinstance(fam, Concurrency) and fam.levels == [1.0]


@pytest.mark.parametrize("path", sorted([*ROOT.glob("examples/*.yaml"),
                                         *ROOT.glob("src/acceval/data/studies/*.yaml")]),
                         ids=lambda p: p.name)
def test_shipped_studies_still_validate(path: Path) -> None:
    from acceval.agents.browser import unavailable
    from acceval.study import load_study

    only_agents = load_study(path)
    if (only_agents.agents is not None and not only_agents.targets
            and only_agents.training is None and unavailable() is not None):
        pytest.skip(f"a study of agents only validates where a browser starts: "
                    f"{unavailable()}")
    study, _ = check_study(path)
    assert study.load
