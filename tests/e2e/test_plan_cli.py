"""`acceval plan`, `acceval catalog`, and `validate` on unknown hardware ids, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import mock_target, run_cli, write_study

MODEL_7B = {"name": "7b", "parameters": 6.74e9, "layers": 32, "hidden": 4096, "heads": 32,
            "vocab": 32000}


def _study(hardware: str = "h200", **over: object) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "plan",
        "targets": [{**mock_target("gpu"), "platform": {"hardware": hardware,
                                                        "precision": "bf16"},
                     "price": {"usd_per_hour": 3.6}},
                    {**mock_target("trn"), "platform": {"hardware": "trn3",
                                                        "precision": "bf16"}}],
        "plan": {"model": MODEL_7B, "contexts": [{"input_tokens": 1024,
                                                   "output_tokens": 1024}]},
    }
    data.update(over)
    return data


def test_plan_prints_planned_bounds_per_target(tmp_path: Path) -> None:
    res = run_cli("plan", str(write_study(tmp_path / "s.yaml", _study())), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Planned upper bounds (roofline), not measurements")
    assert "gpu: 7b (6,740,000,000 parameters) on h200" in res.stdout
    assert "largest batch: 113" in res.stdout and "largest batch: 117" in res.stdout
    assert "planned decode tok/s per chip: 5,191 (memory-bound" in res.stdout
    assert "attempts, no accuracy yet" in res.stdout  # priced target, no run yet


def test_plan_json_and_a_study_without_a_plan(tmp_path: Path) -> None:
    res = run_cli("plan", str(write_study(tmp_path / "s.yaml", _study())), "--format",
                  "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    plans = json.loads(res.stdout)
    assert [p["target"] for p in plans] == ["gpu", "trn"]
    assert plans[0]["origin"] == "planned" and plans[0]["contexts"][0]["max_batch"] == 113
    study = _study()
    del study["plan"]
    res = run_cli("plan", str(write_study(tmp_path / "n.yaml", study)), cwd=tmp_path)
    assert res.returncode == 2 and "no `plan:` section" in res.stderr


def test_catalog_lists_and_shows_one_entry(tmp_path: Path) -> None:
    res = run_cli("catalog", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "trn3" in res.stdout and "144 chips" in res.stdout and "mi355x" in res.stdout
    # Memory on one basis: H200's 143771 MiB and Trainium3's 144 GiB as GB, beside H100's GB.
    rows = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip()}
    assert " 151 GB " in rows["h200"] and " 155 GB " in rows["trn3"]
    assert " 80 GB " in rows["h100"] and "MiB" not in res.stdout and "GiB" not in res.stdout
    one = run_cli("catalog", "h200", cwd=tmp_path)
    assert one.returncode == 0
    assert "memory: 143771 MiB" in one.stdout   # the entry itself: as published
    assert "scale_up_bandwidth: 450 GB/s" in one.stdout and "chips_per_node: 8" in one.stdout
    assert "price aws-p5e-48xlarge-cb" in one.stdout
    bad = run_cli("catalog", "h201", cwd=tmp_path)
    assert bad.returncode == 2 and "did you mean 'h200'" in bad.stderr


def test_validate_rejects_an_unknown_hardware_id(tmp_path: Path) -> None:
    res = run_cli("validate", str(write_study(tmp_path / "s.yaml", _study("h2OO"))),
                  cwd=tmp_path)
    assert res.returncode == 2
    assert "targets[0].platform.hardware" in res.stderr
    assert "no hardware 'h2OO' in the catalog" in res.stderr
    assert "Traceback" not in res.stderr


def test_validate_rejects_a_claim_check_on_an_unknown_claim(tmp_path: Path) -> None:
    study = _study(claims={"check": [{"claim": "nope", "subject": "gpu",
                                      "comparator": "trn"}]})
    res = run_cli("validate", str(write_study(tmp_path / "s.yaml", study)), cwd=tmp_path)
    assert res.returncode == 2
    assert "claims.check[0].claim" in res.stderr and "no claim 'nope'" in res.stderr


def test_validate_rejects_a_plan_it_could_not_make_after_the_run(tmp_path: Path) -> None:
    study = _study()
    study["targets"][0]["platform"]["precision"] = "w4a16"  # type: ignore[index]
    res = run_cli("validate", str(write_study(tmp_path / "s.yaml", study)), cwd=tmp_path)
    assert res.returncode == 2
    assert "plan.targets.gpu.weights" in res.stderr and "'w4a16'" in res.stderr
    study["plan"]["weights"] = "bf16"  # type: ignore[index]
    res = run_cli("validate", str(write_study(tmp_path / "s.yaml", study)), cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_plan_70b_prints_the_bound_the_band_and_its_sources(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "plan-70b.yaml"
    res = run_cli("plan", str(example), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "planned serving bound tok/s per chip (prefill + decode at the batch): 4,101" in out
    assert "published systems reach 18.8%–52.4% of this bound" in out
    assert "planned range 771–2,150 tok/s per chip (planned)" in out
    assert "no published cell is close" in out           # 8,192 / 1,024: none within 4x
    assert "no published cell for trn3" in out
    assert "Published measurements the calibration bands come from" in out
    assert out.count("NVIDIA/TensorRT-LLM:docs/source/blogs/H200launch.md") == 3
