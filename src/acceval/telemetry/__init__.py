"""What a server says about itself while it is measured: its Prometheus ``/metrics`` (vLLM,
SGLang, TGI, llama.cpp, vLLM on Neuron) and the accelerator exporters (DCGM for NVIDIA GPUs,
neuron-monitor's for Trainium), mapped to one vocabulary. docs/telemetry.md.
"""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.telemetry.names import CANONICAL, Canonical, source_of
    from acceval.telemetry.parse import Reading, Scrape, parse_metrics

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "CANONICAL": "acceval.telemetry.names", "Canonical": "acceval.telemetry.names",
    "source_of": "acceval.telemetry.names", "Reading": "acceval.telemetry.parse",
    "Scrape": "acceval.telemetry.parse", "parse_metrics": "acceval.telemetry.parse"})

__all__ = ["CANONICAL", "Canonical", "Reading", "Scrape", "parse_metrics", "source_of"]
