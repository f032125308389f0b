"""The claim ledger and claims against a run. The runs are built through the real path
(records → ``analyze``) by tests/helpers/verdict_runs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.claims import gather, ledger_rows, shipped_claims
from acceval.claims.spec import AXES, Claims
from acceval.errors import StudyError
from helpers import verdict_runs as vr


def _row(rows: list, cid: str):  # type: ignore[no-untyped-def]
    return next(r for r in rows if r.id == cid)


def test_the_shipped_ledger_holds_the_launch_articles_claims_with_their_sources() -> None:
    rows, _ = ledger_rows(gather(Claims(), None))
    perf = _row(rows, "trn3-us-performance")
    assert (perf.value, perf.unit, perf.kind, perf.comparator) == (4.4, "x", "up to",
                                                                  "Trn2 UltraServer")
    assert perf.value_text == "up to 4.4×"
    assert "best point" in perf.kind_meaning
    assert "4,4 veces" in perf.quote and perf.date and perf.document.startswith("Article")
    values = {r.id: r.value for r in rows}
    assert values["trn3-us-memory-bandwidth"] == 3.9
    assert values["trn3-us-performance-per-watt"] == 4
    assert values["bedrock-performance"] == 3 and values["bedrock-output-tokens-per-mw"] == 5
    assert (values["trn3-chip-fp8"], values["trn3-chip-hbm"], values["trn3-chip-bandwidth"]) \
        == (2.52, 144, 4.9)
    assert (values["trn3-us-chips"], values["trn3-us-hbm"], values["trn3-us-bandwidth"]) \
        == (144, 20.7, 706)


def test_missing_axes_are_flagged_by_name() -> None:
    rows, _ = ledger_rows(gather(Claims(), None))
    assert _row(rows, "trn3-us-performance").missing_axes == list(AXES)
    tokens_mw = _row(rows, "bedrock-output-tokens-per-mw")
    assert "latency_target" not in tokens_mw.missing_axes
    assert "model" in tokens_mw.missing_axes and "quality" in tokens_mw.missing_axes
    assert _row(rows, "trn3-chip-fp8").missing_axes == []  # a peak names its precision
    assert _row(rows, "trn3-us-hbm").missing_axes == []  # a capacity has no workload


def test_the_trainium4_disagreement_is_kept_and_flagged() -> None:
    rows, conflicts = ledger_rows(gather(Claims(), None))
    trn4 = [c for c in conflicts if c.subject == "Trainium4"]
    assert len(trn4) == 1
    assert sorted(trn4[0].values) == [2, 6]
    assert _row(rows, "trn4-fp4-double").conflicts_with == ["trn4-fp4-6x"]
    assert "duplicarán" in trn4[0].sentence and "6 veces" in trn4[0].sentence
    # "almost 4x" and "3.9x" agree: no conflict on the memory bandwidth.
    assert not [c for c in conflicts if c.metric == "memory bandwidth"]


def test_claims_come_from_a_user_file_and_the_study(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "claims:\n  - {id: mine, subject: X, value: 2, unit: x, kind: average, "
        "metric: throughput, comparator: Y, source: {document: deck, quote: '2x'}}\n",
        encoding="utf-8")
    spec = Claims.model_validate({"builtin": False, "file": "mine.yaml", "items": [
        {"id": "inline", "subject": "Z", "value": 10, "unit": "%", "kind": "typical",
         "metric": "saving", "source": {"document": "blog", "quote": "10%"}}]})
    rows, _ = ledger_rows(gather(spec, tmp_path))
    assert [(r.id, r.origin) for r in rows] == [("mine", "mine.yaml"), ("inline", "study")]
    assert len(shipped_claims()) > 10


def test_repeated_claim_ids_are_a_study_error() -> None:
    spec = Claims.model_validate({"items": [
        {"id": "trn3-us-performance", "subject": "X", "value": 1, "unit": "x",
         "kind": "exact", "metric": "m", "comparator": "Y",
         "source": {"document": "d", "quote": "q"}}]})
    with pytest.raises(StudyError, match="repeated: trn3-us-performance"):
        gather(spec, None)


def _claim(cid: str, **over: object) -> dict[str, object]:
    return {"id": cid, "subject": "Trn3 UltraServer", "subject_hardware": "trn3",
            "comparator": "Trn2 UltraServer", "comparator_hardware": "trn2", "value": 1.5,
            "unit": "x", "kind": "up to", "metric": "requests per second",
            "axes": {"model": "m", "precision": "fp8"},
            "source": {"document": "test deck", "quote": "up to 1.5x"}, **over}


def _platform(hw: str) -> tuple[tuple[str, object], ...]:
    return (("platform", {"hardware": hw, "precision": "fp8", "chips": 1}),)


def _run(tmp_path: Path, old_hw: str, claims: dict[str, object]):  # type: ignore[no-untyped-def]
    points = (vr.Point(rate_rps=10.0), vr.Point(rate_rps=20.0))
    specs = [vr.Spec("new", points=points, extra=_platform("trn3")),
             vr.Spec("old", points=points, extra=_platform(old_hw))]
    return vr.build(tmp_path / "run", specs, claims=claims)


def test_a_ratio_claim_meets_a_run_with_matching_axes(tmp_path: Path) -> None:
    result = _run(tmp_path, "trn2", {"builtin": False, "items": [_claim("fast")], "check": [
        {"claim": "fast", "subject": "new", "comparator": "old",
         "measure": "requests_per_s"}]})
    assert result.claims is not None
    check = result.claims.checks[0]
    assert check.status == "compared" and check.differs == []
    assert [p.label for p in check.points] == ["poisson 10 rps", "poisson 20 rps"]
    # Both targets ran the same schedule: the measured ratio is 1, below the claimed 1.5.
    assert check.measured_low == pytest.approx(1.0, abs=0.05)
    assert check.measured_high == pytest.approx(1.0, abs=0.05)
    assert check.above == 2
    assert check.sentence.startswith("claimed up to 1.5×; measured ")
    assert "over 2 points; the claim is above every measured point" in check.sentence


def test_axes_that_differ_refuse_the_comparison_and_say_why(tmp_path: Path) -> None:
    result = _run(tmp_path, "h200", {"items": [_claim("fast")], "check": [
        {"claim": "fast", "subject": "new", "comparator": "old"},
        {"claim": "trn3-us-performance", "subject": "old", "comparator": "new"}]})
    assert result.claims is not None
    mine, shipped = result.claims.checks
    assert mine.status == "refused" and mine.points == []
    assert mine.differs == ["comparator hardware: the claim's comparator is Trn2 UltraServer "
                            "(trn2); target old runs on h200"]
    assert "not compared with new/old" in mine.sentence
    assert shipped.status == "refused"
    assert any(d.startswith("subject hardware") and "old runs on h200" in d
               for d in shipped.differs)


def test_a_claim_naming_a_concurrency_finds_no_comparable_point_in_an_open_loop_run(
        tmp_path: Path) -> None:
    claim = _claim("c8", axes={"model": "m", "precision": "fp8", "concurrency": 8})
    result = _run(tmp_path, "trn2", {"builtin": False, "items": [claim], "check": [
        {"claim": "c8", "subject": "new", "comparator": "old"}]})
    assert result.claims is not None
    check = result.claims.checks[0]
    assert check.status == "no comparable points"
    # Which condition failed, on how many points (two per target), and what would meet it.
    assert check.failed == ["concurrency: the claim's is 8 (4 points; e.g. poisson 10 rps)"]
    assert check.to_run == ["a closed-loop point at concurrency 8 (load: [{concurrency: [8]}])"]
    assert "To compare, run: a closed-loop point at concurrency 8" in check.sentence


def test_a_check_naming_an_unknown_target_is_a_study_error() -> None:
    from acceval.study import study_from_dict

    with pytest.raises(StudyError) as err:
        study_from_dict({"name": "s", "targets": [
            {"name": "a", "endpoint": {"base_url": "http://x/v1", "model": "m"}}],
            "claims": {"check": [{"claim": "x", "subject": "a", "comparator": "nope"}]}})
    messages = [msg for _, msg, _ in err.value.problems]
    assert any("claims.check[0].comparator names 'nope', which is not a target" in m
               for m in messages), messages


def test_two_local_servers_with_no_declared_model_compare_by_the_model_they_list(
        tmp_path: Path) -> None:
    # Two `serve:` targets of one engine, neither declaring a model; each server listed "m".
    local = (("endpoint", None), ("serve", {"engine": "mock"}))
    points = (vr.Point(rate_rps=10.0),)
    specs = [vr.Spec("new", points=points, extra=(*local, *_platform("trn3"))),
             vr.Spec("old", points=points, extra=(*local, *_platform("trn2")))]
    claim = _claim("fast", axes={"precision": "fp8"})
    result = vr.build(tmp_path / "run", specs, claims={"builtin": False, "items": [claim],
                                                       "check": [{"claim": "fast",
                                                                  "subject": "new",
                                                                  "comparator": "old"}]})
    assert result.claims is not None
    check = result.claims.checks[0]
    assert check.status == "compared" and check.differs == []
    assert check.measured_low == pytest.approx(1.0, abs=0.05)
