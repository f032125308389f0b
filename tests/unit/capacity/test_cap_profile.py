"""Demand profiles: built-in shapes, CSV import (errors name line and column), bursts,
growth, hourly means and peaks, and the study-file section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from acceval.capacity import (
    BUILTIN_SHAPES,
    Burst,
    BurstWindow,
    Demand,
    DemandProfile,
    builtin_profile,
    load_profile,
    parse_profile_csv,
)
from acceval.errors import StudyError
from acceval.study import study_from_dict


@pytest.mark.parametrize("name", sorted(BUILTIN_SHAPES))
def test_builtin_shape_peaks_at_peak_rps(name: str) -> None:
    p = builtin_profile(name, 250.0)
    assert len(p.hourly_rps) == 24
    assert max(p.hourly_rps) == pytest.approx(250.0)
    assert min(p.hourly_rps) > 0
    assert p.peak_rps == pytest.approx(250.0)


def test_builtin_shapes_put_their_peaks_where_named() -> None:
    assert int(np.argmax(builtin_profile("evening-peak", 1.0).hourly_rps)) in (19, 20, 21, 22)
    assert 9 <= int(np.argmax(builtin_profile("business-hours", 1.0).hourly_rps)) <= 17
    assert int(np.argmax(builtin_profile("overnight-batch", 1.0).hourly_rps)) <= 5
    flat = builtin_profile("flat", 7.0)
    assert flat.mean_rps == pytest.approx(7.0)


def test_unknown_builtin_names_the_choices() -> None:
    with pytest.raises(StudyError, match="business-hours"):
        builtin_profile("weekday", 1.0)


def test_rate_at_is_piecewise_hourly_and_wraps() -> None:
    p = DemandProfile(tuple(float(h) for h in range(24)))
    assert p.rate_at([0, 3599.9, 3600, 23 * 3600 + 5]).tolist() == [0, 0, 1, 23]
    assert p.rate_at(86_400 + 7200).item() == 2.0  # the day repeats


def test_csv_rps_day_in_any_order() -> None:
    rows = "\n".join(f"{h},{10 + h}" for h in reversed(range(24)))
    p = parse_profile_csv("hour,rps\n" + rows + "\n")
    assert p.hourly_rps[0] == 10 and p.hourly_rps[23] == 33


def test_csv_weights_need_and_scale_to_peak() -> None:
    text = "hour,weight\n" + "\n".join(f"{h},{1 if h == 12 else 0.5}" for h in range(24))
    p = parse_profile_csv(text, peak_rps=40.0)
    assert p.hourly_rps[12] == 40.0 and p.hourly_rps[0] == 20.0
    with pytest.raises(StudyError, match=r"needs demand\.peak_rps"):
        parse_profile_csv(text)


def test_csv_week_has_168_hours() -> None:
    text = "hour,rps\n" + "\n".join(f"{h},{h % 24}" for h in range(168))
    p = parse_profile_csv(text)
    assert len(p.hourly_rps) == 168 and p.period_s == 168 * 3600


def test_csv_rps_rescaled_by_peak() -> None:
    text = "hour,rps\n" + "\n".join(f"{h},{2 * h}" for h in range(24))
    assert max(parse_profile_csv(text, peak_rps=10.0).hourly_rps) == pytest.approx(10.0)


@pytest.mark.parametrize(("text", "message"), [
    ("hour,rps\n0,1\n1,abc\n", r"line 3, column 2 \(rps\): 'abc' is not a number"),
    ("hour,rps\n0,1\nx,2\n", r"line 3, column 1 \(hour\): 'x' is not a whole hour"),
    ("hour,rps\n0,1\n0,2\n", r"line 3, column 1 \(hour\): hour 0 appears twice"),
    ("hour,rps\n0,-1\n", r"line 2, column 2 \(rps\): -1 must be a finite number >= 0"),
    ("hour,rps\n200,1\n", r"line 2, column 1 \(hour\): 200 is outside 0..167"),
    ("hour,rps\n0,1,2\n", r"line 2, column 3 \(row\): expected 2 columns"),
    ("time,rps\n0,1\n", r"line 1: header is 'time,rps'"),
    ("", "empty"),
    ("hour,rps\n" + "\n".join(f"{h},1" for h in range(20)), "missing 20, 21, 22, 23"),
])
def test_csv_errors_name_line_and_column(text: str, message: str) -> None:
    with pytest.raises(StudyError, match=message):
        parse_profile_csv(text, source="d.csv")


def test_blank_lines_keep_line_numbers() -> None:
    with pytest.raises(StudyError, match="line 4, column 2"):
        parse_profile_csv("hour,rps\n\n0,1\n1,?\n")


def test_burst_multiplies_inside_its_window_only() -> None:
    base = DemandProfile((10.0,) * 24, (BurstWindow(9.5 * 3600, 1800, 3.0),))
    assert base.rate_at([9 * 3600, 9.5 * 3600, 9.99 * 3600, 10 * 3600]).tolist() == [
        10, 30, 30, 10]
    mean, peak = base.hourly()
    assert mean[9] == pytest.approx(20.0) and peak[9] == 30.0 and peak[8] == 10.0


def test_daily_burst_wraps_past_midnight_and_repeats() -> None:
    p = DemandProfile((1.0,) * 24, (BurstWindow(23 * 3600, 2 * 3600, 2.0),), days=2)
    assert p.rate_at([23.5 * 3600, 0.5 * 3600, 1.5 * 3600, 86_400 + 23.5 * 3600]).tolist() == [
        2, 2, 1, 2]
    once = DemandProfile((1.0,) * 24, (BurstWindow(3600, 3600, 5.0, None),), days=2)
    assert once.rate_at([5400, 86_400 + 5400]).tolist() == [5, 1]


def test_expected_requests_integrates_the_rate() -> None:
    p = DemandProfile((1.0,) * 24, (BurstWindow(0, 1800, 3.0),))
    assert p.expected_requests() == pytest.approx(86_400 + 1800 * 2)


def test_load_profile_applies_growth_bursts_and_days(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("hour,weight\n" + "\n".join(f"{h},1" for h in range(24)))
    d = Demand(profile="csv:d.csv", peak_rps=10.0, growth=1.5, days=2,
               bursts=[Burst(at_hour=12, duration_h=1, multiplier=2)])
    p = load_profile(d, base_dir=tmp_path)
    assert p.hourly_rps[0] == 15.0 and p.days == 2
    assert p.rate_at(12.5 * 3600).item() == 30.0
    assert p.rate_at(86_400 + 12.5 * 3600).item() == 30.0


def test_load_profile_missing_csv_says_which_file(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="cannot read"):
        load_profile(Demand(profile="csv:none.csv"), base_dir=tmp_path)


def test_demand_spec_validates_at_the_edge() -> None:
    with pytest.raises(ValidationError, match="needs peak_rps"):
        Demand(profile="builtin:flat")
    with pytest.raises(ValidationError, match="builtin:NAME or csv:PATH"):
        Demand(profile="flat", peak_rps=1)
    with pytest.raises(ValidationError):
        Demand.model_validate({"profile": "builtin:flat", "peak_rps": 1, "peak": 2})


def test_study_carries_demand_and_availability() -> None:
    s = study_from_dict({
        "name": "s",
        "targets": [{"name": "a", "endpoint": {"base_url": "http://127.0.0.1:1/v1", "model": "m"},
                     "availability": {"regions": ["eu-west-1"], "quota_replicas": 4}}],
        "demand": {"profile": "builtin:evening-peak", "peak_rps": 40,
                   "replay": {"compress_to_s": 300, "seed": 5}},
    })
    assert s.demand is not None and s.demand.replay.compress_to_s == 300
    assert s.targets[0].availability is not None
    assert s.targets[0].availability.quota_replicas == 4
    with pytest.raises(StudyError, match=r"demand\.peak_rps"):
        study_from_dict({"name": "s", "targets": [{"name": "a", "endpoint": {
            "base_url": "http://127.0.0.1:1/v1", "model": "m"}}],
            "demand": {"profile": "builtin:flat", "peak_rps": -1}})
