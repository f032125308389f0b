"""The three levels and assess_target on every target of a complete fixture run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import acceval.portability as portability
from acceval.errors import StudyError
from acceval.portability import (
    ArtifactCheck,
    Contract,
    artifact_level,
    assess_target,
    performance_level,
    source_level,
)
from acceval.portability.spec import ArtifactSpec
from acceval.report._econ import target_econ
from acceval.results.records import RECORD_SCHEMA
from acceval.results.store import read_records
from acceval.study import Study, study_from_dict
from helpers import run_fixture

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "portability"


def _study(**extra: Any) -> Study:
    data = run_fixture.study().model_dump(mode="json")
    data["targets"][0]["portability"] = {
        "adaptation_hours": 30,
        "fallback_logs": [{"path": str(FIX / "ort_verbose_cuda_documented.log")}],
        "artifact": {"portable": False, "note": "https://example.com/neff-compiler-bound"},
    }
    data["targets"][0]["exit"] = {
        "weights": {"status": "yes", "formats": ["safetensors"], "evidence": "https://x"},
        "data": {"status": "yes", "evidence": "https://x"},
        "code": {"status": "yes", "evidence": "https://x"},
        "engineering_hours": 10, "dual_running_hours": 5,
    }
    data.update(extra)
    return Study.model_validate(data)


def test_public_names_are_pinned() -> None:
    assert set(portability.__all__) == {
        "Answer", "ArtifactCheck", "ArtifactLevel", "ArtifactSpec", "CodeChange", "Contract",
        "ContractCheck", "Evidence", "ExitCostItemResult", "ExitCostResult", "ExitResult",
        "ExitSpec", "FallbackOp", "FallbackReport",
        "LedgerEntry", "LevelResult", "ManagedService", "MigrationLedger", "PerformanceDetails",
        "PerformanceLevel", "SourceDetails", "SourceLevel", "StudyPortability",
        "TargetPortability", "Verdict", "Warmup", "artifact_level",
        "artifact_manifest", "assess_managed_service", "assess_target",
        "build_ledger", "check_artifact", "compare_manifest", "dir_code_change", "exit_cost",
        "exit_test", "git_code_change", "parse_fallback", "parse_neuron_log",
        "parse_neuron_report", "parse_ort_log", "parse_torch_trace", "performance_level",
        "source_level", "study_contract", "warmup_from_records", "write_manifest"}
    assert all(hasattr(portability, n) for n in portability.__all__)


def test_levels_on_fixture_run(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "run")
    fast, cheap = result.target("fast"), result.target("cheap")
    src = source_level(fast, None)
    assert src.verdict == "pass" and src.evidence[0].kind == "measurement"
    fast_fail = fast.model_copy(update={"failure": "connection refused"})
    assert source_level(fast_fail, None).verdict == "fail"

    loose = performance_level(fast, Contract(ttft_ms=1e6, cost_ratio_to_reference=100.0),
                              reference=cheap)
    assert loose.verdict == "pass"
    checks = loose.details.checks
    assert [c.name for c in checks] == ["p95 ttft_ms", "cost ratio to cheap"]
    assert all(c.margin is not None and c.margin > 0 for c in checks)
    tight = performance_level(fast, Contract(ttft_ms=1.0))
    assert tight.verdict == "fail" and (tight.details.checks[0].margin or 0.0) < 0
    assert "contract broken" in tight.summary
    unmeasured = performance_level(fast, Contract(tpot_ms=50.0, percentile=42.0))
    assert unmeasured.verdict == "not assessed"  # p42 is not a stored percentile
    assert performance_level(fast, Contract()).verdict == "not assessed"


def test_a_tpot_bound_has_nothing_to_judge_when_every_answer_is_one_token(
        tmp_path: Path) -> None:
    from acceval.metrics import Distribution

    fast = run_fixture.build(tmp_path / "run").target("fast")
    one = [p.model_copy(update={"summary": p.summary.model_copy(update={
        "output_tokens": Distribution(count=40, mean=1.0, min=1.0, max=1.0),
        "tpot_ms": Distribution(count=0)})}) for p in fast.points]
    single = fast.model_copy(update={"points": one})
    lv = performance_level(single, Contract(ttft_ms=1e6, tpot_ms=50.0))
    assert lv.verdict == "pass"
    assert [c.name for c in lv.details.checks] == ["p95 ttft_ms"]
    # With longer answers an unmeasured TPOT still leaves the level unassessed.
    longer = [p.model_copy(update={"summary": p.summary.model_copy(update={
        "tpot_ms": Distribution(count=0)})}) for p in fast.points]
    assert performance_level(fast.model_copy(update={"points": longer}),
                             Contract(ttft_ms=1e6, tpot_ms=50.0)).verdict == "not assessed"


def test_artifact_level_from_check_or_declaration() -> None:
    ok = ArtifactCheck(path="/m", runtime_a="ortgenai", runtime_b="transformers",
                       manifest_status="verified", prompts=8, agreement_rate=1.0, verdict="pass")
    lv = artifact_level(None, ok)
    assert lv.verdict == "pass" and "agreement 100%" in lv.summary
    assert lv.details is ok
    bad = ArtifactCheck(path="/m", runtime_a="ortgenai", runtime_b="transformers",
                        manifest_status="mismatch", verdict="fail",
                        reasons=("checksum mismatch: model.safetensors: sha256 mismatch",))
    assert "checksum mismatch" in artifact_level(None, bad).summary
    declared = artifact_level(ArtifactSpec(portable=False, note="NEFF bound to neuronx-cc"),
                              None)
    assert declared.verdict == "fail" and declared.evidence[0].kind == "declared"
    assert declared.details is None
    assert artifact_level(None, None).verdict == "not assessed"


def _operating(result: Any) -> dict[str, str | None]:
    return {s.target: s.operating_point for s in result.verdict.standings}


def test_assess_target_fills_the_result_and_the_report_reads_it(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "run")
    study = _study(portability={"reference": "cheap",
                                "contract": {"ttft_ms": 1e6, "cost_ratio_to_reference": 100}})
    records = read_records(tmp_path / "run")
    assert records.schema.names == RECORD_SCHEMA.names
    for t in result.targets:
        t.portability, t.exit = assess_target(study, result.targets, t, base_dir=tmp_path,
                                              records=records, operating=_operating(result))
    fast = result.target("fast")
    assert fast.portability is not None and fast.exit is not None
    assert fast.portability.level == ("source pass · artifact fail · performance pass")
    assert fast.portability.reference == "cheap"
    ledger_items = [e.item for e in fast.portability.ledger.entries]
    assert ledger_items == ["first_request", "fallback_ops", "adaptation_hours"]
    assert fast.exit.readiness == "partial"  # artifact fails, costs incomplete
    assert fast.exit.migration_hours.value == 10
    # the fleet rate comes from the measured bill, with its provenance
    fleet = next(i for i in fast.exit.cost.items if i.name == "dual running")
    assert fleet.usd == pytest.approx(5 * 4.0)
    assert result.target("cheap").exit is None
    perf = result.target("cheap").portability
    assert perf is not None
    assert perf.levels.performance.details.checks[1].measured == pytest.approx(1.0)
    econ = target_econ(fast, result)
    assert econ.portability_level == fast.portability.level
    assert econ.exit_readiness == "partial"
    # the result still round-trips through result.json
    result.save(tmp_path / "run")
    assert type(result).load(tmp_path / "run").target("fast").exit == fast.exit


def test_default_contract_is_the_study_slo(tmp_path: Path) -> None:
    result = run_fixture.build(tmp_path / "run")
    study = _study()
    fast = result.target("fast")
    perf, _ = assess_target(study, result.targets, fast, base_dir=tmp_path,
                            operating=_operating(result))
    assert perf is not None
    checks = perf.levels.performance.details.checks
    assert [c.name for c in checks] == ["p95 ttft_ms", "p95 tpot_ms"]
    assert [c.bound for c in checks] == [200, 30]


def test_unknown_reference_is_a_study_error() -> None:
    data = run_fixture.study().model_dump(mode="json")
    data["portability"] = {"reference": "nope"}
    with pytest.raises(StudyError) as exc:
        study_from_dict(data)
    assert "portability.reference names 'nope'" in str(exc.value.problems)
