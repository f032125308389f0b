"""`acceval demo --quick`: the built-in study end to end, as CI runs it."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_cli


def test_demo_quick_runs_end_to_end(tmp_path: Path) -> None:
    res = run_cli("demo", "--quick", "--out", str(tmp_path / "runs"), "--no-progress",
                  cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    (run_dir,) = list((tmp_path / "runs").glob("*-quick-*"))
    assert "report: " in res.stdout and str(run_dir / "report.html") in res.stdout
    result = json.loads((run_dir / "result.json").read_text())
    assert len(result["targets"]) >= 2
    for t in result["targets"]:
        assert t["failure"] is None, t["failure"]
        assert t["accuracy"]["n"] > 0
        assert t["economics"]["points"][0]["bill"]["cost_per_correct_usd"] is not None
    assert result["schema_version"] == 2
    assert result["verdict"]["headline"] and result["verdict"]["status"] in ("winner", "tie")
    assert result["verdict"]["headline"] in res.stdout  # the console says the same
    html = (run_dir / "report.html").read_text()
    assert "<script src=" not in html  # self-contained
    # The claim ledger (the launch articles' claims, missing axes flagged) and the plan
    # against measured for the demo's own targets.
    claims = result["claims"]
    ids = {c["id"]: c for c in claims["claims"]}
    assert ids["trn3-us-performance"]["missing_axes"][:2] == ["model", "precision"]
    assert any(set(c["claims"]) == {"trn4-fp4-double", "trn4-fp4-6x"}
               for c in claims["conflicts"])
    compared, refused = claims["checks"]
    assert compared["status"] == "compared" and compared["points"]
    assert refused["status"] == "refused" and "cpu-2core" in refused["differs"][0]
    assert result["log"]["host"]["peak_fp32_tflops"] > 0
    for t in result["targets"]:
        plan = t["plan"]
        assert plan["inputs"]["peak_flops"]["origin"] == "measured"
        assert plan["measured"] and all(p["efficiency"] > 0 for p in plan["measured"])
    assert '<section id="claims">' in html and '<section id="plan">' in html
    assert "claim: claimed up to 2×" in res.stdout
    # Training: the built-in workload on two configurations, MFU against this host's own
    # measured fp32 peak (the catalog has no CPU peak), labelled as measured.
    training = result["training"]
    assert training is not None and len(training["platforms"]) == 2
    for p in training["platforms"]:
        assert p["failure"] is None, p["failure"]
        mfu = p["mfu"]
        assert mfu["status"] == "assessed", mfu
        assert "measured" in mfu["peak_source"] and mfu["mfu"] > 0
        assert mfu["peak_tflops"] == result["log"]["host"]["peak_fp32_tflops"]
        # The host peak is measured on this (possibly loaded) machine: an MFU above 100 %
        # can happen, and then it is flagged, never shown as if true.
        assert mfu["plausible"] == (mfu["mfu"] <= 1 and (mfu["hfu"] or 0) <= 1)
        assert bool(mfu["flag"]) == (not mfu["plausible"])
        if not mfu["plausible"]:
            assert "implausible" in mfu["flag"] and "loaded machine" in mfu["flag"]
            assert mfu["flag"] in res.stdout
    # Per-rank splits: the DDP platform's two ranks, and the one that bounds the step.
    by = {p["name"]: p for p in training["platforms"]}
    ddp = by["cpu-ddp2"]["compute_comm"]
    assert sorted(r["rank"] for r in ddp["ranks"]) == [0, 1]
    assert ddp["slowest_rank"] in (0, 1)
    assert "per rank: slowest rank" in res.stdout
    assert '<section id="training">' in html and "slowest rank" in html


def test_demo_prints_its_study(tmp_path: Path) -> None:
    res = run_cli("demo", "--print-study", cwd=tmp_path)
    assert res.returncode == 0
    assert "targets:" in res.stdout
