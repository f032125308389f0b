"""A replay can send a share of the demand (one replica's slice of a fleet); the fleet plan
keeps the whole demand."""

from __future__ import annotations

import pytest

from acceval.capacity import load_profile
from acceval.capacity.replay import plan_replay, replay_profile
from acceval.capacity.spec import Demand


def _demand(share: float) -> Demand:
    return Demand.model_validate({"profile": "builtin:business-hours", "peak_rps": 2400,
                                  "replay": {"compress_to_s": 16, "seed": 7, "share": share}})


def test_the_replay_sends_its_share_and_the_plan_keeps_the_whole_demand() -> None:
    whole, slice_ = _demand(1.0), _demand(0.05)
    assert replay_profile(slice_).peak_rps == pytest.approx(0.05 * 2400)
    assert load_profile(slice_).peak_rps == pytest.approx(2400)  # what the fleet is sized for
    full, part = plan_replay(whole, 1), plan_replay(slice_, 1)
    assert full is not None and part is not None
    ratio = part.schedule_ns.size / full.schedule_ns.size
    assert ratio == pytest.approx(0.05, rel=0.15)  # Poisson counts: a few percent of noise


def test_a_share_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match="share"):
        _demand(0.0)
    with pytest.raises(ValueError, match="share"):
        _demand(1.5)
