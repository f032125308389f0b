"""The planner against hand-computed cases (docs/planning.md, "Worked cases"): a 7B and a 70B
model on one H200 and one Trainium3, at 1,024 input and 1,024 output tokens, 0.9 of memory
usable. The expected numbers are the document's arithmetic, not the formulas re-derived."""

from __future__ import annotations

import pytest

from acceval.claims import PlanTarget, plan_target
from acceval.claims.plan import PlanContextResult
from acceval.claims.spec import PlanSpec
from acceval.economics import load_catalog

LLAMA_7B = {"name": "7b", "parameters": 6.74e9, "layers": 32, "hidden": 4096, "heads": 32,
            "kv_heads": 32, "head_dim": 128, "vocab": 32000}
LLAMA_70B = {"name": "70b", "parameters": 70.6e9, "layers": 80, "hidden": 8192, "heads": 64,
             "kv_heads": 8, "head_dim": 128, "vocab": 128256}
CTX = [{"input_tokens": 1024, "output_tokens": 1024}]


def _plan(model: dict[str, object], weights: str, hardware: str,
          chips: int = 1, **extra: object) -> PlanContextResult:
    spec = PlanSpec.model_validate({"model": model, "weights": weights, "contexts": CTX,
                                    **extra})
    result = plan_target(spec, PlanTarget(name="t", hardware=hardware, chips=chips,
                                          precision=weights),
                         load_catalog().chip(hardware))
    assert result.origin == "planned"
    return result.contexts[0]


@pytest.mark.parametrize(("hardware", "batch", "decode_tps", "intensity", "ridge"), [
    ("h200", 113, 5191.4, 15.45, 206.04),
    ("trn3", 117, 5323.1, 15.52, 136.94),
])
def test_a_7b_bf16_model_fits_one_chip_and_decode_is_memory_bound(
        hardware: str, batch: int, decode_tps: float, intensity: float, ridge: float) -> None:
    c = _plan(LLAMA_7B, "bf16", hardware)
    assert c.fits and c.weights_gb == pytest.approx(13.48)
    assert c.kv_gb_per_sequence == pytest.approx(1.0737, rel=1e-4)
    assert c.max_batch == batch and c.batch == batch
    assert c.decode_tps_chip == pytest.approx(decode_tps, rel=1e-4)
    assert c.decode_bound == "memory"
    assert c.decode_intensity == pytest.approx(intensity, rel=1e-3)
    assert c.ridge == pytest.approx(ridge, rel=1e-4)
    assert c.prefill_bound == "compute"


@pytest.mark.parametrize("hardware", ["h200", "trn3"])
def test_a_70b_bf16_model_does_not_fit_one_chip(hardware: str) -> None:
    c = _plan(LLAMA_70B, "bf16", hardware)
    assert c.weights_gb == pytest.approx(141.2)
    assert not c.fits
    assert c.max_batch is None and c.decode_tps_chip is None


@pytest.mark.parametrize(("hardware", "batch", "decode_tps", "intensity"), [
    # H200 at 143,771 MiB (150.75e9 bytes): batch 96; read as 141e9 bytes it was 83.
    ("h200", 96, 3874.93, 117.24),
    ("trn3", 101, 4075.4, 120.79),
])
def test_a_70b_fp8_model_fits_one_chip_with_its_batch_and_decode_bound(
        hardware: str, batch: int, decode_tps: float, intensity: float) -> None:
    c = _plan(LLAMA_70B, "fp8", hardware)
    assert c.fits and c.weights_gb == pytest.approx(70.6)
    assert c.max_batch == batch
    assert c.decode_tps_chip == pytest.approx(decode_tps, rel=1e-4)
    assert c.decode_bound == "memory"
    assert c.decode_intensity == pytest.approx(intensity, rel=1e-3)


