"""What a server says about itself while it is measured: its Prometheus ``/metrics`` (vLLM,
SGLang, TGI, llama.cpp, vLLM on Neuron) and the accelerator exporters (DCGM for NVIDIA GPUs,
neuron-monitor's for Trainium), mapped to one vocabulary. docs/telemetry.md.
"""

from acceval.telemetry.names import CANONICAL, Canonical, source_of
from acceval.telemetry.parse import Reading, Scrape, parse_metrics

__all__ = ["CANONICAL", "Canonical", "Reading", "Scrape", "parse_metrics", "source_of"]
