"""Portability of every target of a run: three levels, the ledger and the exit test.

The analysis calls :func:`assess_target` for each target once the bills and the operating
points are known; it returns the ``PortabilityResult`` and the ``ExitResult`` (or None).
Artifact checks load models, so they run only with ``run_artifact_check=True`` or when their
result is passed in ``artifact_check``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from acceval.economics.provenance import SourcedValue
from acceval.economics.spec import StudyCosts, TargetCosts
from acceval.errors import UsageError
from acceval.metrics.spec import SLO, Quality
from acceval.portability.artifact import ArtifactCheck, check_artifact
from acceval.portability.exit import ExitResult, exit_test
from acceval.portability.ledger import LedgerResult, build_ledger, compile_time_for
from acceval.portability.levels import (
    ArtifactLevel,
    LevelResult,
    PerformanceLevel,
    PortableTarget,
    SourceLevel,
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
from acceval.results.section import Section


class PortabilityLevels(Section):
    source: SourceLevel
    artifact: ArtifactLevel
    performance: PerformanceLevel

    def items(self) -> list[tuple[str, LevelResult]]:
        return [("source", self.source), ("artifact", self.artifact),
                ("performance", self.performance)]


class PortabilityResult(Section):
    level: str  # one line: "source pass · artifact not assessed · performance fail"
    reference: str | None
    levels: PortabilityLevels
    ledger: LedgerResult
    problems: list[str]




class PortabilityTarget(Protocol):
    """What portability reads from a study target."""

    @property
    def name(self) -> str: ...
    @property
    def portability(self) -> TargetPortability | None: ...
    @property
    def exit(self) -> ExitSpec | None: ...
    @property
    def costs(self) -> TargetCosts: ...


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


def _fleet_rate(t: PortableTarget, label: str | None) -> SourcedValue | None:
    """The chip rate × chips of the operating point's bill, keeping the bill's provenance."""
    pc = t.economics.point(label) if t.economics is not None and label is not None else None
    if pc is None and t.economics is not None and t.economics.points:
        pc = t.economics.points[0]
    rate = pc.bill.inputs.get("usd_per_chip_hour") if pc is not None else None
    if rate is None or rate.value is None:
        return None
    chips = t.chips
    return SourcedValue(value=float(rate.value) * chips, origin=rate.origin,
                        source=f"bill: usd_per_chip_hour × {chips} chips ({rate.source})",
                        date=rate.date)


def summary_label(levels: Mapping[str, LevelResult]) -> str:
    """One line for a table cell: ``source pass · artifact not assessed · performance fail``."""
    return " · ".join(f"{name} {lv.verdict}" for name, lv in levels.items())


def assess_target(study: PortabilityStudy, targets: Sequence[PortableTarget], t: PortableTarget, *,
                  base_dir: Path, operating: Mapping[str, str | None] | None = None,
                  records: pa.Table | None = None, artifact_check: ArtifactCheck | None = None,
                  run_artifact_check: bool = False
                  ) -> tuple[PortabilityResult, ExitResult | None]:
    """The three levels, the ledger and the exit test of ``t``; ``operating`` names each
    target's operating point (the verdict's)."""
    spec = next(s for s in study.targets if s.name == t.name)
    op = operating or {}
    port = spec.portability
    ref = reference_name(study)
    startup_s = t.local_server.startup_s if t.local_server else None
    ledger = build_ledger(t.name, port, reference=ref, base_dir=base_dir, startup_s=startup_s,
                          records=records, compile_time=compile_time_for(
                              spec, startup_s=startup_s, base_dir=base_dir))
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
    reference = next((r for r in targets if r.name == ref), None)
    levels = PortabilityLevels(
        source=source_level(t, ledger),
        artifact=artifact_level(art_spec, artifact_check),
        performance=performance_level(t, study_contract(study), reference,
                                      operating_point=op.get(t.name),
                                      reference_point=op.get(ref or "")))
    portability = PortabilityResult(
        level=summary_label(dict(levels.items())), reference=ref, levels=levels,
        ledger=ledger.result(), problems=problems)
    exit_ = None
    if spec.exit is not None:
        exit_ = exit_test(spec.exit, costs=study.costs, ledger=ledger,
                          fleet_usd_per_hour=_fleet_rate(t, op.get(t.name)),
                          artifact_verdict=levels.artifact.verdict)
    return portability, exit_
