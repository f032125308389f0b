"""Portability in three levels (source, artifact, performance), the migration ledger and the
exit test. Evidence-based: every verdict and ledger line names the file, command or
measurement it rests on, or says it was declared. See docs/portability.md.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.portability.artifact import (
        ArtifactCheck,
        artifact_manifest,
        check_artifact,
        compare_manifest,
        write_manifest,
    )
    from acceval.portability.assess import (
        assess_target,
        study_contract,
    )
    from acceval.portability.evidence import Evidence, Verdict
    from acceval.portability.exit import (
        ExitCostItemResult,
        ExitCostResult,
        ExitResult,
        assess_managed_service,
        exit_cost,
        exit_test,
    )
    from acceval.portability.fallback import (
        FallbackOp,
        FallbackReport,
        parse_fallback,
        parse_neuron_log,
        parse_neuron_report,
        parse_ort_log,
        parse_torch_trace,
    )
    from acceval.portability.ledger import (
        CodeChange,
        LedgerEntry,
        MigrationLedger,
        Warmup,
        build_ledger,
        dir_code_change,
        git_code_change,
        warmup_from_records,
    )
    from acceval.portability.levels import (
        ArtifactLevel,
        ContractCheck,
        LevelResult,
        PerformanceDetails,
        PerformanceLevel,
        SourceDetails,
        SourceLevel,
        artifact_level,
        performance_level,
        source_level,
    )
    from acceval.portability.spec import (
        Answer,
        ArtifactSpec,
        Contract,
        ExitSpec,
        ManagedService,
        StudyPortability,
        TargetPortability,
    )

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "ArtifactCheck": "acceval.portability.artifact",
    "artifact_manifest": "acceval.portability.artifact",
    "check_artifact": "acceval.portability.artifact",
    "compare_manifest": "acceval.portability.artifact",
    "write_manifest": "acceval.portability.artifact",
    "assess_target": "acceval.portability.assess",
    "study_contract": "acceval.portability.assess", "Evidence": "acceval.portability.evidence",
    "Verdict": "acceval.portability.evidence", "ExitCostItemResult": "acceval.portability.exit",
    "ExitCostResult": "acceval.portability.exit", "ExitResult": "acceval.portability.exit",
    "assess_managed_service": "acceval.portability.exit",
    "exit_cost": "acceval.portability.exit", "exit_test": "acceval.portability.exit",
    "FallbackOp": "acceval.portability.fallback",
    "FallbackReport": "acceval.portability.fallback",
    "parse_fallback": "acceval.portability.fallback",
    "parse_neuron_log": "acceval.portability.fallback",
    "parse_neuron_report": "acceval.portability.fallback",
    "parse_ort_log": "acceval.portability.fallback",
    "parse_torch_trace": "acceval.portability.fallback",
    "CodeChange": "acceval.portability.ledger", "LedgerEntry": "acceval.portability.ledger",
    "MigrationLedger": "acceval.portability.ledger", "Warmup": "acceval.portability.ledger",
    "build_ledger": "acceval.portability.ledger",
    "dir_code_change": "acceval.portability.ledger",
    "git_code_change": "acceval.portability.ledger",
    "warmup_from_records": "acceval.portability.ledger",
    "ArtifactLevel": "acceval.portability.levels",
    "ContractCheck": "acceval.portability.levels", "LevelResult": "acceval.portability.levels",
    "PerformanceDetails": "acceval.portability.levels",
    "PerformanceLevel": "acceval.portability.levels",
    "SourceDetails": "acceval.portability.levels", "SourceLevel": "acceval.portability.levels",
    "artifact_level": "acceval.portability.levels",
    "performance_level": "acceval.portability.levels",
    "source_level": "acceval.portability.levels", "Answer": "acceval.portability.spec",
    "ArtifactSpec": "acceval.portability.spec", "Contract": "acceval.portability.spec",
    "ExitSpec": "acceval.portability.spec", "ManagedService": "acceval.portability.spec",
    "StudyPortability": "acceval.portability.spec",
    "TargetPortability": "acceval.portability.spec"})

__all__ = [
    "Answer", "ArtifactCheck", "ArtifactLevel", "ArtifactSpec", "CodeChange", "Contract",
    "ContractCheck", "Evidence",
    "ExitCostItemResult", "ExitCostResult", "ExitResult", "ExitSpec", "FallbackOp",
    "FallbackReport",
    "LedgerEntry", "LevelResult", "ManagedService", "MigrationLedger", "PerformanceDetails",
    "PerformanceLevel", "SourceDetails", "SourceLevel", "StudyPortability",
    "TargetPortability", "Verdict", "Warmup", "artifact_level",
    "artifact_manifest", "assess_managed_service", "assess_target",
    "build_ledger", "check_artifact", "compare_manifest", "dir_code_change", "exit_cost",
    "exit_test", "git_code_change", "parse_fallback", "parse_neuron_log",
    "parse_neuron_report", "parse_ort_log", "parse_torch_trace", "performance_level",
    "source_level", "study_contract", "warmup_from_records", "write_manifest",
]
