"""Portability in three levels (source, artifact, performance), the migration ledger and the
exit test. Evidence-based: every verdict and ledger line names the file, command or
measurement it rests on, or says it was declared. See docs/portability.md.
"""

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
