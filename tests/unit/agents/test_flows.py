"""Scenario files (bring your own flow) are validated like a study, with errors naming the
field path in the file; the built-in shop comes through the same door (the
``acceval.scenarios`` plugin group); a flow's JSON check is a subset match."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from acceval.agents.flows import contains, load_flows
from acceval.agents.scenarios import SCENARIOS
from acceval.agents.sets import load_set, selected
from acceval.errors import StudyError

GOOD = {"id": "publish", "start_url": "http://127.0.0.1:8123/notes?x=1", "steps": 3,
        "goal": "Publish it.",
        "irreversible": [{"action": "publish", "path": "/notes/*/publish",
                          "object_field": "title"}],
        "check": {"http": {"url": "/api/state", "json": {"published": ["a"]}}}}


def _file(tmp: Path, *flows: dict[str, object]) -> Path:
    path = tmp / "flows.yaml"
    path.write_text(yaml.safe_dump({"scenarios": list(flows)}), encoding="utf-8")
    return path


def test_a_flow_is_read_with_its_guards_start_and_check(tmp_path: Path) -> None:
    (flow,) = load_flows(_file(tmp_path, GOOD))
    assert (flow.id, flow.start, flow.base_url) == ("publish", "/notes?x=1",
                                                    "http://127.0.0.1:8123")
    (guard,) = flow.guards
    assert guard.matches("POST", "/notes/3/publish") and guard.object_field == "title"
    assert flow.irreversible and flow.steps == 3 and flow.perturbations == ()


def test_errors_name_the_field_in_the_file(tmp_path: Path) -> None:
    bad = {**GOOD, "check": {"http": GOOD["check"]["http"],  # type: ignore[index]
                             "dom": {"url": "/", "selector": "li"}},
           "irreversible": [{"action": "publish", "pathh": "/x"}], "start_url": "notes"}
    with pytest.raises(StudyError) as err:
        load_flows(_file(tmp_path, bad, {**GOOD, "steps": 0}))
    fields = [p[0] for p in err.value.problems]
    assert "flows.yaml: scenarios.0.irreversible.0.pathh" in fields
    assert "flows.yaml: scenarios.0.irreversible.0.path" in fields
    assert "flows.yaml: scenarios.0.check" in fields
    assert "flows.yaml: scenarios.0.start_url" in fields  # not an http URL
    assert "flows.yaml: scenarios.1.steps" in fields


def test_the_builtin_shop_comes_through_the_plugin_door(tmp_path: Path) -> None:
    shop = load_set("builtin:shop")
    assert [s.id for s in shop] == list(SCENARIOS)
    assert [s.id for s in selected(shop, ["buy-one"])] == ["buy-one"]
    with pytest.raises(StudyError, match="unknown scenarios"):
        selected(shop, ["no-such"])
    with pytest.raises(StudyError) as err:
        load_set("missing.yaml", tmp_path)
    assert err.value.problems[0][0] == "agents.scenarios"
    (flow,) = load_set("flows.yaml", _file(tmp_path, GOOD).parent)
    assert flow.id == "publish"


def test_the_json_check_is_a_subset_match() -> None:
    have = {"published": ["a"], "drafts": [], "user": {"name": "x", "id": 1}}
    assert contains(have, {"published": ["a"], "user": {"name": "x"}})
    assert not contains(have, {"published": ["a", "b"]})
    assert not contains(have, {"user": {"name": "y"}})
    assert not contains(have, {"missing": None})
