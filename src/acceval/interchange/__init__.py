"""Interchange with the peers' files: ``acceval import`` reads vLLM bench result JSON,
GuideLLM ``benchmarks.json`` and AIPerf ``profile_export.jsonl`` into a run folder;
``acceval export --format vllm`` writes a run as vLLM bench result JSON. Field mapping:
docs/metrics.md."""

from acceval.interchange.folder import FORMATS, export_vllm, import_files

__all__ = ["FORMATS", "export_vllm", "import_files"]