def test_tensor_parallel_communication_per_step_on_eight_h200() -> None:
    c = _plan(LLAMA_70B, "bf16", "h200", chips=8)
    assert c.fits and c.batch == 256  # max_batch 1,405 capped by plan.max_batch
    eight = next(p for p in c.scaling if p.chips == 8)
    assert eight.step_ms == pytest.approx(7.0325, rel=1e-4)
    assert eight.communication_share == pytest.approx(0.3711, rel=1e-3)
    assert c.communication_ms_per_token == pytest.approx(2.6098 / 256, rel=1e-3)
    assert [p.fits for p in c.scaling][:2] == [False, True]


def test_where_adding_trainium3_chips_stops_paying() -> None:
    c = _plan(LLAMA_70B, "fp8", "trn3")
    sizes = [p.chips for p in c.scaling]
    assert sizes == [1, 2, 4, 8, 16, 32, 64, 128, 144]  # up to the 144-chip UltraServer
    assert c.best_chips == 2
    assert {p.chips: p.bound for p in c.scaling}[128] == "communication"
    assert "does not produce a proportional improvement" in c.scaling_note


def test_a_declared_allreduce_latency_makes_communication_bind_sooner() -> None:
    plain = _plan(LLAMA_70B, "fp8", "trn3")
    slow = _plan(LLAMA_70B, "fp8", "trn3", allreduce_latency_us=10.0)
    first = {r: next(p.chips for p in c.scaling if p.bound == "communication")
             for r, c in (("plain", plain), ("slow", slow))}
    assert first["slow"] < first["plain"]


def test_cost_at_the_bound_uses_the_price_and_the_accuracy() -> None:
    spec = PlanSpec.model_validate({"model": LLAMA_7B, "weights": "bf16", "contexts": CTX,
                                    "accuracy": 0.5})
    from acceval.results.section import SourcedValue

    rate = SourcedValue(value=3.6, origin="assumption", source="test")
    r = plan_target(spec, PlanTarget(name="t", hardware="h200", chips=1, precision="bf16",
                                     usd_per_chip_hour=rate), load_catalog().chip("h200"))
    c = r.contexts[0]
    assert c.cost_per_attempt_usd is not None and c.cost_per_correct_usd is not None
    assert c.cost_per_correct_usd == pytest.approx(2 * c.cost_per_attempt_usd)
    assert c.accuracy_origin == "assumption"
    assert r.inputs["usd_per_chip_hour"].value == 3.6


def test_a_catalog_entry_without_figures_plans_nothing_and_says_why() -> None:
    spec = PlanSpec.model_validate({"model": "builtin:tiny", "contexts": CTX})
    r = plan_target(spec, PlanTarget(name="t", hardware="cpu", chips=1, precision="fp32"),
                    load_catalog().chip("cpu"))
    assert r.contexts == []
    assert any("measure_host" in n for n in r.notes)
    assert r.parameters == 1054336


MIXTRAL = {"name": "8x7b", "parameters": 46.7e9, "layers": 32, "hidden": 4096, "heads": 32,
           "kv_heads": 8, "head_dim": 128, "vocab": 32000, "experts": 8, "active_experts": 2,
           "active_parameters": 12.9e9}


def test_expert_parallelism_replicates_shared_weights_and_sends_tokens_to_experts() -> None:
    c = _plan(MIXTRAL, "fp8", "h200", chips=8, parallelism="expert")
    assert c.weights_gb == pytest.approx(58.1333, rel=1e-4)  # 8 x 1.633 shared + 45.07
    eight = next(p for p in c.scaling if p.chips == 8)
    assert eight.step_ms == pytest.approx(2.85607, rel=1e-4)
    assert eight.communication_share == pytest.approx(0.02284, rel=1e-3)
    assert c.decode_tps_chip == pytest.approx(11204.2, rel=1e-4)
    assert [p.chips for p in c.scaling] == [1, 2, 4, 8]  # at most one chip per expert
    tensor = _plan(MIXTRAL, "fp8", "h200", chips=8)
    assert tensor.weights_gb == pytest.approx(46.7)


def test_expert_parallelism_on_a_dense_model_is_a_study_error() -> None:
    from acceval.errors import StudyError

    with pytest.raises(StudyError, match="expert parallelism needs experts"):
        _plan(LLAMA_7B, "bf16", "h200", parallelism="expert")
