"""Portability of every target of a run: three levels, the ledger and the exit test.

Call after a run (records and economics in place)::

    from acceval.portability import apply_portability
    apply_portability(study, result, base_dir=study_dir, records=read_records(run_dir))

which fills ``TargetResult.portability`` (``{"level", "levels", "ledger", ...}``) and
``TargetResult.exit`` (``{"readiness", ...}``) and returns the same dicts per target.
Artifact checks load models, so they run only with ``run_artifact_checks=True`` or when
their results are passed in ``artifact_checks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from acceval.economics.provenance import Sourced
from acceval.economics.spec import StudyCosts
from acceval.errors import UsageError
from acceval.metrics.spec import SLO, Quality
from acceval.portability.artifact import ArtifactCheck, check_artifact
from acceval.portability.exit import exit_test
from acceval.portability.ledger import build_ledger
from acceval.portability.levels import (
    LevelResult,
    artifact_level,
    performance_level,
    source_level,
)
from acceval.portability.spec import (
    Contract,
    ExitSpec,
    StudyPortability,
    TargetPortability,
)
from acceval.results.result import RunResult, TargetResult


class PortabilityTarget(Protocol):
    """What portability reads from a study target."""

    @property
    def name(self) -> str: ...
    @property
    def portability(self) -> TargetPortability | None: ...
    @property
    def exit(self) -> ExitSpec | None: ...


class PortabilityStudy(Protocol):
    """What portability reads from a study (``acceval.study.Study`` is one)."""

    @property
    def portability(self) -> StudyPortability | None: ...
    @property
    def slo(self) -> SLO: ...
    @property
    def quality(self) -> Quality: ...
    @property
    def costs(self) -> StudyCosts: ...
    @property
    def targets(self) -> Sequence[PortabilityTarget]: ...


def study_contract(study: PortabilityStudy) -> Contract:
    """The declared contract, else the study's SLO bounds at its percentile."""
    if study.portability is not None and study.portability.contract is not None:
        return study.portability.contract
    slo = study.slo
    return Contract(percentile=slo.percentile, ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms,
                    e2e_ms=slo.e2e_ms)


def reference_name(study: PortabilityStudy) -> str | None:
    if study.portability is not None and study.portability.reference:
        return study.portability.reference
    return study.quality.relative_to


def _fleet_rate(t: TargetResult) -> Sourced | None:
    """The chip rate × chips of the measured bill, keeping the bill's provenance."""
    bill = (t.economics or {}).get("bill") or (t.economics or {}).get("best") or {}
    rate = (bill.get("inputs") or {}).get("usd_per_chip_hour") or {}
    value = rate.get("value")
    if not isinstance(value, int | float):
        return None
    chips = int(t.platform.get("chips") or 1)
    return Sourced(float(value) * chips, rate.get("origin", "assumption"),
                   f"bill: usd_per_chip_hour × {chips} chips ({rate.get('source')})",
                   rate.get("date"))


def summary_label(levels: Mapping[str, LevelResult]) -> str:
    """One line for a table cell: ``source pass · artifact not assessed · performance fail``."""
    return " · ".join(f"{name} {lv.verdict}" for name, lv in levels.items())


def assess_target(study: PortabilityStudy, result: RunResult, t: TargetResult, *, base_dir: Path,
                  records: pa.Table | None = None, artifact_check: ArtifactCheck | None = None,
                  run_artifact_check: bool = False) -> tuple[dict[str, Any], dict[str, Any] | None]:
    spec = next(s for s in study.targets if s.name == t.name)
    port = spec.portability
    ref = reference_name(study)
    ledger = build_ledger(t.name, port, reference=ref, base_dir=base_dir,
                          startup_s=t.local_server.startup_s if t.local_server else None,
                          records=records)
    problems = list(ledger.problems)
    art_spec = port.artifact if port is not None else None
    if artifact_check is None and run_artifact_check and art_spec is not None \
            and art_spec.path is not None:
        path = art_spec.path if art_spec.path.startswith("builtin:") \
            else str(base_dir / art_spec.path)
        try:
            artifact_check = check_artifact(path, runtime_a=art_spec.runtime_a,
                                            runtime_b=art_spec.runtime_b,
                                            n_prompts=art_spec.prompts,
                                            min_agreement=art_spec.min_agreement)
        except UsageError as exc:
            problems.append(f"artifact check: {exc}")
    reference = next((r for r in result.targets if r.name == ref), None)
    levels = {
        "source": source_level(t, ledger),
        "artifact": artifact_level(art_spec, artifact_check),
        "performance": performance_level(t, study_contract(study), reference),
    }
    portability = {
        "level": summary_label(levels),
        "reference": ref,
        "levels": {k: v.to_dict() for k, v in levels.items()},
        "ledger": ledger.to_dict(),
        "problems": problems,
    }
    exit_ = None
    if spec.exit is not None:
        exit_ = exit_test(spec.exit, costs=study.costs, ledger=ledger,
                          fleet_usd_per_hour=_fleet_rate(t),
                          artifact_verdict=levels["artifact"].verdict).to_dict()
    return portability, exit_


def assess_portability(study: PortabilityStudy, result: RunResult, *, base_dir: Path,
                       records: pa.Table | None = None,
                       artifact_checks: Mapping[str, ArtifactCheck] | None = None,
                       run_artifact_checks: bool = False) -> dict[str, dict[str, Any]]:
    """Per target: ``{"portability": {...}, "exit": {...} | None}`` (pure apart from reading
    the files the study names, and loading models when ``run_artifact_checks``)."""
    out: dict[str, dict[str, Any]] = {}
    checks = artifact_checks or {}
    for t in result.targets:
        port, exit_ = assess_target(study, result, t, base_dir=base_dir, records=records,
                                    artifact_check=checks.get(t.name),
                                    run_artifact_check=run_artifact_checks)
        out[t.name] = {"portability": port, "exit": exit_}
    return out


def apply_portability(study: PortabilityStudy, result: RunResult, *, base_dir: Path,
                      records: pa.Table | None = None,
                      artifact_checks: Mapping[str, ArtifactCheck] | None = None,
                      run_artifact_checks: bool = False) -> dict[str, dict[str, Any]]:
    """:func:`assess_portability`, stored into ``TargetResult.portability``/``.exit``."""
    out = assess_portability(study, result, base_dir=base_dir, records=records,
                             artifact_checks=artifact_checks,
                             run_artifact_checks=run_artifact_checks)
    for t in result.targets:
        t.portability = out[t.name]["portability"]
        t.exit = out[t.name]["exit"]
    return out
