"""Interchange with the peers' files: ``acceval import`` reads vLLM bench result JSON,
GuideLLM ``benchmarks.json`` and AIPerf ``profile_export.jsonl`` into a run folder;
``acceval export --format vllm`` writes a run as vLLM bench result JSON. Field mapping:
docs/metrics.md."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.interchange.folder import FORMATS, export_vllm, import_files

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "FORMATS": "acceval.interchange.folder", "export_vllm": "acceval.interchange.folder",
    "import_files": "acceval.interchange.folder"})

__all__ = ["FORMATS", "export_vllm", "import_files"]
