"""One compile time for the bill and the migration ledger: declared beats the compile log, which
beats the local server's measured start-up; the others stand beside it with provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acceval.economics import Measured, compute_bill, cost_inputs_for
from acceval.economics.compile_time import COMPILE_RULE, resolve_compile_time
from acceval.economics.provenance import assumed, measured
from acceval.portability import build_ledger
from acceval.portability.ledger import compile_time_for
from acceval.study import Study

LOG = "neuronx-cc: Compilation took 900.0 seconds\nwarm-up graph compiled in 9.5 s\n"


def _study(tmp_path: Path, **costs: Any) -> Study:
    (tmp_path / "compile.log").write_text(LOG)
    return Study.model_validate({
        "name": "ct",
        "targets": [{"name": "trn2", "endpoint": {"base_url": "http://127.0.0.1:9/v1",
                                                  "model": "m"},
                     "price": {"usd_per_hour": 2.0},
                     "costs": {"starts_per_month": 1, **costs},
                     "portability": {"compile_log": {"path": "compile.log"}}}],
        "costs": {"expected_requests_per_month": 100},
    })


def _bill(s: Study, compile_time: Any = None, startup_s: float | None = 0.24) -> Any:
    ci = cost_inputs_for(s.targets[0], s, None,
                         Measured(duration_s=3600, requests=10, correct=10, compile_s=startup_s),
                         compile_time=compile_time)
    assert ci is not None
    return compute_bill(ci)


def test_the_rule_picks_declared_then_log_then_measured() -> None:
    d, log, m = assumed(900.0), measured(909.5, "log"), measured(0.24)
    assert resolve_compile_time(declared=d, from_log=log, measured=m).chosen is d
    assert resolve_compile_time(from_log=log, measured=m).basis == "log"
    assert resolve_compile_time(measured=m).chosen is m
    none = resolve_compile_time()
    assert none.basis == "missing" and none.chosen.value is None
    ct = resolve_compile_time(declared=d, measured=m)
    assert [n for n, _ in ct.beside] == ["measured start-up"]
    assert COMPILE_RULE in ct.explanation


def test_compile_log_reaches_the_bill_and_the_ledger(tmp_path: Path) -> None:
    s = _study(tmp_path)
    ct = compile_time_for(s.targets[0], startup_s=0.24, base_dir=tmp_path)
    assert ct.basis == "log" and ct.chosen.value == pytest.approx(909.5)
    bill = _bill(s, ct)
    assert bill.inputs["compile_s"].value == pytest.approx(909.5)
    assert bill.inputs["compile_s_from_log"] == bill.inputs["compile_s"]
    assert bill.inputs["compile_s_measured"].value == pytest.approx(0.24)
    # 909.5 s at $2/h, one start a month, 10 of 100 monthly requests
    compile_item = next(i for i in bill.items if i.name == "compile")
    assert compile_item.usd == pytest.approx(909.5 / 3600 * 2 * 10 / 100)
    port = s.targets[0].portability
    led = build_ledger("trn2", port, reference=None, base_dir=tmp_path, startup_s=0.24,
                       compile_time=ct)
    used = led.get("compile_s")
    assert used is not None and used.value == bill.inputs["compile_s"].value


def test_declared_compile_time_beats_the_log_and_the_start_up(tmp_path: Path) -> None:
    s = _study(tmp_path, compile_s=900)
    ct = compile_time_for(s.targets[0], startup_s=0.24, base_dir=tmp_path)
    bill = _bill(s, ct)
    assert bill.inputs["compile_s"].value == 900 and bill.inputs["compile_s"].origin == "assumption"
    assert bill.inputs["compile_s_from_log"].value == pytest.approx(909.5)
    assert bill.inputs["compile_s_measured"].value == pytest.approx(0.24)
    # Without the resolved time (no log read), the declaration still wins over the start-up.
    assert _bill(s).inputs["compile_s"].value == 900


def test_portability_declaration_reaches_the_bill(tmp_path: Path) -> None:
    data = _study(tmp_path).model_dump(mode="json")
    data["targets"][0]["portability"] = {"compile_s": 600}
    s = Study.model_validate(data)
    b = _bill(s)
    assert b.inputs["compile_s"].value == 600
    assert b.inputs["compile_s"].source == "study file: targets.trn2.portability.compile_s"


def test_two_declarations_that_differ_are_noted(tmp_path: Path) -> None:
    data = _study(tmp_path, compile_s=900).model_dump(mode="json")
    data["targets"][0]["portability"] = {"compile_s": 600}
    ct = compile_time_for(Study.model_validate(data).targets[0])
    assert ct.chosen.value == 900 and "differs" in ct.explanation


def test_an_unreadable_log_is_left_out_with_a_note(tmp_path: Path) -> None:
    s = _study(tmp_path)
    ct = compile_time_for(s.targets[0], startup_s=0.24, base_dir=tmp_path / "elsewhere")
    assert ct.basis == "measured" and "compile log" in ct.explanation
